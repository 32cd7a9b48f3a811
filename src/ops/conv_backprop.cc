// The backward ops of convolution and pooling (NHWC), which are also their gradients:
// Conv2DBackpropInput (Keras's Conv2DTranspose runs it forward), Conv2DBackpropFilter, the
// depthwise pair, MaxPoolGrad and AvgPoolGrad; and the gradient functions of conv.cc's rows.
// Conv2D's input gradient is col2im of dy * W^T; its filter gradient im2col(x)^T * dy, both
// one GEMM per block of output pixels. The depthwise (grouped) ones and the pools' loop
// over windows directly: a window's taps touch few channels each.
#include <algorithm>
#include <limits>

#include "core/parallel.h"
#include "kernels/gemm.h"
#include "ops/conv_window.h"
#include "ops/grad_util.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

using conv::check_format;
using conv::check_padding;
using conv::dims_or_unknown;
using conv::four;
using conv::image;
using conv::known_sizes;
using conv::pad_before;
using conv::require_float_pair;
using conv::Window;
using conv::window;

// The backprop ops share Conv2D's attr places (strides, padding, explicit_paddings,
// data_format, dilations); the depthwise ones lack use_cudnn_on_gpu, which comes last.
int conv_attr(const char* name) {
  return attr_index({{&op::Conv2DBackpropInput(), name},
                     {&op::Conv2DBackpropFilter(), name},
                     {&op::DepthwiseConv2dNativeBackpropInput(), name},
                     {&op::DepthwiseConv2dNativeBackpropFilter(), name},
                     {&op::Conv2D(), name},
                     {&op::DepthwiseConv2dNative(), name}});
}
const int kStrides = conv_attr("strides");
const int kPadding = conv_attr("padding");
const int kExplicitPaddings = conv_attr("explicit_paddings");
const int kFormat = conv_attr("data_format");
const int kDilations = conv_attr("dilations");
int pool_attr(const char* name) {
  return attr_index({{&op::MaxPoolGrad(), name},
                     {&op::AvgPoolGrad(), name},
                     {&op::MaxPoolGradGrad(), name},
                     {&op::MaxPool(), name},
                     {&op::AvgPool(), name}});
}
const int kPoolKsize = pool_attr("ksize");
const int kPoolStrides = pool_attr("strides");
const int kPoolPadding = pool_attr("padding");
const int kMaxPoolExplicitPaddings = attr_index(op::MaxPoolGrad(), "explicit_paddings");
const int kMaxPoolFormat = attr_index(op::MaxPoolGrad(), "data_format");
const int kAvgPoolFormat = attr_index({{&op::AvgPoolGrad(), "data_format"}, {&op::MaxPoolGradGrad(), "data_format"}});

bool is_depthwise(const OpDef& op) {
  return &op == &op::DepthwiseConv2dNativeBackpropInput() || &op == &op::DepthwiseConv2dNativeBackpropFilter();
}

// The geometry of one convolution seen from its backward ops: the input [n, h, w, ch], the
// filter [kh, kw, fd, oc] (fd = ch; depthwise: [kh, kw, ch, m], oc = ch * m), dy [n, oh, ow, oc].
struct ConvShape {
  int64_t n, h, w, ch, kh, kw, oc, oh, ow;
  int64_t sh, sw, dh, dw, pt, pl;
};
ConvShape conv_shape(const KernelContext& c, const Dims& x, const Dims& f, const Dims& dy) {
  const auto& strides = c.attrs.list(kStrides);
  const auto& dilations = c.attrs.list(kDilations);
  const std::string& padding = c.attrs.s(kPadding);
  const auto& ep = c.attrs.list(kExplicitPaddings);
  const bool ex = padding == "EXPLICIT";
  ConvShape s{.n = x[0],
              .h = x[1],
              .w = x[2],
              .ch = x[3],
              .kh = f[0],
              .kw = f[1],
              .oc = dy[3],
              .oh = dy[1],
              .ow = dy[2],
              .sh = strides[1],
              .sw = strides[2],
              .dh = dilations[1],
              .dw = dilations[2],
              .pt = 0,
              .pl = 0};
  s.pt = pad_before(s.h, (s.kh - 1) * s.dh + 1, s.sh, s.oh, padding, ex ? ep[2] : 0);
  s.pl = pad_before(s.w, (s.kw - 1) * s.dw + 1, s.sw, s.ow, padding, ex ? ep[4] : 0);
  return s;
}

// The attr checks every convolution backprop op makes (TensorFlow's messages).
void check_conv_attrs(InferContext& c) {
  const auto& strides = four(c, kStrides, "strides");
  const auto& dilations = four(c, kDilations, "dilations");
  check_padding(c, c.attrs.s(kPadding), c.attrs.list(kExplicitPaddings));
  check_format(c, kFormat);
  if (strides[0] != 1 || strides[3] != 1)
    c.fail("Current implementation does not yet support strides in the batch and depth dimensions.");
  if (dilations[0] != 1 || dilations[3] != 1)
    c.fail("Current implementation does not yet support dilations in the batch and depth dimensions.");
}

