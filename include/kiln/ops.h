// kiln: the public ops. Each builds its attrs and calls dispatch(): it runs now (eager) or
// adds a node to the graph being traced. TensorFlow semantics throughout.
#pragma once
#include <initializer_list>
#include <optional>
#include <type_traits>
#include <vector>

#include "kiln/tensor.h"

namespace kiln {

template <class N>
concept Number = std::is_arithmetic_v<N>;

namespace detail {
// A C++ number as a scalar of `like`'s dtype. A non-integer number for an integer tensor,
// a value out of the dtype's range, or a non-bool for a bool tensor is InvalidArgumentError.
Tensor number_as(const Tensor& like, double v, const char* op);
Tensor number_as(const Tensor& like, int64_t v, const char* op);
Tensor number_as(const Tensor& like, bool v, const char* op);
template <Number N>
Tensor number_as(const Tensor& like, N v, const char* op) {
  if constexpr (std::is_same_v<N, bool>)
    return number_as(like, static_cast<bool>(v), op);
  else if constexpr (std::is_integral_v<N>)
    return number_as(like, static_cast<int64_t>(v), op);
  else
    return number_as(like, static_cast<double>(v), op);
}
}  // namespace detail

// Binary elementwise ops with broadcasting: two tensors of one dtype, or a tensor and a number.
#define KILN_BINARY(fn, opname)                    \
  Tensor fn(const Tensor& a, const Tensor& b);     \
  template <Number N>                              \
  Tensor fn(const Tensor& a, N b) {                \
    return fn(a, detail::number_as(a, b, opname)); \
  }                                                \
  template <Number N>                              \
  Tensor fn(N a, const Tensor& b) {                \
    return fn(detail::number_as(b, a, opname), b); \
  }
KILN_BINARY(add, "AddV2")
KILN_BINARY(sub, "Sub")
KILN_BINARY(mul, "Mul")
KILN_BINARY(div, "RealDiv")  // truediv: integer operands give float64
KILN_BINARY(floordiv, "FloorDiv")
KILN_BINARY(floormod, "FloorMod")
KILN_BINARY(pow, "Pow")
KILN_BINARY(maximum, "Maximum")
KILN_BINARY(minimum, "Minimum")
KILN_BINARY(squared_difference, "SquaredDifference")
KILN_BINARY(atan2, "Atan2")  // atan2(y, x): the angle of (x, y), as tf.math.atan2
KILN_BINARY(equal, "Equal")
KILN_BINARY(not_equal, "NotEqual")
KILN_BINARY(greater, "Greater")
KILN_BINARY(greater_equal, "GreaterEqual")
KILN_BINARY(less, "Less")
KILN_BINARY(less_equal, "LessEqual")
KILN_BINARY(logical_and, "LogicalAnd")
KILN_BINARY(logical_or, "LogicalOr")
#undef KILN_BINARY

#define KILN_OPERATOR(sym, fn)                                                      \
  inline Tensor operator sym(const Tensor& a, const Tensor& b) { return fn(a, b); } \
  template <Number N>                                                               \
  Tensor operator sym(const Tensor& a, N b) {                                       \
    return fn(a, b);                                                                \
  }                                                                                 \
  template <Number N>                                                               \
  Tensor operator sym(N a, const Tensor& b) {                                       \
    return fn(a, b);                                                                \
  }
KILN_OPERATOR(+, add)
KILN_OPERATOR(-, sub)
KILN_OPERATOR(*, mul)
KILN_OPERATOR(/, div)
KILN_OPERATOR(%, floormod)
KILN_OPERATOR(<, less)
KILN_OPERATOR(<=, less_equal)
KILN_OPERATOR(>, greater)
KILN_OPERATOR(>=, greater_equal)
KILN_OPERATOR(==, equal)
KILN_OPERATOR(!=, not_equal)
#undef KILN_OPERATOR

// Unary elementwise ops.
Tensor neg(const Tensor& x);
inline Tensor operator-(const Tensor& x) { return neg(x); }
Tensor abs(const Tensor& x);
Tensor sign(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor square(const Tensor& x);
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor round(const Tensor& x);  // half to even, as TensorFlow
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor relu6(const Tensor& x);  // min(max(x, 0), 6)
Tensor logical_not(const Tensor& x);
Tensor cast(const Tensor& x, DType dtype);
Tensor identity(const Tensor& x);
Tensor zeros_like(const Tensor& x);
Tensor ones_like(const Tensor& x);

// where(cond, a, b): SelectV2, broadcasting all three.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);

// MatMul for rank 2, BatchMatMulV2 (broadcast batch dims) above.
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false);

// Reductions. nullopt: all axes; {}: no axes. Negative axes count from the end.
#define KILN_REDUCE(fn)                                                                                       \
  Tensor fn(const Tensor& x, std::optional<std::vector<int64_t>> axes = std::nullopt, bool keepdims = false); \
  inline Tensor fn(const Tensor& x, std::initializer_list<int64_t> axes, bool keepdims = false) {             \
    return fn(x, std::optional<std::vector<int64_t>>(std::vector<int64_t>(axes)), keepdims);                  \
  }
KILN_REDUCE(reduce_sum)
KILN_REDUCE(reduce_mean)
KILN_REDUCE(reduce_max)
KILN_REDUCE(reduce_min)
KILN_REDUCE(reduce_prod)
#undef KILN_REDUCE
Tensor argmax(const Tensor& x, int64_t axis = 0);  // int64 result; first index among ties
Tensor softmax(const Tensor& x, int64_t axis = -1);
// value + bias along value's last dimension (tf.nn.bias_add, data_format NHWC): value of rank
// >= 2, bias 1-D with as many elements as value's last dimension.
Tensor bias_add(const Tensor& value, const Tensor& bias);
// Batch normalization with known statistics, as a served model runs it (TensorFlow's
// FusedBatchNormV3, is_training=false): (x - mean) * rsqrt(variance + epsilon) * scale + offset
// per channel of a float32 NHWC x; scale, offset, mean and variance have one value per channel.
Tensor fused_batch_norm(const Tensor& x, const Tensor& scale, const Tensor& offset, const Tensor& mean,
                        const Tensor& variance, double epsilon = 0.001);
// 2-D convolution and pooling over NHWC images (tf.nn.conv2d, max_pool2d, avg_pool2d).
// strides, dilations and ksize have 4 entries ([1, h, w, 1]); padding is "SAME" or "VALID".
// Windows never count padding: a max ignores it, a mean divides by the pixels inside.
Tensor conv2d(const Tensor& input, const Tensor& filters, const std::vector<int64_t>& strides,
              const std::string& padding, const std::vector<int64_t>& dilations = {1, 1, 1, 1});
Tensor max_pool2d(const Tensor& input, const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                  const std::string& padding);
Tensor avg_pool2d(const Tensor& input, const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                  const std::string& padding);
Tensor log_softmax(const Tensor& x, int64_t axis = -1);
// Per-example loss -log(softmax(logits)[label]): logits [batch, classes] float, labels
// [batch] int32/int64 in [0, classes). Stable for large logits (TF's op of the same name).
Tensor sparse_softmax_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits);

