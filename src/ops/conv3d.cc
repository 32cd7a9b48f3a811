// 3-D convolution and pooling over NDHWC volumes (Keras's Conv3D, MaxPooling3D and
// AveragePooling3D layers): Conv3D, MaxPool3D, AvgPool3D, and their backward ops, which are
// also their gradients: Conv3DBackpropInputV2, Conv3DBackpropFilterV2, MaxPool3DGrad,
// AvgPool3DGrad. TensorFlow's attrs (strides, padding SAME/VALID, dilations, ksize) and output
// sizes. The convolution is im2col plus one GEMM per block of output voxels; its input
// gradient col2im of dy * W^T, its filter gradient im2col(x)^T * dy. The pools take the max
// or mean of each window's voxels inside the volume.
#include <algorithm>
#include <limits>

#include "core/parallel.h"
#include "kernels/gemm.h"
#include "ops/conv_window.h"
#include "ops/grad_util.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

int conv_attr(const char* name) {
  return attr_index(
      {{&op::Conv3D(), name}, {&op::Conv3DBackpropInputV2(), name}, {&op::Conv3DBackpropFilterV2(), name}});
}
const int kStrides = conv_attr("strides");
const int kPadding = conv_attr("padding");
const int kFormat = conv_attr("data_format");
const int kDilations = conv_attr("dilations");
int pool_attr(const char* name) {
  return attr_index(
      {{&op::MaxPool3D(), name}, {&op::AvgPool3D(), name}, {&op::MaxPool3DGrad(), name}, {&op::AvgPool3DGrad(), name}});
}
const int kKsize = pool_attr("ksize");
const int kPoolStrides = pool_attr("strides");
const int kPoolPadding = pool_attr("padding");
const int kPoolFormat = pool_attr("data_format");

// A 5-value attr of positive values.
const std::vector<int64_t>& five(const InferContext& c, int k, const char* what) {
  const auto& v = c.attrs.list(k);
  if (v.size() != 5) c.fail(std::string(what) + " field must specify 5 dimensions, got " + std::to_string(v.size()));
  for (int64_t s : v)
    if (s < 1) c.fail(std::string(what) + " must be positive, got " + std::to_string(s));
  return v;
}

void check_common(const InferContext& c, int format, int padding) {
  require_string_in(c, "padding", c.attrs.s(padding), {"SAME", "VALID"});
  const std::string& f = c.attrs.s(format);
  if (!f.empty() && f != "NDHWC")
    throw UnimplementedError(std::string(c.op.name) + " with data_format " + f +
                             " is not supported by kiln (only NDHWC)");
}

const Dims* volume(const InferContext& c, int i, const char* what) {
  if (c.in(i).unknown_rank) return nullptr;
  const Dims& d = *c.in(i).dims;
  if (d.size() != 5) c.fail(std::string(what) + " must be 5-dimensional" + dims_text(d));
  return &d;
}
Dims dims_or_unknown(const Dims* d) { return conv::dims_or_unknown(d, 5); }

// One window over a volume: the input [n, d, h, w, c]; per spatial dim (z, y, x) the window
// size, stride, dilation, output size and padding before.
struct Geometry {
  int64_t n = 0, c = 0;
  int64_t in[3] = {}, k[3] = {}, s[3] = {}, dil[3] = {}, out[3] = {}, pad[3] = {};
};
Geometry geometry(const Dims& x, const int64_t* k, const std::vector<int64_t>& strides,
                  const std::vector<int64_t>* dilations, const Dims& out, const std::string& padding) {
  Geometry g;
  g.n = x[0];
  g.c = x[4];
  for (int d = 0; d < 3; ++d) {
    g.in[d] = x[d + 1];
    g.k[d] = k[d];
    g.s[d] = strides[d + 1];
    g.dil[d] = dilations ? (*dilations)[d + 1] : 1;
    g.out[d] = out[d + 1];
    g.pad[d] = conv::pad_before(g.in[d], (g.k[d] - 1) * g.dil[d] + 1, g.s[d], g.out[d], padding, 0);
  }
  return g;
}
int64_t voxels(const int64_t* v) { return v[0] * v[1] * v[2]; }