// Checks that dy's spatial sizes are what the forward convolution gives for this input and
// filter (TensorFlow's message), and the operands' depths agree. x, f, dy: dims, -1 unknown.
void check_backprop_dims(InferContext& c, const Dims& x, const Dims& f, const Dims& dy) {
  const bool depthwise = is_depthwise(c.op);
  const std::string label =
      depthwise ? std::string(c.op.name)
                : "Conv2DCustomBackprop" + std::string(&c.op == &op::Conv2DBackpropFilter() ? "Filter" : "Input");
  if (x[3] >= 0 && f[2] >= 0 && x[3] != f[2])
    c.fail("input and filter must have the same depth: " + std::to_string(x[3]) + " vs " + std::to_string(f[2]));
  const int64_t out_depth = depthwise ? (f[2] >= 0 && f[3] >= 0 ? f[2] * f[3] : -1) : f[3];
  if (out_depth >= 0 && dy[3] >= 0 && out_depth != dy[3])
    c.fail("filter and out_backprop must have the same out_depth: " + std::to_string(out_depth) + " vs " +
           std::to_string(dy[3]));
  if (x[0] >= 0 && dy[0] >= 0 && x[0] != dy[0]) c.fail("input and out_backprop must have the same batch size");
  const auto& strides = c.attrs.list(kStrides);
  const auto& dilations = c.attrs.list(kDilations);
  const auto& ep = c.attrs.list(kExplicitPaddings);
  const bool ex = c.attrs.s(kPadding) == "EXPLICIT";
  for (int d = 1; d <= 2; ++d) {
    if (f[d - 1] < 0) continue;
    const Window w = window(c, x[d], f[d - 1], dilations[d], strides[d], c.attrs.s(kPadding), ex ? ep[2 * d] : 0,
                            ex ? ep[2 * d + 1] : 0);
    if (w.out >= 0 && dy[d] >= 0 && w.out != dy[d])
      c.fail(label + ": Size of out_backprop doesn't match computed: actual = " + std::to_string(dy[d]) +
             ", computed = " + std::to_string(w.out) + " spatial_dim: " + std::to_string(d) + " input: " +
             std::to_string(x[d]) + " filter: " + std::to_string(f[d - 1]) + " output: " + std::to_string(dy[d]) +
             " stride: " + std::to_string(strides[d]) + " dilation: " + std::to_string(dilations[d]));
  }
}

// Conv2DBackpropInput / DepthwiseConv2dNativeBackpropInput(input_sizes, filter, out_backprop).
void infer_backprop_input(InferContext& c) {
  require_float_pair(c, 1, 2);
  check_conv_attrs(c);
  const Dims* f = image(c, 1, "filter");
  const Dims* dy = image(c, 2, "out_backprop");
  std::vector<int64_t> sizes;
  if (!known_sizes(c, 0, "input_sizes", &sizes)) {
    c.out(0).shape = TensorShape::unknown_dims(4);
    return;
  }
  if (sizes.size() == 2) sizes = {dy ? (*dy)[0] : -1, sizes[0], sizes[1], f ? (*f)[2] : -1};
  if (sizes.size() != 4)
    c.fail("input_sizes must be a 4-D or 2-D vector, got " + std::to_string(sizes.size()) + " values");
  check_backprop_dims(c, Dims(sizes.begin(), sizes.end()), dims_or_unknown(f, 4), dims_or_unknown(dy, 4));
  c.out(0).shape = TensorShape(Dims(sizes.begin(), sizes.end()));
}

// Conv2DBackpropFilter / DepthwiseConv2dNativeBackpropFilter(input, filter_sizes, out_backprop).
void infer_backprop_filter(InferContext& c) {
  require_float_pair(c, 0, 2);
  check_conv_attrs(c);
  const Dims* x = image(c, 0, "input");
  const Dims* dy = image(c, 2, "out_backprop");
  std::vector<int64_t> sizes;
  if (!known_sizes(c, 1, "filter_sizes", &sizes)) {
    c.out(0).shape = TensorShape::unknown_dims(4);
    return;
  }
  if (sizes.size() != 4) c.fail("filter_sizes must be a 4-D vector, got " + std::to_string(sizes.size()) + " values");
  check_backprop_dims(c, dims_or_unknown(x, 4), Dims(sizes.begin(), sizes.end()), dims_or_unknown(dy, 4));
  c.out(0).shape = TensorShape(Dims(sizes.begin(), sizes.end()));
}

// Output pixels per GEMM block: its im2col rows stay in cache.
constexpr int64_t kBlockRows = 1024;

