// AdjustContrastv2(images, contrast_factor): per image and channel, (x - mean) * factor + mean,
// the mean taken over the image's height and width (the last axis is the channel).
// TensorFlow registers no gradient for it: a tape reaching it is LookupError in Python.
#include <string>
#include <vector>

#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

void infer_adjust_contrast(InferContext& c) {
  require_type_in(c, "T", c.in(0).dtype, {DType::Float16, DType::Float32});
  if (c.in(1).dtype != DType::Float32)
    c.fail(std::string("cannot compute AdjustContrastv2 as input #1(zero-based) was expected to be a float tensor "
                       "but is a ") +
           tf_type_name(c.in(1).dtype) + " tensor");
  if (!c.in(0).unknown_rank && c.in(0).dims->size() < 3)
    c.fail("input must be at least 3-D, got shape" + dims_text(*c.in(0).dims));
  if (!c.in(1).unknown_rank && !c.in(1).dims->empty())
    c.fail("contrast_factor must be scalar: " + dims_text(*c.in(1).dims));
  c.out(0).dtype = c.in(0).dtype;
  c.out(0).shape = shape_of(c.in(0));
  c.kernel_dtype = c.in(0).dtype;
}

void adjust_contrast(KernelContext& c) {
  const TensorImpl& x = c.in(0);
  if (x.dims.size() < 3) c.fail("input must be at least 3-D, got shape" + dims_text(x.dims));
  if (!c.in(1).dims.empty()) c.fail("contrast_factor must be scalar: " + dims_text(c.in(1).dims));
  const float factor = c.in(1).as<float>()[0];
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  const int64_t channels = x.dims[rank - 1], pixels = x.dims[rank - 2] * x.dims[rank - 3];
  if (x.num_elements == 0) return;
  const int64_t images = x.num_elements / (pixels * channels);
  const float* src = x.as<float>();
  float* dst = c.out(0).as<float>();
  std::vector<double> mean(static_cast<size_t>(channels));
  for (int64_t b = 0; b < images; ++b) {
    const float* in = src + b * pixels * channels;
    float* out = dst + b * pixels * channels;
    std::fill(mean.begin(), mean.end(), 0.0);
    for (int64_t p = 0; p < pixels; ++p)
      for (int64_t ch = 0; ch < channels; ++ch) mean[ch] += in[p * channels + ch];
    for (double& m : mean) m /= static_cast<double>(pixels);
    for (int64_t p = 0; p < pixels; ++p)
      for (int64_t ch = 0; ch < channels; ++ch) {
        const auto m = static_cast<float>(mean[ch]);
        out[p * channels + ch] = (in[p * channels + ch] - m) * factor + m;
      }
  }
}

}  // namespace

const OpDef& op::AdjustContrastv2() {
  static const std::array<KernelFn, kNumDTypes> kernels = [] {
    std::array<KernelFn, kNumDTypes> k{};
    k[static_cast<int>(DType::Float32)] = &adjust_contrast;
    k[static_cast<int>(DType::Float16)] = &run_widened;
    return k;
  }();
  static const OpDef def = {.name = "AdjustContrastv2",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"images", "contrast_factor"},
                            .infer = infer_adjust_contrast,
                            .kernels = kernels};
  return def;
}

}  // namespace kiln::ops