// The output dims a window gives (TensorFlow's sizes), -1 where unknown.
Dims window_dims(const InferContext& c, const Dims& x, const int64_t* k, const std::vector<int64_t>& strides,
                 const std::vector<int64_t>* dilations, int64_t depth, const std::string& padding) {
  Dims out{x[0], -1, -1, -1, depth};
  for (int d = 0; d < 3; ++d)
    if (k[d] >= 0)
      out[d + 1] =
          conv::window(c, x[d + 1], k[d], dilations ? (*dilations)[d + 1] : 1, strides[d + 1], padding, 0, 0).out;
  return out;
}

// ---- convolution --------------------------------------------------------------------------

void check_conv_attrs(InferContext& c) {
  const auto& strides = five(c, kStrides, "strides");
  const auto& dilations = five(c, kDilations, "dilations");
  check_common(c, kFormat, kPadding);
  if (strides[0] != 1 || strides[4] != 1)
    throw UnimplementedError("Current implementation does not yet support strides in the batch and depth dimensions.");
  if (dilations[0] != 1 || dilations[4] != 1)
    throw UnimplementedError(
        "Current implementation does not yet support dilations in the batch and depth dimensions.");
}

// Checks that input x, filter f and output y agree (depths; y's sizes are the window's).
void check_conv_dims(InferContext& c, const Dims& x, const Dims& f, const Dims& y) {
  if (x[4] >= 0 && f[3] >= 0 && x[4] != f[3])
    c.fail("input and filter must have the same depth: " + std::to_string(x[4]) + " vs " + std::to_string(f[3]));
  if (f[4] >= 0 && y[4] >= 0 && f[4] != y[4])
    c.fail("filter and out_backprop must have the same out_depth: " + std::to_string(f[4]) + " vs " +
           std::to_string(y[4]));
  if (x[0] >= 0 && y[0] >= 0 && x[0] != y[0]) c.fail("input and out_backprop must have the same batch size");
  const Dims want =
      window_dims(c, x, f.data(), c.attrs.list(kStrides), &c.attrs.list(kDilations), f[4], c.attrs.s(kPadding));
  for (int d = 1; d <= 3; ++d)
    if (want[d] >= 0 && y[d] >= 0 && want[d] != y[d])
      c.fail(std::string(c.op.name) + ": Size of out_backprop doesn't match computed: actual = " +
             std::to_string(y[d]) + ", computed = " + std::to_string(want[d]));
}

// Conv3D(input [N,D,H,W,C], filter [KD,KH,KW,C,OC]).
void infer_conv3d(InferContext& c) {
  conv::require_float_pair(c, 0, 1);
  check_conv_attrs(c);
  const Dims x = dims_or_unknown(volume(c, 0, "input"));
  const Dims f = dims_or_unknown(volume(c, 1, "filter"));
  if (std::find(f.begin(), f.end(), 0) != f.end())
    c.fail("filter must not have zero elements (i.e. all dimensions must be non-zero)");
  if (x[4] >= 0 && f[3] >= 0 && x[4] != f[3])
    c.fail("input and filter must have the same depth: " + std::to_string(x[4]) + " vs " + std::to_string(f[3]));
  c.out(0).shape = TensorShape(
      window_dims(c, x, f.data(), c.attrs.list(kStrides), &c.attrs.list(kDilations), f[4], c.attrs.s(kPadding)));
}

// The sizes input of a backprop op (input_sizes / filter_sizes, orig_input_shape): 5
// non-negative values when known.
bool known_sizes(InferContext& c, int i, const char* what, Dims* out) {
  std::vector<int64_t> v;
  if (!conv::known_sizes(c, i, what, &v)) return false;
  if (v.size() != 5) c.fail(std::string(what) + " must have 5 elements, got " + std::to_string(v.size()));
  *out = Dims(v.begin(), v.end());
  return true;
}