// Copies output pixels [r0, r1) of image b's windows into rows of cols ([KH, KW, C] order,
// zeros where a window hangs over the padding).
template <class T>
void im2col(const ConvShape& s, const T* image, int64_t r0, int64_t r1, T* cols) {
  const int64_t patch = s.kh * s.kw * s.ch;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t oy = r / s.ow, ox = r % s.ow;
    T* row = cols + (r - r0) * patch;
    for (int64_t ky = 0; ky < s.kh; ++ky) {
      const int64_t iy = oy * s.sh - s.pt + ky * s.dh;
      for (int64_t kx = 0; kx < s.kw; ++kx) {
        const int64_t ix = ox * s.sw - s.pl + kx * s.dw;
        T* dst = row + (ky * s.kw + kx) * s.ch;
        if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w)
          std::fill(dst, dst + s.ch, T(0));
        else
          std::copy_n(image + (iy * s.w + ix) * s.ch, s.ch, dst);
      }
    }
  }
}

// Adds block rows of cols (as im2col laid them out) back into the image: col2im.
template <class T>
void col2im(const ConvShape& s, const T* cols, int64_t r0, int64_t r1, T* image) {
  const int64_t patch = s.kh * s.kw * s.ch;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t oy = r / s.ow, ox = r % s.ow;
    const T* row = cols + (r - r0) * patch;
    for (int64_t ky = 0; ky < s.kh; ++ky) {
      const int64_t iy = oy * s.sh - s.pt + ky * s.dh;
      if (iy < 0 || iy >= s.h) continue;
      for (int64_t kx = 0; kx < s.kw; ++kx) {
        const int64_t ix = ox * s.sw - s.pl + kx * s.dw;
        if (ix < 0 || ix >= s.w) continue;
        T* __restrict dst = image + (iy * s.w + ix) * s.ch;
        const T* __restrict src = row + (ky * s.kw + kx) * s.ch;
        for (int64_t k = 0; k < s.ch; ++k) dst[k] += src[k];
      }
    }
  }
}

// The kernels check what a shape function could not (a graph's operand of unknown shape):
// four dims each, batch and depths that agree. Spatial sizes need no check: every read and
// write is bounds-checked against its own operand.
void require_agree(const KernelContext& c, const Dims& x, const Dims& f, const Dims& dy) {
  if (x.size() != 4 || f.size() != 4 || dy.size() != 4) c.fail("input, filter and out_backprop must be 4-D");
  const int64_t out_depth = is_depthwise(c.op) ? x[3] * f[3] : f[3];
  if (x[3] != f[2] || dy[3] != out_depth || x[0] != dy[0])
    c.fail("input, filter and out_backprop do not agree: " + dims_text(x) + dims_text(f) + dims_text(dy));
}

// dx = col2im(dy * W^T), a block of output pixels at a time.
template <class T>
struct Conv2DBackpropInputKernel {
  static void run(KernelContext& c) {
    const TensorImpl& f = c.in(1);
    const TensorImpl& dy = c.in(2);
    TensorImpl& dx = c.out(0);
    require_agree(c, dx.dims, f.dims, dy.dims);
    const ConvShape s = conv_shape(c, dx.dims, f.dims, dy.dims);
    T* out = dx.as<T>();
    std::fill(out, out + dx.num_elements, T(0));
    const int64_t patch = s.kh * s.kw * s.ch, rows = s.oh * s.ow;
    if (patch == 0 || rows == 0 || s.oc == 0) return;
    std::vector<T> cols(static_cast<size_t>(std::min(rows, kBlockRows) * patch));
    for (int64_t b = 0; b < s.n; ++b)
      for (int64_t r0 = 0; r0 < rows; r0 += kBlockRows) {
        const int64_t r1 = std::min(rows, r0 + kBlockRows);
        kernels::gemm<T>(false, true, r1 - r0, patch, s.oc, dy.as<T>() + (b * rows + r0) * s.oc, f.as<T>(),
                         cols.data());
        col2im(s, cols.data(), r0, r1, out + b * s.h * s.w * s.ch);
      }
  }
};

// dW = sum over images and blocks of im2col(x)^T * dy.
template <class T>
struct Conv2DBackpropFilterKernel {
  static void run(KernelContext& c) {
    const TensorImpl& x = c.in(0);
    const TensorImpl& dy = c.in(2);
    TensorImpl& dw = c.out(0);
    require_agree(c, x.dims, dw.dims, dy.dims);
    const ConvShape s = conv_shape(c, x.dims, dw.dims, dy.dims);
    T* out = dw.as<T>();
    std::fill(out, out + dw.num_elements, T(0));
    const int64_t patch = s.kh * s.kw * s.ch, rows = s.oh * s.ow;
    if (patch == 0 || rows == 0 || s.oc == 0) return;
    const int64_t block = std::min(rows, kBlockRows);
    std::vector<T> cols(static_cast<size_t>(block * patch)), part(static_cast<size_t>(patch * s.oc));
    for (int64_t b = 0; b < s.n; ++b)
      for (int64_t r0 = 0; r0 < rows; r0 += kBlockRows) {
        const int64_t r1 = std::min(rows, r0 + kBlockRows);
        im2col(s, x.as<T>() + b * s.h * s.w * s.ch, r0, r1, cols.data());
        kernels::gemm<T>(true, false, patch, s.oc, r1 - r0, cols.data(), dy.as<T>() + (b * rows + r0) * s.oc,
                         part.data());
        for (int64_t i = 0; i < patch * s.oc; ++i) out[i] += part[i];
      }
  }
};

