// The window arithmetic of conv_window.h.
#include "ops/conv_window.h"

#include <algorithm>

namespace kiln::ops::conv {

// The padding before a dimension whose output size is known: EXPLICIT gives it, VALID has
// none, SAME splits the padding evenly (the extra pixel after), as TensorFlow does.
int64_t pad_before(int64_t in, int64_t eff, int64_t stride, int64_t out, const std::string& padding,
                   int64_t explicit_before) {
  if (padding == "EXPLICIT") return explicit_before;
  if (padding == "VALID") return 0;
  return std::max<int64_t>((out - 1) * stride + eff - in, 0) / 2;
}

// TensorFlow's GetWindowedOutputSize: VALID: ceil((in - eff + 1) / s); SAME: ceil(in / s)
// with the padding split evenly (the extra pixel after); EXPLICIT: the given paddings.
Window window(const InferContext& c, int64_t in, int64_t k, int64_t dilation, int64_t stride,
              const std::string& padding, int64_t explicit_before, int64_t explicit_after) {
  Window w;
  if (in < 0) return w;  // unknown
  const int64_t eff = (k - 1) * dilation + 1;
  if (padding == "VALID" || padding == "EXPLICIT") {
    const int64_t padded = in + explicit_before + explicit_after;
    if (padded < eff)
      c.fail("Computed output size would be negative: " + std::to_string((padded - eff + stride) / stride - 1) +
             " [input_size: " + std::to_string(in) + ", effective_filter_size: " + std::to_string(eff) +
             ", stride: " + std::to_string(stride) + "]");
    w.out = (padded - eff) / stride + 1;
  } else {  // SAME
    w.out = (in + stride - 1) / stride;
  }
  w.pad_before = pad_before(in, eff, stride, w.out, padding, explicit_before);
  return w;
}

const std::vector<int64_t>& four(const InferContext& c, int k, const char* what) {
  const auto& v = c.attrs.list(k);
  if (v.size() != 4) c.fail(std::string(what) + " field must specify 4 dimensions, got " + std::to_string(v.size()));
  for (int64_t s : v)
    if (s < 1) c.fail(std::string(what) + " must be positive, got " + std::to_string(s));
  return v;
}

void check_format(const InferContext& c, int k) {
  const std::string& format = c.attrs.s(k);
  if (!format.empty() && format != "NHWC")
    throw UnimplementedError(std::string(c.op.name) + " with data_format " + format +
                             " is not supported by kiln (only NHWC)");
}

void check_padding(const InferContext& c, const std::string& padding, const std::vector<int64_t>& explicit_paddings) {
  if (padding != "SAME" && padding != "VALID" && padding != "EXPLICIT")
    c.fail("padding must be SAME, VALID or EXPLICIT, got '" + padding + "'");
  if (padding == "EXPLICIT") {
    if (explicit_paddings.size() != 8) c.fail("explicit_paddings must have 8 values for EXPLICIT padding");
    for (int64_t p : explicit_paddings)
      if (p < 0) c.fail("All elements of explicit_paddings must be nonnegative");
    if (explicit_paddings[0] || explicit_paddings[1] || explicit_paddings[6] || explicit_paddings[7])
      c.fail("Nonzero explicit padding in the batch or depth dimensions is not supported");
  } else if (!explicit_paddings.empty()) {
    c.fail("explicit_paddings must be empty unless padding is EXPLICIT");
  }
}

const Dims* image(const InferContext& c, int i, const char* what) {
  if (c.in(i).unknown_rank) return nullptr;
  const Dims& d = *c.in(i).dims;
  if (d.size() != 4) c.fail(std::string(what) + " must be 4-dimensional" + dims_text(d));
  return &d;
}

Dims dims_or_unknown(const Dims* d, size_t rank) { return d ? *d : Dims(rank, -1); }

void require_float_pair(InferContext& c, int a, int b) {
  if (c.in(a).dtype != c.in(b).dtype)
    c.fail(std::string("cannot compute ") + c.op.name + " as input #" + std::to_string(b) +
           "(zero-based) was expected to be a " + tf_type_name(c.in(a).dtype) + " tensor but is a " +
           tf_type_name(c.in(b).dtype) + " tensor");
  if (!is_floating(c.in(a).dtype))
    c.fail(std::string(c.op.name) + " supports float and double, got " + tf_type_name(c.in(a).dtype));
  c.out(0).dtype = c.in(a).dtype;
  c.kernel_dtype = c.in(a).dtype;
}

bool known_sizes(InferContext& c, int i, const char* what, std::vector<int64_t>* sizes) {
  require_int_dtype(c, i, what);
  if (!known_ints(c.in(i), sizes)) return false;
  for (int64_t v : *sizes)
    if (v < 0) c.fail(std::string(what) + " must be non-negative, got " + std::to_string(v));
  detail::checked_num_elements(sizes->data(), sizes->size());
  return true;
}

}  // namespace kiln::ops::conv
