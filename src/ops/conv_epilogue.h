// What a fused convolution (KilnFusedConv2D, KilnFusedDepthwiseConv2dNative) applies to each
// block of its output rows right after computing it, while the block is in cache: the
// per-channel steps of the ops the optimizer folded into it (optimize/fuse_contraction.cc),
// in their order. Keras's BatchNormalization at inference is such a chain (Conv2D ->
// [BiasAdd ->] Mul(scale) -> AddV2(shift) -> Relu), so a block costs one pass over memory
// instead of four. Each step rounds as the op it replaces does (conv_epilogue.cc is compiled
// without multiply-add contraction), so float32 and float64 results are bit for bit the
// unfused ops'. A 16-bit float convolution runs widened (ops/widen.h): its fused steps
// compute in float32 and round once, at the end, as TensorFlow's fused kernels do.
#pragma once
#include <array>
#include <cstdint>
#include <string>

namespace kiln::ops::conv {

// BiasAdd, AddV2 and Mul add or multiply a per-channel vector (either operand order: IEEE
// addition and multiplication commute); Sub subtracts one from the output; Add adds a tensor
// of the output's shape (a residual connection's AddV2, as ResNet's, MobileNetV2's and
// EfficientNet's blocks end: named as TensorFlow's _FusedConv2D names it); Relu, Relu6 and
// Swish end the chain. Swish is x * sigmoid(beta * x) with a scalar beta, three ops in the
// graph (Keras's swish, tf.nn.silu: Mul, Sigmoid, Mul), each rounded as the op does; the
// sigmoid is kernels::vsigmoid, the Sigmoid op's own, whose value does not depend on where
// an element sits in the array, so a row at a time gives the whole tensor's bits.
enum class EpilogueOp : uint8_t { kBiasAdd, kMul, kAddV2, kSub, kAdd, kRelu, kRelu6, kSwish };
constexpr int kMaxEpilogueSteps = 6;

struct EpilogueStep {
  EpilogueOp op = EpilogueOp::kBiasAdd;
  // The vector's [C] values; for Add, the [rows, C] tensor's; for Swish, beta (one value);
  // null for Relu, Relu6.
  const void* channel_values = nullptr;
  // Add: the tensor's rows when it has one image and the output several (it broadcasts over
  // the batch: row r reads its row r % tensor_rows); 0 when it has the output's shape.
  int64_t tensor_rows = 0;
  // The fused kernel's input the values came from (-1: none), for a kernel that needs the
  // tensor itself (BatchNormalization folded into oneDNN's filter: conv.cc).
  int input = -1;
};
struct Epilogue {
  std::array<EpilogueStep, kMaxEpilogueSteps> steps{};
  int count = 0;
};

const char* epilogue_op_name(EpilogueOp op);
bool takes_input(EpilogueOp op);         // an input each: a vector, Add's tensor, Swish's beta
bool takes_output_sized(EpilogueOp op);  // Add: its input is the output's shape
bool takes_scalar(EpilogueOp op);        // Swish: its input is one value
bool ends_chain(EpilogueOp op);          // the activations: Relu, Relu6, Swish
// The op named `name` ("BiasAdd", "Mul", "AddV2", "Sub", "Add", "Relu", "Relu6", "Swish");
// false for others.
bool epilogue_op_named(const std::string& name, EpilogueOp& op);

// Parses the fused ops' attr ("BiasAdd,Relu", "Mul,AddV2,Relu6"): known names, at most
// kMaxEpilogueSteps, an activation only last. Returns "" or what is wrong.
std::string parse_epilogue(const std::string& text, Epilogue& out);
int num_inputs(const Epilogue& e);

// Applies `e` to `rows` rows of `channels` values (T: float or double): `y` is the output's
// row `first_row`, where an Add step's tensor is read.
template <class T>
void apply_epilogue(T* y, int64_t first_row, int64_t rows, int64_t channels, const Epilogue& e);

}  // namespace kiln::ops::conv