// Calls f(input pixel, output pixel) for each pair that filter tap (ky, kx) joins in image b:
// output pixel (oy, ox) reads input pixel (iy, ix) through that tap where it lies inside.
template <class F>
void for_tap_pixels(const ConvShape& s, int64_t b, int64_t ky, int64_t kx, F&& f) {
  for (int64_t oy = 0; oy < s.oh; ++oy) {
    const int64_t iy = oy * s.sh - s.pt + ky * s.dh;
    if (iy < 0 || iy >= s.h) continue;
    for (int64_t ox = 0; ox < s.ow; ++ox) {
      const int64_t ix = ox * s.sw - s.pl + kx * s.dw;
      if (ix >= 0 && ix < s.w) f((b * s.h + iy) * s.w + ix, (b * s.oh + oy) * s.ow + ox);
    }
  }
}

// Depthwise: channel k's m-th output (k * M + m) depends only on input channel k, so
// dx[.., k] += sum_m W[ky, kx, k, m] * dy[.., k*M + m]; images are independent.
template <class T>
struct DepthwiseBackpropInputKernel {
  static void run(KernelContext& c) {
    const TensorImpl& f = c.in(1);
    const TensorImpl& dy = c.in(2);
    TensorImpl& dx = c.out(0);
    require_agree(c, dx.dims, f.dims, dy.dims);
    const ConvShape s = conv_shape(c, dx.dims, f.dims, dy.dims);
    const int64_t m = f.dims[3];
    T* out = dx.as<T>();
    std::fill(out, out + dx.num_elements, T(0));
    parallel_for(s.n, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t b = lo; b < hi; ++b)
        for (int64_t tap = 0; tap < s.kh * s.kw; ++tap) {
          const T* wp = f.as<T>() + tap * s.oc;
          for_tap_pixels(s, b, tap / s.kw, tap % s.kw, [&](int64_t in, int64_t o) {
            T* dp = out + in * s.ch;
            const T* gp = dy.as<T>() + o * s.oc;
            for (int64_t k = 0; k < s.ch; ++k) {
              T acc = 0;
              for (int64_t j = 0; j < m; ++j) acc += wp[k * m + j] * gp[k * m + j];
              dp[k] += acc;
            }
          });
        }
    });
  }
};

// dW[ky, kx, k, m] = sum over images and output pixels of x[.., k] * dy[.., k*M + m]; each
// filter tap's slice is its own, so threads take taps.
template <class T>
struct DepthwiseBackpropFilterKernel {
  static void run(KernelContext& c) {
    const TensorImpl& x = c.in(0);
    const TensorImpl& dy = c.in(2);
    TensorImpl& dw = c.out(0);
    require_agree(c, x.dims, dw.dims, dy.dims);
    const ConvShape s = conv_shape(c, x.dims, dw.dims, dy.dims);
    const int64_t m = dw.dims[3];
    T* out = dw.as<T>();
    std::fill(out, out + dw.num_elements, T(0));
    parallel_for(s.kh * s.kw, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t tap = lo; tap < hi; ++tap) {
        T* wp = out + tap * s.oc;
        for (int64_t b = 0; b < s.n; ++b)
          for_tap_pixels(s, b, tap / s.kw, tap % s.kw, [&](int64_t in, int64_t o) {
            const T* xp = x.as<T>() + in * s.ch;
            const T* gp = dy.as<T>() + o * s.oc;
            for (int64_t k = 0; k < s.ch; ++k)
              for (int64_t j = 0; j < m; ++j) wp[k * m + j] += xp[k] * gp[k * m + j];
          });
      }
    });
  }
};

// A pool's window along one image, seen from its gradient op: the pool's output size and
// the padding before each spatial dimension.
struct PoolShape {
  int64_t n, h, w, ch, kh, kw, sh, sw, oh, ow, pt, pl;
};
PoolShape pool_shape(const KernelContext& c, const Dims& x, const Dims& dy, const std::vector<int64_t>& ep) {
  const auto& ksize = c.attrs.list(kPoolKsize);
  const auto& strides = c.attrs.list(kPoolStrides);
  const std::string& padding = c.attrs.s(kPoolPadding);
  const bool ex = padding == "EXPLICIT";
  PoolShape s{.n = x[0],
              .h = x[1],
              .w = x[2],
              .ch = x[3],
              .kh = ksize[1],
              .kw = ksize[2],
              .sh = strides[1],
              .sw = strides[2],
              .oh = dy[1],
              .ow = dy[2],
              .pt = 0,
              .pl = 0};
  s.pt = pad_before(s.h, s.kh, s.sh, s.oh, padding, ex ? ep[2] : 0);
  s.pl = pad_before(s.w, s.kw, s.sw, s.ow, padding, ex ? ep[4] : 0);
  return s;
}

