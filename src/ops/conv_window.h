// The window arithmetic TensorFlow's NHWC convolutions and pools share (conv.cc and
// conv_backprop.cc): output sizes, the padding before each spatial dimension, and the attr
// checks with TensorFlow's messages. Also the gradient functions of conv.cc's rows, which
// emit conv_backprop.cc's ops.
#pragma once
#include <string>
#include <vector>

#include "ops/gradient.h"
#include "ops/helpers.h"

namespace kiln::ops::conv {

// One spatial dimension of a window: output size and the padding before it.
struct Window {
  int64_t out = -1, pad_before = 0;
};

// The padding before a dimension whose output size is known: EXPLICIT gives it, VALID has
// none, SAME splits the padding evenly (the extra pixel after), as TensorFlow does.
int64_t pad_before(int64_t in, int64_t eff, int64_t stride, int64_t out, const std::string& padding,
                   int64_t explicit_before);

// TensorFlow's GetWindowedOutputSize: VALID: ceil((in - eff + 1) / s); SAME: ceil(in / s)
// with the padding split evenly (the extra pixel after); EXPLICIT: the given paddings.
Window window(const InferContext& c, int64_t in, int64_t k, int64_t dilation, int64_t stride,
              const std::string& padding, int64_t explicit_before, int64_t explicit_after);

// A 4-value attr (strides, dilations, ksize) of positive values.
const std::vector<int64_t>& four(const InferContext& c, int k, const char* what);
// data_format must be NHWC (channels-first is refused as Unimplemented).
void check_format(const InferContext& c, int k);
void check_padding(const InferContext& c, const std::string& padding, const std::vector<int64_t>& explicit_paddings);
// The dims of a 4-D input, null when its rank is unknown.
const Dims* image(const InferContext& c, int i, const char* what);
// d, or `rank` unknown (-1) dims when d is null.
Dims dims_or_unknown(const Dims* d, size_t rank);
// Inputs a and b of a convolution (or its backprop) share one floating dtype, which the
// output and the kernel take; TensorFlow's messages otherwise.
void require_float_pair(InferContext& c, int a, int b);
// The value of a sizes input (input_sizes, filter_sizes, orig_input_shape) when known:
// non-negative values whose product fits int64. False: unknown.
bool known_sizes(InferContext& c, int i, const char* what, std::vector<int64_t>* sizes);

// Gradients of conv.cc's rows.
void conv2d_grad(GradContext& c);
void depthwise_conv2d_grad(GradContext& c);
void conv2d_backprop_input_grad(GradContext& c);
void max_pool_grad(GradContext& c);
void avg_pool_grad(GradContext& c);

}  // namespace kiln::ops::conv
