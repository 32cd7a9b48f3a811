// The names of every op, one line each; each family file defines `const OpDef& op::Name()`.
// (Function-local statics: usable from any static initializer, resolved once per call site.)
#pragma once
#include "ops/op_def.h"

// One line per family file (clang-format would reflow it):
// clang-format off
#define KILN_OPS(X) \
  /* binary.cc */ X(AddV2) X(Sub) X(Mul) X(RealDiv) X(FloorDiv) X(FloorMod) X(Pow) X(Maximum) X(Minimum)    \
    X(SquaredDifference) X(Greater) X(GreaterEqual) X(Less) X(LessEqual) X(Equal) X(NotEqual) X(LogicalAnd) \
    X(LogicalOr) X(SelectV2) X(ReluGrad) X(Atan2) X(BitwiseAnd) X(BitwiseOr) X(BitwiseXor) X(LeftShift)     \
    X(RightShift) X(Zeta) X(Polygamma)                                                           \
  /* unary.cc */ X(Invert) X(Neg) X(Abs) X(Sign) X(Exp) X(Log) X(Sqrt) X(Rsqrt) X(Square) X(Tanh) X(Sigmoid) X(Relu)  \
    X(Relu6) X(Floor) X(Ceil) X(Round) X(LogicalNot) X(Cast) X(Identity) X(ZerosLike) X(OnesLike)           \
  /* unary_math.cc */ X(Sin) X(Cos) X(Tan) X(Asin) X(Acos) X(Atan) X(Sinh) X(Cosh) X(Asinh) X(Acosh) X(Atanh) \
    X(Log1p) X(Expm1) X(Erf) X(Erfc) X(Erfinv) X(Lgamma) X(Digamma) X(Rint) X(Softplus) X(Softsign) X(Elu)    \
    X(Selu) X(IsNan) X(IsInf) X(IsFinite) X(LeakyRelu)                                                       \
  /* identity_ops.cc */ X(StopGradient) X(PreventGradient) X(IdentityN)                                   \
  /* matmul.cc */ X(MatMul) X(BatchMatMulV2) X(BatchMatMulV3)                                                                \
  /* einsum.cc */ X(Einsum)                                                                                 \
  /* reduce.cc */ X(Sum) X(Mean) X(Max) X(Min) X(Prod) X(ArgMax) X(ArgMin) X(Softmax) X(LogSoftmax) X(KilnScaledSoftmax)         \
  /* scan.cc */ X(Cumsum) X(Cumprod)                                                                        \
  /* pad.cc */ X(Pad) X(PadV2) X(MirrorPad) X(MirrorPadGrad)                                                                 \
  /* split.cc */ X(Split) X(SplitV) X(Unpack)                                                               \
  /* space_batch.cc */ X(SpaceToBatchND) X(BatchToSpaceND)                                                \
  /* one_hot.cc */ X(OneHot) /* reverse.cc */ X(ReverseV2) /* roll.cc */ X(Roll)                \
  /* resize.cc */ X(ResizeBilinear) X(ResizeNearestNeighbor) X(ResizeBicubic) X(ResizeArea) X(ResizeBilinearGrad)          \
    X(ResizeBicubicGrad) X(ResizeNearestNeighborGrad)                                                                             \
  /* shape_ops.cc */ X(Reshape) X(ExpandDims) X(Squeeze) X(Shape) X(Size) X(Rank)                           \
  /* layout.cc */ X(Transpose) X(ConcatV2) X(Pack) X(Tile)                                                  \
  /* slicing.cc */ X(Slice) X(StridedSlice) X(GatherV2) X(StridedSliceGrad)           \
  /* broadcast_ops.cc */ X(BroadcastTo) X(BroadcastGradientArgs)                                            \
  /* nn.cc */ X(SparseSoftmaxCrossEntropyWithLogits) X(BiasAdd) X(FusedBatchNormV3)                        \
  /* conv.cc */ X(Conv2D) X(DepthwiseConv2dNative) X(MaxPool) X(AvgPool) X(KilnFusedConv2D) X(KilnFusedDepthwiseConv2dNative)                   \
  /* conv_backprop.cc */ X(Conv2DBackpropInput) X(Conv2DBackpropFilter) X(DepthwiseConv2dNativeBackpropInput)  \
    X(DepthwiseConv2dNativeBackpropFilter) X(MaxPoolGrad) X(AvgPoolGrad) X(MaxPoolGradGrad)                                   \
  /* conv3d.cc */ X(Conv3D) X(Conv3DBackpropInputV2) X(Conv3DBackpropFilterV2) X(MaxPool3D) X(AvgPool3D)    \
    X(MaxPool3DGrad) X(AvgPool3DGrad)                                          \
  /* creation.cc */ X(Const) X(Placeholder) X(Fill) X(Range) X(LinSpace)                                                \
  /* random.cc */ X(RandomUniform) X(RandomUniformInt) X(RandomStandardNormal) X(TruncatedNormal) X(RandomShuffle)                              \
  /* random_stateless.cc */ X(StatelessRandomUniform) X(StatelessRandomNormal) X(StatelessTruncatedNormal) \
    X(StatelessRandomUniformInt) X(StatelessRandomUniformFullInt) X(StatelessRandomUniformV2)               \
    X(StatelessRandomNormalV2) X(StatelessTruncatedNormalV2) X(StatelessRandomUniformIntV2)                  \
    X(StatelessRandomUniformFullIntV2) X(StatelessRandomGetKeyCounter) X(StatelessRandomGetKeyCounterAlg)   \
    X(StatelessRandomGetAlg) X(RngReadAndSkip)                                                              \
  /* bitcast.cc */ X(Bitcast)                                                                              \
  /* linalg.cc */ X(MatrixInverse) X(MatrixDeterminant) X(LogMatrixDeterminant) X(MatrixSolve) X(Cholesky) X(MatrixTriangularSolve)  \
    X(MatrixBandPart)                                                                                       \
  /* linalg_decompositions.cc */ X(Svd) X(Qr) X(SelfAdjointEigV2)                                          \
  /* fft.cc */ X(FFT) X(IFFT) X(RFFT) X(IRFFT)                                                               \
  /* file_io.cc */ X(ReadFile) X(WriteFile)                                                                  \
  /* host_function.cc */ X(KilnHostFunction) /* parse_example.cc */ X(KilnParseExample) /* decode_csv.cc */ X(KilnDecodeCSV) /* dataset_ops.cc */ X(KilnMakeIterator) X(KilnIteratorGetNext) X(KilnIteratorGetNextAsOptional) X(KilnOptionalHasValue) X(KilnOptionalGetValue) X(KilnOptionalFromValue) X(KilnOptionalNone)                                                               \
  /* print.cc */ X(KilnPrint) X(NoOp) X(KilnAssert)                                                         \
  /* control_flow.cc */ X(If) X(StatelessIf) X(While) X(StatelessWhile) X(Case) X(StatelessCase)            \
  /* variable_ops.cc */ X(ReadVariableOp) X(AssignVariableOp) X(AssignAddVariableOp) X(AssignSubVariableOp) \
    X(VarIsInitializedOp) /* resource_gather.cc */ X(ResourceGather)                                        \
  /* resource_scatter.cc */ X(ResourceScatterAdd) X(ResourceScatterSub) X(ResourceScatterMul)             \
    X(ResourceScatterDiv) X(ResourceScatterMin) X(ResourceScatterMax) X(ResourceScatterUpdate)                                        \
  /* training_ops.cc */ X(ResourceApplyGradientDescent) X(ResourceApplyKerasMomentum) X(ResourceApplyAdam)  \
      X(KilnMatMulUpdate)                                                                                      \
  /* collective.cc */ X(CollectiveReduceV2) X(CollectiveGatherV2) X(KilnBroadcast)                         \
  /* fused.cc */ X(KilnFusedElementwise)                                                                   \
  /* top_k.cc */ X(TopKV2) /* where.cc */ X(Where) /* unique.cc */ X(Unique)                  \
  /* segment.cc */ X(UnsortedSegmentSum) X(UnsortedSegmentMax) X(UnsortedSegmentMin) X(UnsortedSegmentProd) X(SegmentSum) X(SegmentMean) \
    X(SegmentMax) X(SegmentMin) X(SegmentProd)                                                                                  \
  /* scatter_nd.cc */ X(GatherNd) X(ScatterNd) X(TensorScatterUpdate) X(TensorScatterAdd) X(TensorScatterSub) \
    X(TensorScatterMax) X(TensorScatterMin)                                                                 \
  /* tensor_list.cc */ X(EmptyTensorList) X(TensorListReserve) X(TensorListFromTensor) X(TensorListGetItem)   \
    X(TensorListSetItem) X(TensorListPushBack) X(TensorListPopBack) X(TensorListStack) X(TensorListLength)  \
    X(TensorListElementShape)                                                                                \
  /* strings.cc */ X(StringJoin) X(StringLength) X(StringUpper) X(StringLower) X(StringStrip) X(Substr)      \
    X(StringToNumber) X(AsString) X(ReduceJoin) X(EncodeBase64) X(DecodeBase64)                             \
  /* complex.cc */ X(Real) X(Imag) X(Angle) X(ComplexAbs) X(Conj) X(Complex)                               \
  /* reverse_sequence.cc */ X(ReverseSequence) /* bincount.cc */ X(Bincount)                             \
  /* string_decode.cc */ X(DecodeRaw) X(DecodePaddedRaw) X(UnicodeDecode) /* image_adjust.cc */ X(AdjustContrastv2)                 \
  /* string_hash.cc */ X(StringToHashBucketFast)
// clang-format on

namespace kiln::ops::op {
#define KILN_DECLARE_OP(name) const OpDef& name();
KILN_OPS(KILN_DECLARE_OP)
#undef KILN_DECLARE_OP
}  // namespace kiln::ops::op