bool is_max_pool_grad(const OpDef& op) { return &op == &op::MaxPoolGrad(); }
const std::vector<int64_t>& pool_explicit_paddings(const Attrs& attrs, const OpDef& op) {
  static const std::vector<int64_t> none;
  return is_max_pool_grad(op) ? attrs.list(kMaxPoolExplicitPaddings) : none;
}

std::string bracketed(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

// The pool's attrs, and that grad has the shape the pool gives for an input of dims x.
void check_pool(InferContext& c, const Dims& x, const Dims* dy) {
  const auto& ksize = four(c, kPoolKsize, "ksize");
  const auto& strides = four(c, kPoolStrides, "strides");
  const std::string& padding = c.attrs.s(kPoolPadding);
  const auto& ep = pool_explicit_paddings(c.attrs, c.op);
  check_padding(c, padding, ep);
  check_format(c, is_max_pool_grad(c.op) ? kMaxPoolFormat : kAvgPoolFormat);
  if (ksize[0] != 1 || strides[0] != 1)
    throw UnimplementedError("Pooling is not yet supported on the batch dimension.");
  if (ksize[3] != 1 || strides[3] != 1)
    throw UnimplementedError(std::string(&c.op == &op::AvgPoolGrad() ? "AvgPoolingGrad" : "MaxPoolingGrad") +
                             " is not yet supported on the depth dimension.");
  const bool ex = padding == "EXPLICIT";
  const Dims want{x[0], window(c, x[1], ksize[1], 1, strides[1], padding, ex ? ep[2] : 0, ex ? ep[3] : 0).out,
                  window(c, x[2], ksize[2], 1, strides[2], padding, ex ? ep[4] : 0, ex ? ep[5] : 0).out, x[3]};
  if (!dy) return;
  for (int d = 0; d < 4; ++d)
    if (want[d] >= 0 && (*dy)[d] >= 0 && want[d] != (*dy)[d])
      c.fail("Expected grad shape to be " + bracketed(want) + ", but got " + bracketed(*dy));
}

// MaxPoolGrad(orig_input, orig_output, grad): attrs MaxPool's.
void infer_max_pool_grad(InferContext& c) {
  require_same_dtypes(c, 0, 2);
  if (!is_floating(c.in(0).dtype) && !is_integer(c.in(0).dtype))
    c.fail(std::string("MaxPoolGrad does not support ") + tf_type_name(c.in(0).dtype) + " tensors");
  const Dims* x = image(c, 0, "orig_input");
  image(c, 1, "orig_output");
  const Dims* dy = image(c, 2, "grad");
  check_pool(c, dims_or_unknown(x, 4), dy);
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  c.out(0).shape = x ? TensorShape(Dims(*x)) : TensorShape::unknown_dims(4);
}

// MaxPoolGradGrad(orig_input, orig_output, grad): attrs ksize, strides, padding, data_format.
void infer_max_pool_grad_grad(InferContext& c) {
  require_same_dtypes(c, 0, 2);
  if (!is_floating(c.in(0).dtype) && !is_integer(c.in(0).dtype))
    c.fail(std::string("MaxPoolGradGrad does not support ") + tf_type_name(c.in(0).dtype) + " tensors");
  const Dims* x = image(c, 0, "orig_input");
  const Dims* y = image(c, 1, "orig_output");
  const Dims* g = image(c, 2, "grad");
  if (x && g)
    for (int d = 0; d < 4; ++d)
      if ((*x)[d] >= 0 && (*g)[d] >= 0 && (*x)[d] != (*g)[d])
        c.fail("tensor_in and grad must have the same shape: " + bracketed(*x) + " vs " + bracketed(*g));
  check_pool(c, dims_or_unknown(x, 4), y);
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  c.out(0).shape = y ? TensorShape(Dims(*y)) : TensorShape::unknown_dims(4);
}

// AvgPoolGrad(orig_input_shape, grad): attrs AvgPool's.
void infer_avg_pool_grad(InferContext& c) {
  if (!is_floating(c.in(1).dtype))
    c.fail(std::string("AvgPoolGrad supports float and double, got ") + tf_type_name(c.in(1).dtype));
  const Dims* dy = image(c, 1, "grad");
  std::vector<int64_t> sizes;
  Dims x{-1, -1, -1, -1};
  const bool known = known_sizes(c, 0, "orig_input_shape", &sizes);
  if (known) {
    if (sizes.size() != 4) c.fail("orig_input_shape must have 4 elements");
    x = Dims(sizes.begin(), sizes.end());
  }
  check_pool(c, x, dy);
  c.out(0).dtype = c.in(1).dtype;
  c.kernel_dtype = c.in(1).dtype;
  c.out(0).shape = TensorShape(Dims(x));
}

// Calls f(output element, input element) for each element of image b's pooled output and
// the first largest element of its window (row-major window order; a later element wins only
// when strictly larger), as TensorFlow's CPU kernels pick it. Windows inside the padding
// alone have none.
template <class T, class F>
void for_window_argmax(const PoolShape& s, const T* xv, int64_t b, std::vector<int64_t>& best, F&& f) {
  best.resize(static_cast<size_t>(s.ch));
  for (int64_t oy = 0; oy < s.oh; ++oy) {
    const int64_t y0 = std::max<int64_t>(0, oy * s.sh - s.pt), y1 = std::min(s.h, oy * s.sh - s.pt + s.kh);
    for (int64_t ox = 0; ox < s.ow; ++ox) {
      const int64_t x0 = std::max<int64_t>(0, ox * s.sw - s.pl), x1 = std::min(s.w, ox * s.sw - s.pl + s.kw);
      if (y0 >= y1 || x0 >= x1) continue;
      std::fill(best.begin(), best.end(), (b * s.h + y0) * s.w + x0);
      for (int64_t iy = y0; iy < y1; ++iy)
        for (int64_t ix = x0; ix < x1; ++ix) {
          const int64_t pixel = (b * s.h + iy) * s.w + ix;
          const T* xp = xv + pixel * s.ch;
          for (int64_t k = 0; k < s.ch; ++k)
            if (xp[k] > xv[best[k] * s.ch + k]) best[k] = pixel;
        }
      const int64_t o = ((b * s.oh + oy) * s.ow + ox) * s.ch;
      for (int64_t k = 0; k < s.ch; ++k) f(o + k, best[k] * s.ch + k);
    }
  }
}

// MaxPoolGrad: each output pixel's gradient goes to its window's first largest element.
// Windows of one image overlap, so threads take images.
template <class T>
struct MaxPoolGradKernel {
  static void run(KernelContext& c) {
    const TensorImpl& x = c.in(0);
    const TensorImpl& dy = c.in(2);
    TensorImpl& dx = c.out(0);
    if (x.dims.size() != 4 || dy.dims.size() != 4 || x.dims[0] != dy.dims[0] || x.dims[3] != dy.dims[3])
      c.fail("orig_input and grad do not agree: " + dims_text(x.dims) + dims_text(dy.dims));
    const PoolShape s = pool_shape(c, x.dims, dy.dims, pool_explicit_paddings(c.attrs, c.op));
    T* out = dx.as<T>();
    std::fill(out, out + dx.num_elements, T(0));
    const T* g = dy.as<T>();
    parallel_for(s.n, 1, [&](int64_t lo, int64_t hi) {
      std::vector<int64_t> best;
      for (int64_t b = lo; b < hi; ++b)
        for_window_argmax(s, x.as<T>(), b, best, [&](int64_t o, int64_t i) { out[i] += g[o]; });
    });
  }
};

// MaxPoolGradGrad(orig_input, orig_output, grad): MaxPoolGrad's gradient with respect to its
// grad, shaped as the pool's output: each output element reads grad at its window's argmax.
template <class T>
struct MaxPoolGradGradKernel {
  static void run(KernelContext& c) {
    const TensorImpl& x = c.in(0);
    const TensorImpl& gg = c.in(2);
    TensorImpl& y = c.out(0);
    if (x.dims.size() != 4 || y.dims.size() != 4 || gg.dims != x.dims || x.dims[0] != y.dims[0] ||
        x.dims[3] != y.dims[3])
      c.fail("orig_input, orig_output and grad do not agree: " + dims_text(x.dims) + dims_text(y.dims) +
             dims_text(gg.dims));
    const PoolShape s = pool_shape(c, x.dims, y.dims, pool_explicit_paddings(c.attrs, c.op));
    T* out = y.as<T>();
    std::fill(out, out + y.num_elements, T(0));
    const T* g = gg.as<T>();
    parallel_for(s.n, 1, [&](int64_t lo, int64_t hi) {
      std::vector<int64_t> best;
      for (int64_t b = lo; b < hi; ++b)
        for_window_argmax(s, x.as<T>(), b, best, [&](int64_t o, int64_t i) { out[o] = g[i]; });
    });
  }
};

// Each output pixel's gradient, times 1 / (the number of its window's elements inside the
// image), is added to each of them (TensorFlow's CPU kernel: a reciprocal, then products).
template <class T>
struct AvgPoolGradKernel {
  static void run(KernelContext& c) {
    const TensorImpl& dy = c.in(1);
    TensorImpl& dx = c.out(0);
    if (dx.dims.size() != 4 || dy.dims.size() != 4 || dx.dims[0] != dy.dims[0] || dx.dims[3] != dy.dims[3])
      c.fail("orig_input_shape and grad do not agree: " + dims_text(dx.dims) + dims_text(dy.dims));
    const PoolShape s = pool_shape(c, dx.dims, dy.dims, pool_explicit_paddings(c.attrs, c.op));
    T* out = dx.as<T>();
    std::fill(out, out + dx.num_elements, T(0));
    const T* g = dy.as<T>();
    parallel_for(s.n, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t b = lo; b < hi; ++b)
        for (int64_t oy = 0; oy < s.oh; ++oy) {
          const int64_t y0 = std::max<int64_t>(0, oy * s.sh - s.pt), y1 = std::min(s.h, oy * s.sh - s.pt + s.kh);
          for (int64_t ox = 0; ox < s.ow; ++ox) {
            const int64_t x0 = std::max<int64_t>(0, ox * s.sw - s.pl), x1 = std::min(s.w, ox * s.sw - s.pl + s.kw);
            if (y0 >= y1 || x0 >= x1) continue;
            const T scale = static_cast<T>(1.0 / static_cast<double>((y1 - y0) * (x1 - x0)));
            const T* gp = g + ((b * s.oh + oy) * s.ow + ox) * s.ch;
            for (int64_t iy = y0; iy < y1; ++iy)
              for (int64_t ix = x0; ix < x1; ++ix) {
                T* dp = out + ((b * s.h + iy) * s.w + ix) * s.ch;
                for (int64_t k = 0; k < s.ch; ++k) dp[k] += gp[k] * scale;
              }
          }
        }
    });
  }
};

