// Neural-network ops with their own kernels: SparseSoftmaxCrossEntropyWithLogits, BiasAdd,
// FusedBatchNormV3 (inference).
#include <cmath>

#include "core/parallel.h"
#include "kernels/isa_dispatch.h"
#include "kernels/vmath.h"
#include "ops/batch_rows.h"
#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

const int kBiasAddFormat = attr_index(op::BiasAdd(), "data_format");

// SparseSoftmaxCrossEntropyWithLogits(features [batch, classes], labels [batch]) ->
// (loss [batch], backprop [batch, classes]). Computed as log-sum-exp minus the label's
// logit after subtracting the row max, so large logits neither overflow nor lose the loss.
void infer_sparse_xent(InferContext& c) {
  const InputInfo& f = c.in(0);
  const InputInfo& l = c.in(1);
  if (!is_floating(f.dtype)) c.fail(std::string("features must be float or double, got ") + tf_type_name(f.dtype));
  if (l.dtype != DType::Int32 && l.dtype != DType::Int64)
    c.fail(std::string("labels must be int32 or int64, got ") + tf_type_name(l.dtype));
  if (!f.unknown_rank && f.dims->size() != 2) c.fail("logits must be 2-D, but got shape " + dims_text(*f.dims));
  if (!l.unknown_rank && l.dims->size() != 1) c.fail("labels must be 1-D, but got shape " + dims_text(*l.dims));
  int64_t batch = -1, classes = -1;
  if (!f.unknown_rank) {
    batch = (*f.dims)[0];
    classes = (*f.dims)[1];
  }
  if (!l.unknown_rank) {
    const int64_t lb = (*l.dims)[0];
    if (batch >= 0 && lb >= 0 && lb != batch)
      c.fail("logits and labels must have the same first dimension, got logits shape " + dims_text(*f.dims) +
             " and labels shape " + dims_text(*l.dims));
    if (batch < 0) batch = lb;
  }
  c.out(0) = OutputInfo{f.dtype, TensorShape(Dims{batch})};
  c.out(1) = OutputInfo{f.dtype, TensorShape(Dims{batch, classes})};
  c.kernel_dtype = f.dtype;
}
template <class T>
struct SparseXentKernel {
  static void run(KernelContext& c) {
    const TensorImpl& f = c.in(0);
    const int64_t batch = f.dims[0], classes = f.dims[1];
    const std::vector<int64_t> labels = int_values(c.in(1));
    for (int64_t b = 0; b < batch; ++b)
      if (labels[b] < 0 || labels[b] >= classes) {
        std::string all;
        for (int64_t v : labels) {
          if (!all.empty()) all += ' ';
          all += std::to_string(v);
        }
        c.fail("Received a label value of " + std::to_string(labels[b]) + " which is outside the valid range of [0, " +
               std::to_string(classes) + ").  Label values: " + all);
      }
    const T* x = f.as<T>();
    T* loss = c.out(0).as<T>();
    T* back = c.out(1).as<T>();
    for (int64_t b = 0; b < batch; ++b) {
      const T* row = x + b * classes;
      T* brow = back + b * classes;
      T m = classes ? row[0] : T(0);
      for (int64_t j = 1; j < classes; ++j) m = std::max(m, row[j]);
      for (int64_t j = 0; j < classes; ++j) brow[j] = row[j] - m;
      kernels::vexp(brow, brow, classes);
      T sum = 0;
      for (int64_t j = 0; j < classes; ++j) sum += brow[j];
      const T inv = T(1) / sum;
      for (int64_t j = 0; j < classes; ++j) brow[j] *= inv;  // softmax
      loss[b] = std::log(sum) + m - row[labels[b]];
      brow[labels[b]] -= T(1);
    }
  }
};
// d loss / d features is the op's own backprop output, scaled per row by the upstream
// gradient. (The backprop output itself is not differentiated again.)
void sparse_xent_grad(GradContext& c) {
  if (c.dy[1].defined())
    throw UnimplementedError(
        "The gradient of SparseSoftmaxCrossEntropyWithLogits's backprop output is not implemented");
  const Tensor axis = grad::int_scalar(c.b, -1);
  const Tensor dloss = grad::emit1(c.b, op::ExpandDims(), {&c.dy[0], &axis});
  c.dx[0] = grad::mul(c.b, dloss, c.y[1]);
}