// Conv3DBackpropInputV2(input_sizes, filter, out_backprop).
void infer_backprop_input(InferContext& c) {
  conv::require_float_pair(c, 1, 2);
  check_conv_attrs(c);
  const Dims f = dims_or_unknown(volume(c, 1, "filter"));
  const Dims y = dims_or_unknown(volume(c, 2, "out_backprop"));
  Dims x;
  if (!known_sizes(c, 0, "input_sizes", &x)) {
    c.out(0).shape = TensorShape::unknown_dims(5);
    return;
  }
  check_conv_dims(c, x, f, y);
  c.out(0).shape = TensorShape(x);
}

// Conv3DBackpropFilterV2(input, filter_sizes, out_backprop).
void infer_backprop_filter(InferContext& c) {
  conv::require_float_pair(c, 0, 2);
  check_conv_attrs(c);
  const Dims x = dims_or_unknown(volume(c, 0, "input"));
  const Dims y = dims_or_unknown(volume(c, 2, "out_backprop"));
  Dims f;
  if (!known_sizes(c, 1, "filter_sizes", &f)) {
    c.out(0).shape = TensorShape::unknown_dims(5);
    return;
  }
  check_conv_dims(c, x, f, y);
  c.out(0).shape = TensorShape(f);
}

// The kernels' own check of what a graph's shape function may not have seen.
Geometry conv_geometry(const KernelContext& c, const Dims& x, const Dims& f, const Dims& y) {
  if (x.size() != 5 || f.size() != 5 || y.size() != 5 || x[4] != f[3] || f[4] != y[4] || x[0] != y[0])
    c.fail("input, filter and output do not agree: " + dims_text(x) + dims_text(f) + dims_text(y));
  return geometry(x, f.data(), c.attrs.list(kStrides), &c.attrs.list(kDilations), y, c.attrs.s(kPadding));
}

constexpr int64_t kBlockRows = 512;

// Rows [r0, r1) of image b's im2col matrix ([KD, KH, KW, C] per output voxel; zeros outside).
template <class T>
void im2col(const Geometry& g, const T* image, int64_t r0, int64_t r1, T* cols) {
  const int64_t patch = voxels(g.k) * g.c;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t oz = r / (g.out[1] * g.out[2]), oy = r / g.out[2] % g.out[1], ox = r % g.out[2];
    T* dst = cols + (r - r0) * patch;
    for (int64_t kz = 0; kz < g.k[0]; ++kz) {
      const int64_t iz = oz * g.s[0] - g.pad[0] + kz * g.dil[0];
      for (int64_t ky = 0; ky < g.k[1]; ++ky) {
        const int64_t iy = oy * g.s[1] - g.pad[1] + ky * g.dil[1];
        for (int64_t kx = 0; kx < g.k[2]; ++kx, dst += g.c) {
          const int64_t ix = ox * g.s[2] - g.pad[2] + kx * g.dil[2];
          if (iz < 0 || iz >= g.in[0] || iy < 0 || iy >= g.in[1] || ix < 0 || ix >= g.in[2])
            std::fill(dst, dst + g.c, T(0));
          else
            std::copy_n(image + ((iz * g.in[1] + iy) * g.in[2] + ix) * g.c, g.c, dst);
        }
      }
    }
  }
}

// Adds rows [r0, r1) of cols back into image b: the transpose of im2col.
template <class T>
void col2im(const Geometry& g, const T* cols, int64_t r0, int64_t r1, T* image) {
  const int64_t patch = voxels(g.k) * g.c;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t oz = r / (g.out[1] * g.out[2]), oy = r / g.out[2] % g.out[1], ox = r % g.out[2];
    const T* src = cols + (r - r0) * patch;
    for (int64_t kz = 0; kz < g.k[0]; ++kz) {
      const int64_t iz = oz * g.s[0] - g.pad[0] + kz * g.dil[0];
      for (int64_t ky = 0; ky < g.k[1]; ++ky) {
        const int64_t iy = oy * g.s[1] - g.pad[1] + ky * g.dil[1];
        for (int64_t kx = 0; kx < g.k[2]; ++kx, src += g.c) {
          const int64_t ix = ox * g.s[2] - g.pad[2] + kx * g.dil[2];
          if (iz < 0 || iz >= g.in[0] || iy < 0 || iy >= g.in[1] || ix < 0 || ix >= g.in[2]) continue;
          T* dst = image + ((iz * g.in[1] + iy) * g.in[2] + ix) * g.c;
          for (int64_t ch = 0; ch < g.c; ++ch) dst[ch] += src[ch];
        }
      }
    }
  }
}