// Gradients of the backprop ops themselves (second derivatives of a convolution): each is
// linear in its two tensor operands, so its gradient is the other two ops of the trio.
void backprop_input_grad(GradContext& c, const OpDef& filter_op, const OpDef& forward) {
  if (c.needs[1]) {
    const Tensor sizes = grad::shape(c.b, c.x[1]);
    c.dx[1] = grad::emit1(c.b, filter_op, {&c.dy[0], &sizes, &c.x[2]}, c.attrs);
  }
  if (c.needs[2]) c.dx[2] = grad::emit1(c.b, forward, {&c.dy[0], &c.x[1]}, c.attrs);
}
void backprop_filter_grad(GradContext& c, const OpDef& input_op, const OpDef& forward) {
  if (c.needs[0]) {
    const Tensor sizes = grad::shape(c.b, c.x[0]);
    c.dx[0] = grad::emit1(c.b, input_op, {&sizes, &c.dy[0], &c.x[2]}, c.attrs);
  }
  if (c.needs[2]) c.dx[2] = grad::emit1(c.b, forward, {&c.x[0], &c.dy[0]}, c.attrs);
}
void conv2d_backprop_filter_grad(GradContext& c) { backprop_filter_grad(c, op::Conv2DBackpropInput(), op::Conv2D()); }
void depthwise_backprop_input_grad(GradContext& c) {
  backprop_input_grad(c, op::DepthwiseConv2dNativeBackpropFilter(), op::DepthwiseConv2dNative());
}
void depthwise_backprop_filter_grad(GradContext& c) {
  backprop_filter_grad(c, op::DepthwiseConv2dNativeBackpropInput(), op::DepthwiseConv2dNative());
}
// MaxPoolGrad and MaxPoolGradGrad are linear in grad, each the other's transpose; the pool's
// input and output only choose the argmax (no gradient flows to them).
void max_pool_grad_grad(GradContext& c) {
  if (!c.needs[2]) return;
  if (c.attrs.s(kPoolPadding) == "EXPLICIT")
    throw UnimplementedError("the second derivative of MaxPool with EXPLICIT padding (MaxPoolGradGrad has none)");
  const Attrs attrs{c.attrs[kPoolKsize], c.attrs[kPoolStrides], c.attrs[kPoolPadding], c.attrs[kMaxPoolFormat]};
  c.dx[2] = grad::emit1(c.b, op::MaxPoolGradGrad(), {&c.x[0], &c.x[1], &c.dy[0]}, attrs);
}
void max_pool_grad_grad_grad(GradContext& c) {
  if (!c.needs[2]) return;
  const Attrs attrs{c.attrs[kPoolKsize], c.attrs[kPoolStrides], c.attrs[kPoolPadding], std::vector<int64_t>{},
                    c.attrs[kAvgPoolFormat]};
  c.dx[2] = grad::emit1(c.b, op::MaxPoolGrad(), {&c.x[0], &c.x[1], &c.dy[0]}, attrs);
}
void avg_pool_grad_grad(GradContext& c) {
  if (c.needs[1]) c.dx[1] = grad::emit1(c.b, op::AvgPool(), {&c.dy[0]}, c.attrs);
}