// BiasAdd(value [..., C], bias [C]) with TensorFlow's default data_format NHWC: the bias
// is added along the last dimension. NCHW is refused (kiln has no channels-first layout).
void infer_bias_add(InferContext& c) {
  require_same_dtypes(c, 0, 1);
  if (c.in(0).dtype == DType::Bool) c.fail("BiasAdd does not support bool tensors");
  const std::string& format = c.attrs.s(kBiasAddFormat);
  if (!format.empty() && format != "NHWC")
    throw UnimplementedError("BiasAdd with data_format " + format + " is not supported by kiln (only NHWC)");
  const InputInfo& v = c.in(0);
  const InputInfo& b = c.in(1);
  if (!v.unknown_rank && v.dims->size() < 2) c.fail("Input tensor must be at least 2D: " + dims_text(*v.dims));
  if (!b.unknown_rank && b.dims->size() != 1) c.fail("Biases must be 1D: " + dims_text(*b.dims));
  if (!v.unknown_rank && !b.unknown_rank) {
    const int64_t channels = v.dims->back(), biases = (*b.dims)[0];
    if (channels >= 0 && biases >= 0 && channels != biases)
      c.fail("Must provide as many biases as the last dimension of the input tensor: " + dims_text(*b.dims) + " vs. " +
             dims_text(*v.dims));
  }
  c.out(0) = OutputInfo{v.dtype, v.unknown_rank ? TensorShape::unknown() : TensorShape(Dims(*v.dims))};
  c.kernel_dtype = v.dtype;
}
// y = x + bias over rows [lo, hi) of a [rows, channels] block (built per instruction set).
template <class T>
KILN_ISA_BODY void bias_add_rows_body(const T* x, const T* bias, T* y, int64_t lo, int64_t hi, int64_t channels) {
  for (int64_t r = lo; r < hi; ++r)
    for (int64_t j = 0; j < channels; ++j) {
      if constexpr (std::is_integral_v<T>) {  // wraps on overflow, as TensorFlow
        using U = std::make_unsigned_t<T>;
        y[r * channels + j] = static_cast<T>(static_cast<U>(x[r * channels + j]) + static_cast<U>(bias[j]));
      } else {
        y[r * channels + j] = x[r * channels + j] + bias[j];
      }
    }
}
template <class T>
struct BiasAddKernel {
  static void run(KernelContext& c) {
    const TensorImpl& v = c.in(0);
    const int64_t channels = c.in(1).num_elements;
    const T* x = v.as<T>();
    const T* bias = c.in(1).as<T>();
    T* y = c.out(0).as<T>();
    const int64_t rows = channels ? v.num_elements / channels : 0;
    parallel_for(
        rows, std::max<int64_t>(1, (256 * 1024) / std::max<int64_t>(channels, 1)),
        [&](int64_t lo, int64_t hi) { KILN_ISA_DISPATCH((bias_add_rows_body(x, bias, y, lo, hi, channels))); });
  }
};
// d value = dy; d bias = dy summed over every dimension but the last (the bias broadcasts
// along them, so this is the broadcast gradient summed back to the bias's shape).
void bias_add_grad(GradContext& c) {
  if (c.needs[0]) c.dx[0] = c.dy[0];
  if (c.needs[1]) c.dx[1] = grad::sum_to(c.b, c.dy[0], c.x[1]);
}