template <class T>
struct Conv3DKernel {
  static void run(KernelContext& c) {
    const TensorImpl& x = c.in(0);
    const TensorImpl& f = c.in(1);
    TensorImpl& y = c.out(0);
    const Geometry g = conv_geometry(c, x.dims, f.dims, y.dims);
    T* out = y.as<T>();
    const int64_t oc = f.dims[4], patch = voxels(g.k) * g.c, rows = voxels(g.out);
    if (y.num_elements == 0) return;
    if (patch == 0) {
      std::fill(out, out + y.num_elements, T(0));
      return;
    }
    const int64_t in_volume = voxels(g.in) * g.c;
    parallel_for(g.n * ((rows + kBlockRows - 1) / kBlockRows), 1, [&](int64_t lo, int64_t hi) {
      std::vector<T> cols(static_cast<size_t>(std::min(rows, kBlockRows) * patch));
      for (int64_t job = lo; job < hi; ++job) {
        const int64_t blocks = (rows + kBlockRows - 1) / kBlockRows;
        const int64_t b = job / blocks, r0 = job % blocks * kBlockRows, r1 = std::min(rows, r0 + kBlockRows);
        im2col(g, x.as<T>() + b * in_volume, r0, r1, cols.data());
        kernels::gemm<T>(false, false, r1 - r0, oc, patch, cols.data(), f.as<T>(), out + (b * rows + r0) * oc);
      }
    });
  }
};

template <class T>
struct BackpropInputKernel {
  static void run(KernelContext& c) {
    const TensorImpl& f = c.in(1);
    const TensorImpl& dy = c.in(2);
    TensorImpl& dx = c.out(0);
    const Geometry g = conv_geometry(c, dx.dims, f.dims, dy.dims);
    T* out = dx.as<T>();
    std::fill(out, out + dx.num_elements, T(0));
    const int64_t oc = f.dims[4], patch = voxels(g.k) * g.c, rows = voxels(g.out);
    if (patch == 0 || rows == 0 || oc == 0) return;
    const int64_t in_volume = voxels(g.in) * g.c;
    parallel_for(g.n, 1, [&](int64_t lo, int64_t hi) {  // images are independent; voxels of one share inputs
      std::vector<T> cols(static_cast<size_t>(std::min(rows, kBlockRows) * patch));
      for (int64_t b = lo; b < hi; ++b)
        for (int64_t r0 = 0; r0 < rows; r0 += kBlockRows) {
          const int64_t r1 = std::min(rows, r0 + kBlockRows);
          kernels::gemm<T>(false, true, r1 - r0, patch, oc, dy.as<T>() + (b * rows + r0) * oc, f.as<T>(), cols.data());
          col2im(g, cols.data(), r0, r1, out + b * in_volume);
        }
    });
  }
};

template <class T>
struct BackpropFilterKernel {
  static void run(KernelContext& c) {
    const TensorImpl& x = c.in(0);
    const TensorImpl& dy = c.in(2);
    TensorImpl& dw = c.out(0);
    const Geometry g = conv_geometry(c, x.dims, dw.dims, dy.dims);
    T* out = dw.as<T>();
    std::fill(out, out + dw.num_elements, T(0));
    const int64_t oc = dw.dims[4], patch = voxels(g.k) * g.c, rows = voxels(g.out);
    if (patch == 0 || rows == 0 || oc == 0) return;
    const int64_t in_volume = voxels(g.in) * g.c;
    std::vector<T> cols(static_cast<size_t>(std::min(rows, kBlockRows) * patch)), part(static_cast<size_t>(patch * oc));
    for (int64_t b = 0; b < g.n; ++b)
      for (int64_t r0 = 0; r0 < rows; r0 += kBlockRows) {
        const int64_t r1 = std::min(rows, r0 + kBlockRows);
        im2col(g, x.as<T>() + b * in_volume, r0, r1, cols.data());
        kernels::gemm<T>(true, false, patch, oc, r1 - r0, cols.data(), dy.as<T>() + (b * rows + r0) * oc, part.data());
        for (int64_t i = 0; i < patch * oc; ++i) out[i] += part[i];
      }
  }
};