// dx and dW of a forward convolution through its two backprop ops.
void forward_conv_grad(GradContext& c, const OpDef& input_op, const OpDef& filter_op) {
  if (c.needs[0]) {
    const Tensor sizes = grad::shape(c.b, c.x[0]);
    c.dx[0] = grad::emit1(c.b, input_op, {&sizes, &c.x[1], &c.dy[0]}, c.attrs);
  }
  if (c.needs[1]) {
    const Tensor sizes = grad::shape(c.b, c.x[1]);
    c.dx[1] = grad::emit1(c.b, filter_op, {&c.x[0], &sizes, &c.dy[0]}, c.attrs);
  }
}

}  // namespace

namespace conv {
void conv2d_grad(GradContext& c) { forward_conv_grad(c, op::Conv2DBackpropInput(), op::Conv2DBackpropFilter()); }
void depthwise_conv2d_grad(GradContext& c) {
  forward_conv_grad(c, op::DepthwiseConv2dNativeBackpropInput(), op::DepthwiseConv2dNativeBackpropFilter());
}
void conv2d_backprop_input_grad(GradContext& c) { backprop_input_grad(c, op::Conv2DBackpropFilter(), op::Conv2D()); }
void max_pool_grad(GradContext& c) {
  c.dx[0] = grad::emit1(c.b, op::MaxPoolGrad(), {&c.x[0], &c.y[0], &c.dy[0]}, c.attrs);
}
void avg_pool_grad(GradContext& c) {
  const Tensor sizes = grad::shape(c.b, c.x[0]);
  c.dx[0] = grad::emit1(c.b, op::AvgPoolGrad(), {&sizes, &c.dy[0]}, c.attrs);
}
}  // namespace conv