// FusedBatchNormV3(x [N, H, W, C], scale, offset, mean, variance [C]) in inference mode
// (is_training=false, how a served model runs it): y = (x - mean) * (rsqrt(variance + epsilon)
// * scale) + offset, per channel, in TensorFlow's order of operations; the other five outputs
// pass the statistics through (batch_mean, batch_variance, reserve_space_1/2) and an empty
// reserve_space_3. Attrs: epsilon, exponential_avg_factor, data_format, is_training.
constexpr int kEpsilon = 0, kDataFormat = 2, kIsTraining = 3;
void infer_fused_batch_norm(InferContext& c) {
  const InputInfo& x = c.in(0);
  if (x.dtype != DType::Float32) c.fail(std::string("x must be float32, got ") + tf_type_name(x.dtype));
  for (int i = 1; i < 5; ++i)
    if (c.in(i).dtype != DType::Float32)
      c.fail(std::string("scale, offset, mean and variance must be float32, got ") + tf_type_name(c.in(i).dtype));
  if (c.attrs.b(kIsTraining))
    throw UnimplementedError("FusedBatchNormV3 with is_training=true is not supported by kiln (inference only)");
  const std::string& format = c.attrs.s(kDataFormat);
  if (!format.empty() && format != "NHWC")
    throw UnimplementedError("FusedBatchNormV3 with data_format " + format + " is not supported by kiln (only NHWC)");
  if (!x.unknown_rank && x.dims->size() != 4) c.fail("input must be 4-dimensional" + dims_text(*x.dims));
  const int64_t channels = x.unknown_rank ? -1 : x.dims->back();
  // TensorFlow's words: the rank check names the statistics "estimated_*", the size check
  // prefixes only theirs with the mode.
  const char* rank_names[] = {"", "scale", "offset", "estimated_mean", "estimated_variance"};
  const char* size_names[] = {"", "scale", "offset", "When is_training=false, mean",
                              "When is_training=false, variance"};
  for (int i = 1; i < 5; ++i) {
    const InputInfo& v = c.in(i);
    if (v.unknown_rank) continue;
    if (v.dims->size() != 1) c.fail(std::string(rank_names[i]) + " must be 1-dimensional" + dims_text(*v.dims));
    if (channels >= 0 && (*v.dims)[0] >= 0 && (*v.dims)[0] != channels)
      c.fail(std::string(size_names[i]) + " must have the same number of elements as the channels of x, got " +
             std::to_string((*v.dims)[0]) + " and " + std::to_string(channels));
  }
  c.out(0) = OutputInfo{DType::Float32, x.unknown_rank ? TensorShape::unknown() : TensorShape(Dims(*x.dims))};
  for (int i = 1; i < 5; ++i) c.out(i) = OutputInfo{DType::Float32, TensorShape(Dims{channels})};
  c.out(5) = OutputInfo{DType::Float32, TensorShape(Dims{0})};
  c.kernel_dtype = DType::Float32;
}
// y = (x - mean) * factor + offset over rows [lo, hi) (built per instruction set).
KILN_ISA_BODY void batch_norm_rows_body(const float* in, const float* mean, const float* factor, const float* offset,
                                        float* y, int64_t lo, int64_t hi, int64_t channels) {
  for (int64_t r = lo; r < hi; ++r)
    for (int64_t j = 0; j < channels; ++j)
      y[r * channels + j] = (in[r * channels + j] - mean[j]) * factor[j] + offset[j];
}
template <class T>
struct FusedBatchNormKernel {
  static void run(KernelContext& c) {
    const TensorImpl& x = c.in(0);
    const int64_t channels = x.dims[3];
    const float* scale = c.in(1).as<float>();
    const float* offset = c.in(2).as<float>();
    const float* mean = c.in(3).as<float>();
    const float* variance = c.in(4).as<float>();
    const auto epsilon = static_cast<float>(c.attrs.f(kEpsilon));
    std::vector<float> factor(static_cast<size_t>(channels));
    for (int64_t j = 0; j < channels; ++j) factor[j] = 1.0f / std::sqrt(variance[j] + epsilon) * scale[j];
    const float* in = x.as<float>();
    float* y = c.out(0).as<float>();
    const int64_t rows = channels ? x.num_elements / channels : 0;
    parallel_for(rows, std::max<int64_t>(1, (256 * 1024) / std::max<int64_t>(channels, 1)),
                 [&](int64_t lo, int64_t hi) {
                   KILN_ISA_DISPATCH((batch_norm_rows_body(in, mean, factor.data(), offset, y, lo, hi, channels)));
                 });
    for (int k = 1; k < 5; ++k) {
      const TensorImpl& from = c.in(k < 3 ? 2 + k : k);  // batch_mean/var and reserves 1/2: mean, variance
      std::copy_n(from.as<float>(), channels, c.out(k).as<float>());
    }
  }
};

}  // namespace

const OpDef& op::FusedBatchNormV3() {
  static const OpDef def = {
      .name = "FusedBatchNormV3",
      .num_inputs = 5,
      .num_outputs = 6,
      .input_args = {"x", "scale", "offset", "mean", "variance"},
      .traits = kPure | kTfjs,
      .attr_specs = {float_attr("epsilon", static_cast<double>(0.0001f)), float_attr("exponential_avg_factor", 1.0),
                     string_attr("data_format", "NHWC"), bool_attr("is_training", true)},
      .infer = infer_fused_batch_norm,
      .kernels = kernels_for<FusedBatchNormKernel, float>(),
      .index_type_attrs = {{"U", 1}},
      .output_args = {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2", "reserve_space_3"}};
  return def;
}

namespace {

// A free bias added along the channels of each row (a matrix's, or NHWC images').
RowKind bias_add_rows(const RowsContext& c) {
  return !c.sized() && c.rows(0) && c.free(1) && (c.out_rank == 2 || c.attrs.s(kBiasAddFormat) == "NHWC")
             ? RowKind::kRows
             : RowKind::kOther;
}

}  // namespace

const OpDef& op::BiasAdd() {
  static const OpDef def = {.name = "BiasAdd",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"value", "bias"},
                            .traits = kPure | kTfjs,
                            .attr_specs = {string_attr("data_format", "NHWC")},
                            .infer = infer_bias_add,
                            .kernels = kernels_for<BiasAddKernel, KILN_NUMERIC>(),
                            .grad = &bias_add_grad,
                            .rows = &bias_add_rows};
  return def;
}

const OpDef& op::SparseSoftmaxCrossEntropyWithLogits() {
  static const OpDef def = {.name = "SparseSoftmaxCrossEntropyWithLogits",
                            .num_inputs = 2,
                            .num_outputs = 2,
                            .input_args = {"features", "labels"},
                            .traits = kPure,
                            .infer = infer_sparse_xent,
                            .kernels = kernels_for<SparseXentKernel, KILN_FLOATS>(),
                            .index_type_attrs = {{"Tlabels", 1}},
                            .grad = &sparse_xent_grad,
                            .output_args = {"loss", "backprop"}};
  return def;
}

}  // namespace kiln::ops