// ---- pooling ------------------------------------------------------------------------------

void check_pool_attrs(InferContext& c) {
  const auto& ksize = five(c, kKsize, "ksize");
  const auto& strides = five(c, kPoolStrides, "strides");
  check_common(c, kPoolFormat, kPoolPadding);
  if (ksize[0] != 1 || strides[0] != 1 || ksize[4] != 1 || strides[4] != 1)
    throw UnimplementedError("Pooling is not yet supported on the batch nor depth dimensions.");
}
Dims pool_dims(InferContext& c, const Dims& x) {
  const auto& ksize = c.attrs.list(kKsize);
  return window_dims(c, x, ksize.data() + 1, c.attrs.list(kPoolStrides), nullptr, x[4], c.attrs.s(kPoolPadding));
}

// MaxPool3D / AvgPool3D(input).
void infer_pool3d(InferContext& c) {
  if (!is_floating(c.in(0).dtype))
    c.fail(std::string(c.op.name) + " supports floating inputs, got " + tf_type_name(c.in(0).dtype));
  check_pool_attrs(c);
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  c.out(0).shape = TensorShape(pool_dims(c, dims_or_unknown(volume(c, 0, "input"))));
}

// grad must have the pool's output shape for input dims x.
void check_pool_grad(InferContext& c, const Dims& x, const Dims& grad) {
  const Dims want = pool_dims(c, x);
  for (int d = 0; d < 5; ++d)
    if (want[d] >= 0 && grad[d] >= 0 && want[d] != grad[d])
      c.fail("Expected grad shape to be " + dims_text(want) + ", but got " + dims_text(grad));
}

// MaxPool3DGrad(orig_input, orig_output, grad).
void infer_max_pool3d_grad(InferContext& c) {
  require_same_dtypes(c, 0, 1);
  if (c.in(2).dtype != c.in(0).dtype || !is_floating(c.in(0).dtype))
    c.fail(std::string("MaxPool3DGrad supports floating inputs of one dtype, got ") + tf_type_name(c.in(0).dtype) +
           " and " + tf_type_name(c.in(2).dtype));
  check_pool_attrs(c);
  const Dims x = dims_or_unknown(volume(c, 0, "orig_input"));
  volume(c, 1, "orig_output");
  check_pool_grad(c, x, dims_or_unknown(volume(c, 2, "grad")));
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  c.out(0).shape = TensorShape(x);
}

// AvgPool3DGrad(orig_input_shape, grad).
void infer_avg_pool3d_grad(InferContext& c) {
  if (!is_floating(c.in(1).dtype))
    c.fail(std::string("AvgPool3DGrad supports floating inputs, got ") + tf_type_name(c.in(1).dtype));
  check_pool_attrs(c);
  const Dims grad = dims_or_unknown(volume(c, 1, "grad"));
  c.out(0).dtype = c.in(1).dtype;
  c.kernel_dtype = c.in(1).dtype;
  Dims x;
  if (!known_sizes(c, 0, "orig_input_shape", &x)) {
    c.out(0).shape = TensorShape::unknown_dims(5);
    return;
  }
  check_pool_grad(c, x, grad);
  c.out(0).shape = TensorShape(x);
}

Geometry pool_geometry(const KernelContext& c, const Dims& x, const Dims& y) {
  if (x.size() != 5 || y.size() != 5 || x[0] != y[0] || x[4] != y[4])
    c.fail("input and output do not agree: " + dims_text(x) + dims_text(y));
  return geometry(x, c.attrs.list(kKsize).data() + 1, c.attrs.list(kPoolStrides), nullptr, y, c.attrs.s(kPoolPadding));
}