#define KILN_CONV_ATTRS                                                                     \
  int_list_attr("strides"), string_attr("padding"), int_list_attr("explicit_paddings", {}), \
      string_attr("data_format", "NHWC"), int_list_attr("dilations", {1, 1, 1, 1})

const OpDef& op::Conv2DBackpropInput() {
  static const OpDef def = {.name = "Conv2DBackpropInput",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"input_sizes", "filter", "out_backprop"},
                            .traits = kPure | kTfjs,
                            .attr_specs = {KILN_CONV_ATTRS, bool_attr("use_cudnn_on_gpu", true)},
                            .infer = infer_backprop_input,
                            .kernels = kernels_for<Conv2DBackpropInputKernel, KILN_FLOATS>(),
                            .type_attr_input = 1,
                            .grad = &conv::conv2d_backprop_input_grad};
  return def;
}
const OpDef& op::Conv2DBackpropFilter() {
  static const OpDef def = {.name = "Conv2DBackpropFilter",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"input", "filter_sizes", "out_backprop"},
                            .traits = kPure,
                            .attr_specs = {KILN_CONV_ATTRS, bool_attr("use_cudnn_on_gpu", true)},
                            .infer = infer_backprop_filter,
                            .kernels = kernels_for<Conv2DBackpropFilterKernel, KILN_FLOATS>(),
                            .grad = &conv2d_backprop_filter_grad};
  return def;
}
const OpDef& op::DepthwiseConv2dNativeBackpropInput() {
  static const OpDef def = {.name = "DepthwiseConv2dNativeBackpropInput",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"input_sizes", "filter", "out_backprop"},
                            .traits = kPure,
                            .attr_specs = {KILN_CONV_ATTRS},
                            .infer = infer_backprop_input,
                            .kernels = kernels_for<DepthwiseBackpropInputKernel, KILN_FLOATS>(),
                            .type_attr_input = 1,
                            .grad = &depthwise_backprop_input_grad};
  return def;
}
const OpDef& op::DepthwiseConv2dNativeBackpropFilter() {
  static const OpDef def = {.name = "DepthwiseConv2dNativeBackpropFilter",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"input", "filter_sizes", "out_backprop"},
                            .traits = kPure,
                            .attr_specs = {KILN_CONV_ATTRS},
                            .infer = infer_backprop_filter,
                            .kernels = kernels_for<DepthwiseBackpropFilterKernel, KILN_FLOATS>(),
                            .grad = &depthwise_backprop_filter_grad};
  return def;
}
const OpDef& op::MaxPoolGrad() {
  static const OpDef def = {.name = "MaxPoolGrad",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"orig_input", "orig_output", "grad"},
                            .traits = kPure,
                            .attr_specs = {int_list_attr("ksize"), int_list_attr("strides"), string_attr("padding"),
                                           int_list_attr("explicit_paddings", {}), string_attr("data_format", "NHWC")},
                            .infer = infer_max_pool_grad,
                            .kernels = kernels_for<MaxPoolGradKernel, KILN_NUMERIC>(),
                            .grad = &max_pool_grad_grad};
  return def;
}
const OpDef& op::MaxPoolGradGrad() {
  static const OpDef def = {.name = "MaxPoolGradGrad",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"orig_input", "orig_output", "grad"},
                            .traits = kPure,
                            .attr_specs = {int_list_attr("ksize"), int_list_attr("strides"), string_attr("padding"),
                                           string_attr("data_format", "NHWC")},
                            .infer = infer_max_pool_grad_grad,
                            .kernels = kernels_for<MaxPoolGradGradKernel, KILN_NUMERIC>(),
                            .grad = &max_pool_grad_grad_grad};
  return def;
}
const OpDef& op::AvgPoolGrad() {
  static const OpDef def = {.name = "AvgPoolGrad",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"orig_input_shape", "grad"},
                            .traits = kPure,
                            .attr_specs = {int_list_attr("ksize"), int_list_attr("strides"), string_attr("padding"),
                                           string_attr("data_format", "NHWC")},
                            .infer = infer_avg_pool_grad,
                            .kernels = kernels_for<AvgPoolGradKernel, KILN_FLOATS>(),
                            .type_attr_input = 1,
                            .grad = &avg_pool_grad_grad};
  return def;
}

}  // namespace kiln::ops