// Shapes and layout.
Tensor reshape(const Tensor& x, std::vector<int64_t> shape);  // one -1 allowed
Tensor reshape(const Tensor& x, const Tensor& shape);
Tensor transpose(const Tensor& x);  // reverses the dims
Tensor transpose(const Tensor& x, std::vector<int64_t> perm);
Tensor concat(const std::vector<Tensor>& xs, int64_t axis);
Tensor stack(const std::vector<Tensor>& xs, int64_t axis = 0);
Tensor slice(const Tensor& x, std::vector<int64_t> begin, std::vector<int64_t> size);  // size -1: to the end
struct StridedSliceMasks {
  int64_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0, shrink_axis_mask = 0;
};
Tensor strided_slice(const Tensor& x, std::vector<int64_t> begin, std::vector<int64_t> end,
                     std::vector<int64_t> strides, StridedSliceMasks masks = {});
Tensor gather(const Tensor& x, const Tensor& indices, int64_t axis = 0);
Tensor gather(const Tensor& x, std::vector<int64_t> indices, int64_t axis = 0);
Tensor expand_dims(const Tensor& x, int64_t axis);
Tensor broadcast_to(const Tensor& x, std::vector<int64_t> shape);
// out[segment_ids[j], ...] += data[j, ...] for num_segments segments (TF's UnsortedSegmentSum).
Tensor unsorted_segment_sum(const Tensor& data, const Tensor& segment_ids, int64_t num_segments);
Tensor squeeze(const Tensor& x, std::vector<int64_t> axes = {});  // {}: every size-1 dim
Tensor tile(const Tensor& x, std::vector<int64_t> multiples);
Tensor shape_of(const Tensor& x);  // int32, as TF
Tensor size_of(const Tensor& x);   // int32
Tensor rank_of(const Tensor& x);   // int32
Tensor random_uniform_int(std::vector<int64_t> shape, int64_t minval, int64_t maxval, DType = DType::Int32,
                          std::optional<uint64_t> seed = {});

}  // namespace kiln