// Calls f(output voxel index, window's [lo, hi) per spatial dim) for each output voxel of image b.
template <class F>
void for_windows(const Geometry& g, F&& f) {
  int64_t o = 0;
  for (int64_t oz = 0; oz < g.out[0]; ++oz)
    for (int64_t oy = 0; oy < g.out[1]; ++oy)
      for (int64_t ox = 0; ox < g.out[2]; ++ox, ++o) {
        const int64_t at[3] = {oz, oy, ox};
        int64_t lo[3], hi[3];
        for (int d = 0; d < 3; ++d) {
          lo[d] = std::max<int64_t>(0, at[d] * g.s[d] - g.pad[d]);
          hi[d] = std::min(g.in[d], at[d] * g.s[d] - g.pad[d] + g.k[d]);
        }
        f(o, lo, hi);
      }
}

// Runs per_image(b) over images on the pool's threads (windows of one image overlap).
template <class F>
void per_image(const Geometry& g, F&& f) {
  parallel_for(g.n, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) f(b);
  });
}

template <bool kMax>
struct Pool3D {
  template <class T>
  struct K {
    static void run(KernelContext& c) {
      const Geometry g = pool_geometry(c, c.in(0).dims, c.out(0).dims);
      const T* x = c.in(0).as<T>();
      T* y = c.out(0).as<T>();
      const int64_t in_volume = voxels(g.in) * g.c, out_volume = voxels(g.out) * g.c;
      per_image(g, [&](int64_t b) {
        for_windows(g, [&](int64_t o, const int64_t* lo, const int64_t* hi) {
          T* dst = y + b * out_volume + o * g.c;
          for (int64_t ch = 0; ch < g.c; ++ch) dst[ch] = kMax ? std::numeric_limits<T>::lowest() : T(0);
          for (int64_t z = lo[0]; z < hi[0]; ++z)
            for (int64_t yy = lo[1]; yy < hi[1]; ++yy)
              for (int64_t xx = lo[2]; xx < hi[2]; ++xx) {
                const T* src = x + b * in_volume + ((z * g.in[1] + yy) * g.in[2] + xx) * g.c;
                for (int64_t ch = 0; ch < g.c; ++ch) {
                  if constexpr (kMax) {
                    if (src[ch] > dst[ch]) dst[ch] = src[ch];  // NaN never wins, as in TensorFlow
                  } else {
                    dst[ch] += src[ch];
                  }
                }
              }
          if constexpr (!kMax) {
            const int64_t count = std::max<int64_t>(0, (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]));
            for (int64_t ch = 0; ch < g.c; ++ch) dst[ch] = count ? dst[ch] / static_cast<T>(count) : T(0);
          }
        });
      });
    }
  };
};

// Each window's gradient to its first largest voxel (later ones win only when strictly larger).
template <class T>
struct MaxPool3DGradKernel {
  static void run(KernelContext& c) {
    const TensorImpl& x = c.in(0);
    const TensorImpl& dy = c.in(2);
    TensorImpl& dx = c.out(0);
    const Geometry g = pool_geometry(c, x.dims, dy.dims);
    T* out = dx.as<T>();
    std::fill(out, out + dx.num_elements, T(0));
    const int64_t in_volume = voxels(g.in) * g.c, out_volume = voxels(g.out) * g.c;
    per_image(g, [&](int64_t b) {
      const T* xv = x.as<T>() + b * in_volume;
      std::vector<int64_t> best(static_cast<size_t>(g.c));
      for_windows(g, [&](int64_t o, const int64_t* lo, const int64_t* hi) {
        if (lo[0] >= hi[0] || lo[1] >= hi[1] || lo[2] >= hi[2]) return;
        std::fill(best.begin(), best.end(), (lo[0] * g.in[1] + lo[1]) * g.in[2] + lo[2]);
        for (int64_t z = lo[0]; z < hi[0]; ++z)
          for (int64_t yy = lo[1]; yy < hi[1]; ++yy)
            for (int64_t xx = lo[2]; xx < hi[2]; ++xx) {
              const int64_t voxel = (z * g.in[1] + yy) * g.in[2] + xx;
              for (int64_t ch = 0; ch < g.c; ++ch)
                if (xv[voxel * g.c + ch] > xv[best[ch] * g.c + ch]) best[ch] = voxel;
            }
        const T* gp = dy.as<T>() + b * out_volume + o * g.c;
        for (int64_t ch = 0; ch < g.c; ++ch) out[b * in_volume + best[ch] * g.c + ch] += gp[ch];
      });
    });
  }
};

// Each window's gradient divided among its voxels inside the volume.
template <class T>
struct AvgPool3DGradKernel {
  static void run(KernelContext& c) {
    const TensorImpl& dy = c.in(1);
    TensorImpl& dx = c.out(0);
    const Geometry g = pool_geometry(c, dx.dims, dy.dims);
    T* out = dx.as<T>();
    std::fill(out, out + dx.num_elements, T(0));
    const int64_t in_volume = voxels(g.in) * g.c, out_volume = voxels(g.out) * g.c;
    per_image(g, [&](int64_t b) {
      for_windows(g, [&](int64_t o, const int64_t* lo, const int64_t* hi) {
        const int64_t count = (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
        if (lo[0] >= hi[0] || lo[1] >= hi[1] || lo[2] >= hi[2]) return;
        const T* gp = dy.as<T>() + b * out_volume + o * g.c;
        for (int64_t z = lo[0]; z < hi[0]; ++z)
          for (int64_t yy = lo[1]; yy < hi[1]; ++yy)
            for (int64_t xx = lo[2]; xx < hi[2]; ++xx) {
              T* dp = out + b * in_volume + ((z * g.in[1] + yy) * g.in[2] + xx) * g.c;
              for (int64_t ch = 0; ch < g.c; ++ch) dp[ch] += gp[ch] / static_cast<T>(count);
            }
      });
    });
  }
};

// ---- gradients ----------------------------------------------------------------------------

void conv3d_grad(GradContext& c) {
  if (c.needs[0]) {
    const Tensor sizes = grad::shape(c.b, c.x[0]);
    c.dx[0] = grad::emit1(c.b, op::Conv3DBackpropInputV2(), {&sizes, &c.x[1], &c.dy[0]}, c.attrs);
  }
  if (c.needs[1]) {
    const Tensor sizes = grad::shape(c.b, c.x[1]);
    c.dx[1] = grad::emit1(c.b, op::Conv3DBackpropFilterV2(), {&c.x[0], &sizes, &c.dy[0]}, c.attrs);
  }
}
void backprop_input_grad(GradContext& c) {  // linear in filter and out_backprop
  if (c.needs[1]) {
    const Tensor sizes = grad::shape(c.b, c.x[1]);
    c.dx[1] = grad::emit1(c.b, op::Conv3DBackpropFilterV2(), {&c.dy[0], &sizes, &c.x[2]}, c.attrs);
  }
  if (c.needs[2]) c.dx[2] = grad::emit1(c.b, op::Conv3D(), {&c.dy[0], &c.x[1]}, c.attrs);
}
void backprop_filter_grad(GradContext& c) {  // linear in input and out_backprop
  if (c.needs[0]) {
    const Tensor sizes = grad::shape(c.b, c.x[0]);
    c.dx[0] = grad::emit1(c.b, op::Conv3DBackpropInputV2(), {&sizes, &c.dy[0], &c.x[2]}, c.attrs);
  }
  if (c.needs[2]) c.dx[2] = grad::emit1(c.b, op::Conv3D(), {&c.x[0], &c.dy[0]}, c.attrs);
}
void max_pool3d_grad(GradContext& c) {
  c.dx[0] = grad::emit1(c.b, op::MaxPool3DGrad(), {&c.x[0], &c.y[0], &c.dy[0]}, c.attrs);
}
void avg_pool3d_grad(GradContext& c) {
  const Tensor sizes = grad::shape(c.b, c.x[0]);
  c.dx[0] = grad::emit1(c.b, op::AvgPool3DGrad(), {&sizes, &c.dy[0]}, c.attrs);
}
void avg_pool3d_grad_grad(GradContext& c) {
  if (c.needs[1]) c.dx[1] = grad::emit1(c.b, op::AvgPool3D(), {&c.dy[0]}, c.attrs);
}

#define KILN_CONV3D_ATTRS                                                                \
  int_list_attr("strides"), string_attr("padding"), string_attr("data_format", "NDHWC"), \
      int_list_attr("dilations", {1, 1, 1, 1, 1})
#define KILN_POOL3D_ATTRS \
  int_list_attr("ksize"), int_list_attr("strides"), string_attr("padding"), string_attr("data_format", "NDHWC")

}  // namespace

const OpDef& op::Conv3D() {
  static const OpDef def = {.name = "Conv3D",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"input", "filter"},
                            .traits = kPure,
                            .attr_specs = {KILN_CONV3D_ATTRS},
                            .infer = infer_conv3d,
                            .kernels = kernels_for<Conv3DKernel, KILN_FLOATS>(),
                            .grad = &conv3d_grad};
  return def;
}
const OpDef& op::Conv3DBackpropInputV2() {
  static const OpDef def = {.name = "Conv3DBackpropInputV2",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"input_sizes", "filter", "out_backprop"},
                            .traits = kPure,
                            .attr_specs = {KILN_CONV3D_ATTRS},
                            .infer = infer_backprop_input,
                            .kernels = kernels_for<BackpropInputKernel, KILN_FLOATS>(),
                            .type_attr_input = 1,
                            .index_type_attrs = {{"Tshape", 0}},
                            .grad = &backprop_input_grad};
  return def;
}
const OpDef& op::Conv3DBackpropFilterV2() {
  static const OpDef def = {.name = "Conv3DBackpropFilterV2",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"input", "filter_sizes", "out_backprop"},
                            .traits = kPure,
                            .attr_specs = {KILN_CONV3D_ATTRS},
                            .infer = infer_backprop_filter,
                            .kernels = kernels_for<BackpropFilterKernel, KILN_FLOATS>(),
                            .grad = &backprop_filter_grad};
  return def;
}
const OpDef& op::MaxPool3D() {
  static const OpDef def = {.name = "MaxPool3D",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"input"},
                            .traits = kPure,
                            .attr_specs = {KILN_POOL3D_ATTRS},
                            .infer = infer_pool3d,
                            .kernels = kernels_for<Pool3D<true>::K, float>(),
                            .grad = &max_pool3d_grad};
  return def;
}
const OpDef& op::AvgPool3D() {
  static const OpDef def = {.name = "AvgPool3D",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"input"},
                            .traits = kPure,
                            .attr_specs = {KILN_POOL3D_ATTRS},
                            .infer = infer_pool3d,
                            .kernels = kernels_for<Pool3D<false>::K, KILN_FLOATS>(),
                            .grad = &avg_pool3d_grad};
  return def;
}
const OpDef& op::MaxPool3DGrad() {
  static const OpDef def = {.name = "MaxPool3DGrad",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"orig_input", "orig_output", "grad"},
                            .traits = kPure,
                            .attr_specs = {KILN_POOL3D_ATTRS},
                            .infer = infer_max_pool3d_grad,
                            .kernels = kernels_for<MaxPool3DGradKernel, float>(),
                            .index_type_attrs = {{"TInput", 0}},
                            .grad = nullptr};  // TensorFlow's MaxPool3DGradGrad is not in kiln yet
  return def;
}
const OpDef& op::AvgPool3DGrad() {
  static const OpDef def = {.name = "AvgPool3DGrad",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"orig_input_shape", "grad"},
                            .traits = kPure,
                            .attr_specs = {KILN_POOL3D_ATTRS},
                            .infer = infer_avg_pool3d_grad,
                            .kernels = kernels_for<AvgPool3DGradKernel, KILN_FLOATS>(),
                            .type_attr_input = 1,
                            .grad = &avg_pool3d_grad_grad};
  return def;
}

}  // namespace kiln::ops
