// Image resizing over NHWC images, as TensorFlow's legacy resize ops compute it:
// ResizeBilinear, ResizeBicubic and ResizeArea (float32 results), ResizeNearestNeighbor (the input's
// dtype). attrs align_corners and half_pixel_centers choose how output pixels map to input
// coordinates. Their backward ops (Resize*Grad) are their gradients.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "core/parallel.h"
#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

int resize_attr(const char* name) {
  return attr_index(
      {{&op::ResizeBilinear(), name}, {&op::ResizeNearestNeighbor(), name}, {&op::ResizeBicubic(), name}});
}
const int kAlignCorners = attr_index({{&op::ResizeBilinear(), "align_corners"}, {&op::ResizeArea(), "align_corners"}});
const int kHalfPixel = resize_attr("half_pixel_centers");

// ResizeArea has no half_pixel_centers attr (TensorFlow's).
bool half_pixel(const OpDef& op, const Attrs& attrs) { return &op != &op::ResizeArea() && attrs.b(kHalfPixel); }

constexpr int64_t kParallelPixels = 16 * 1024;

void infer_resize(InferContext& c) {
  if (c.in(0).dtype == DType::Bool) c.fail(std::string(c.op.name) + " does not support bool images");
  if (c.in(1).dtype != DType::Int32) c.fail(std::string("size must be int32, got ") + tf_type_name(c.in(1).dtype));
  if (half_pixel(c.op, c.attrs) && c.attrs.b(kAlignCorners))
    c.fail("If half_pixel_centers is True, align_corners must be False.");
  c.out(0).dtype = &c.op == &op::ResizeNearestNeighbor() ? c.in(0).dtype : DType::Float32;
  c.kernel_dtype = c.in(0).dtype;
  const InputInfo& im = c.in(0);
  if (!im.unknown_rank && im.dims->size() != 4) c.fail("input must be 4-dimensional" + dims_text(*im.dims));
  if (!c.in(1).unknown_rank && (c.in(1).dims->size() != 1 || ((*c.in(1).dims)[0] >= 0 && (*c.in(1).dims)[0] != 2)))
    c.fail("shape_t must have two elements" + dims_text(*c.in(1).dims));
  Dims out{im.unknown_rank ? -1 : (*im.dims)[0], -1, -1, im.unknown_rank ? -1 : (*im.dims)[3]};
  std::vector<int64_t> size;
  if (known_ints(c.in(1), &size) && size.size() == 2) {
    if (size[0] <= 0 || size[1] <= 0) c.fail("output dimensions must be positive");
    out[1] = size[0];
    out[2] = size[1];
  }
  c.out(0).shape = TensorShape(std::move(out));
}

// The input/output size ratio (TensorFlow's CalculateResizeScale).
float resize_scale(int64_t in, int64_t out, bool align_corners) {
  return align_corners && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                  : static_cast<float>(in) / static_cast<float>(out);
}
// An output coordinate in input coordinates.
float source_coord(int64_t i, float scale, bool half_pixel) {
  return half_pixel ? (static_cast<float>(i) + 0.5f) * scale - 0.5f : static_cast<float>(i) * scale;
}

struct Geometry {
  int64_t n, h, w, c, oh, ow;
  float sy, sx;
  bool align, half;
};
Geometry geometry_of(const KernelContext& c) {
  const TensorImpl& im = c.in(0);
  const TensorImpl& out = c.out(0);
  if (im.dims.size() != 4 || out.dims.size() != 4) c.fail("input must be 4-dimensional");
  const std::vector<int64_t> size = int_values(c.in(1));
  if (size.size() != 2 || size[0] <= 0 || size[1] <= 0 || size[0] != out.dims[1] || size[1] != out.dims[2])
    c.fail("output dimensions must be positive");
  const bool align = c.attrs.b(kAlignCorners), half = half_pixel(c.op, c.attrs);
  if (im.num_elements > 0 && (im.dims[1] == 0 || im.dims[2] == 0)) c.fail("input image must be of non-zero size");
  return {.n = im.dims[0],
          .h = im.dims[1],
          .w = im.dims[2],
          .c = im.dims[3],
          .oh = out.dims[1],
          .ow = out.dims[2],
          .sy = resize_scale(im.dims[1], out.dims[1], align),
          .sx = resize_scale(im.dims[2], out.dims[2], align),
          .align = align,
          .half = half};
}

// For each output row (batch x output y), f(batch, oy, output row pointer offset).
template <class F>
void for_rows(const Geometry& g, F&& f) {
  parallel_for(g.n * g.oh, std::max<int64_t>(1, kParallelPixels / std::max<int64_t>(g.ow * g.c, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t r = lo; r < hi; ++r) f(r / g.oh, r % g.oh);
               });
}

struct Lerp {
  int64_t lower, upper;
  float frac;
};
Lerp lerp_of(int64_t i, float scale, bool half, int64_t in) {
  const float x = source_coord(i, scale, half);
  const float xf = std::floor(x);
  return {.lower = std::max<int64_t>(static_cast<int64_t>(xf), 0),
          .upper = std::min<int64_t>(static_cast<int64_t>(std::ceil(x)), in - 1),
          .frac = x - xf};
}

template <class T>
struct BilinearKernel {
  static void run(KernelContext& c) {
    const Geometry g = geometry_of(c);
    if (c.out(0).num_elements == 0) return;
    const T* in = c.in(0).as<T>();
    float* out = c.out(0).as<float>();
    std::vector<Lerp> xs(g.ow);
    for (int64_t x = 0; x < g.ow; ++x) xs[x] = lerp_of(x, g.sx, g.half, g.w);
    for_rows(g, [&](int64_t b, int64_t y) {
      const Lerp ly = lerp_of(y, g.sy, g.half, g.h);
      const T* top = in + (b * g.h + ly.lower) * g.w * g.c;
      const T* bottom = in + (b * g.h + ly.upper) * g.w * g.c;
      float* row = out + (b * g.oh + y) * g.ow * g.c;
      for (int64_t x = 0; x < g.ow; ++x)
        for (int64_t ch = 0; ch < g.c; ++ch) {
          const float tl = static_cast<float>(top[xs[x].lower * g.c + ch]);
          const float tr = static_cast<float>(top[xs[x].upper * g.c + ch]);
          const float bl = static_cast<float>(bottom[xs[x].lower * g.c + ch]);
          const float br = static_cast<float>(bottom[xs[x].upper * g.c + ch]);
          const float t = tl + (tr - tl) * xs[x].frac;
          const float btm = bl + (br - bl) * xs[x].frac;
          row[x * g.c + ch] = t + (btm - t) * ly.frac;
        }
    });
  }
};

// The nearest input index: rounded with align_corners, from the pixel centre with
// half_pixel_centers, else floored; clamped into the image.
int64_t nearest(int64_t i, float scale, const Geometry& g, int64_t in) {
  const float x = g.half ? (static_cast<float>(i) + 0.5f) * scale : static_cast<float>(i) * scale;
  const auto j = static_cast<int64_t>(g.align ? std::round(x) : std::floor(x));
  return std::max<int64_t>(0, std::min<int64_t>(j, in - 1));
}

template <class T>
struct NearestKernel {
  static void run(KernelContext& c) {
    const Geometry g = geometry_of(c);
    if (c.out(0).num_elements == 0) return;
    const T* in = c.in(0).as<T>();
    T* out = c.out(0).as<T>();
    std::vector<int64_t> xs(g.ow);
    for (int64_t x = 0; x < g.ow; ++x) xs[x] = nearest(x, g.sx, g, g.w);
    for_rows(g, [&](int64_t b, int64_t y) {
      const T* src = in + (b * g.h + nearest(y, g.sy, g, g.h)) * g.w * g.c;
      T* row = out + (b * g.oh + y) * g.ow * g.c;
      for (int64_t x = 0; x < g.ow; ++x)
        for (int64_t ch = 0; ch < g.c; ++ch) row[x * g.c + ch] = src[xs[x] * g.c + ch];
    });
  }
};

// Bicubic: Keys' cubic kernel (a = -0.75, or -0.5 with half_pixel_centers, where weights of
// taps outside the image are dropped and the rest renormalized), sampled in a table of 1024
// steps per pixel as TensorFlow's kernel samples it.
constexpr int kTableSize = 1024;
struct CubicTable {
  std::array<float, (kTableSize + 1) * 2> coeffs;
  explicit CubicTable(double a) {
    for (int i = 0; i <= kTableSize; ++i) {
      float x = static_cast<float>(i * 1.0 / kTableSize);
      coeffs[i * 2] = static_cast<float>(((a + 2) * x - (a + 3)) * x * x + 1);
      x += 1.0f;
      coeffs[i * 2 + 1] = static_cast<float>(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
    }
  }
};
struct Taps {
  std::array<int64_t, 4> index;
  std::array<float, 4> weight;
};
Taps taps_of(int64_t i, float scale, bool half, int64_t limit) {
  static const CubicTable legacy(-0.75), keys(-0.5);
  const CubicTable& table = half ? keys : legacy;
  const float x = source_coord(i, scale, half);
  const auto base = static_cast<int64_t>(std::floor(x));
  const float delta = x - static_cast<float>(base);
  const auto offset = static_cast<int64_t>(std::lrint(delta * kTableSize));
  Taps t;
  t.weight = {table.coeffs[offset * 2 + 1], table.coeffs[offset * 2], table.coeffs[(kTableSize - offset) * 2],
              table.coeffs[(kTableSize - offset) * 2 + 1]};
  for (int k = 0; k < 4; ++k) {
    const int64_t j = base - 1 + k;
    t.index[k] = std::min(std::max<int64_t>(j, 0), limit - 1);
    if (half && (j < 0 || j >= limit)) t.weight[k] = 0;
  }
  if (half) {
    const float sum = t.weight[0] + t.weight[1] + t.weight[2] + t.weight[3];
    if (std::fabs(sum) >= 1000.0f * std::numeric_limits<float>::min())
      for (float& w : t.weight) w /= sum;
  }
  return t;
}

template <class T>
struct BicubicKernel {
  static void run(KernelContext& c) {
    const Geometry g = geometry_of(c);
    if (c.out(0).num_elements == 0) return;
    const T* in = c.in(0).as<T>();
    float* out = c.out(0).as<float>();
    std::vector<Taps> xs(g.ow);
    for (int64_t x = 0; x < g.ow; ++x) xs[x] = taps_of(x, g.sx, g.half, g.w);
    for_rows(g, [&](int64_t b, int64_t y) {
      const Taps ty = taps_of(y, g.sy, g.half, g.h);
      float* row = out + (b * g.oh + y) * g.ow * g.c;
      for (int64_t x = 0; x < g.ow; ++x)
        for (int64_t ch = 0; ch < g.c; ++ch) {
          float rows[4];
          for (int k = 0; k < 4; ++k) {
            const T* src = in + (b * g.h + ty.index[k]) * g.w * g.c + ch;
            const Taps& tx = xs[x];
            rows[k] = tx.weight[0] * static_cast<float>(src[tx.index[0] * g.c]) +
                      tx.weight[1] * static_cast<float>(src[tx.index[1] * g.c]) +
                      tx.weight[2] * static_cast<float>(src[tx.index[2] * g.c]) +
                      tx.weight[3] * static_cast<float>(src[tx.index[3] * g.c]);
          }
          row[x * g.c + ch] =
              ty.weight[0] * rows[0] + ty.weight[1] * rows[1] + ty.weight[2] * rows[2] + ty.weight[3] * rows[3];
        }
    });
  }
};

// ResizeArea: each output pixel is the mean of the input area it covers, input pixels
// weighted by how much of them lies inside (the area's edges cut pixels into fractions).
// Coordinates scale without half-pixel centres; align_corners scales by (in-1)/(out-1).
struct AreaSpan {
  int64_t start, end;   // the input pixels [start, end) the area touches (clamped when read)
  float begin, finish;  // the area's edges in input coordinates
};
AreaSpan area_span(int64_t i, float scale) {
  const float begin = static_cast<float>(i) * scale, finish = static_cast<float>(i + 1) * scale;
  return {.start = static_cast<int64_t>(std::floor(begin)),
          .end = static_cast<int64_t>(std::ceil(finish)),
          .begin = begin,
          .finish = finish};
}
// How much of input pixel j lies inside the span.
float area_weight(const AreaSpan& s, int64_t j, float scale) {
  const float lo = static_cast<float>(j), hi = static_cast<float>(j + 1);
  if (lo < s.begin) return hi > s.finish ? scale : hi - s.begin;
  return hi > s.finish ? s.finish - lo : 1.0f;
}

template <class T>
struct AreaKernel {
  static void run(KernelContext& c) {
    const Geometry g = geometry_of(c);
    if (c.out(0).num_elements == 0) return;
    const T* in = c.in(0).as<T>();
    float* out = c.out(0).as<float>();
    const float norm = 1.0f / (g.sy * g.sx);
    std::vector<AreaSpan> xs(g.ow);
    for (int64_t x = 0; x < g.ow; ++x) xs[x] = area_span(x, g.sx);
    for_rows(g, [&](int64_t b, int64_t y) {
      const AreaSpan sy = area_span(y, g.sy);
      float* row = out + (b * g.oh + y) * g.ow * g.c;
      for (int64_t x = 0; x < g.ow; ++x)
        for (int64_t ch = 0; ch < g.c; ++ch) {
          float sum = 0;
          for (int64_t i = sy.start; i < sy.end; ++i) {
            const T* src = in + (b * g.h + std::clamp<int64_t>(i, 0, g.h - 1)) * g.w * g.c + ch;
            float sum_y = 0;
            for (int64_t j = xs[x].start; j < xs[x].end; ++j)
              sum_y += static_cast<float>(src[std::clamp<int64_t>(j, 0, g.w - 1) * g.c]) * area_weight(xs[x], j, g.sx);
            sum += sum_y * area_weight(sy, i, g.sy);
          }
          row[x * g.c + ch] = sum * norm;
        }
    });
  }
};

// The backward ops: ResizeBilinearGrad(grads, original_image), ResizeBicubicGrad(grads,
// original_image) and ResizeNearestNeighborGrad(grads, size). Each resized pixel's gradient
// goes back to the input pixels it was computed from, with the same weights; images are
// independent, so threads take images (pixels of one image share inputs).
void infer_resize_grad(InferContext& c) {
  const bool nearest_grad = &c.op == &op::ResizeNearestNeighborGrad();
  if (c.attrs.b(kHalfPixel) && c.attrs.b(kAlignCorners))
    c.fail("If half_pixel_centers is True, align_corners must be False.");
  const InputInfo& g = c.in(0);
  if (!g.unknown_rank && g.dims->size() != 4) c.fail("input_grad must be 4-dimensional" + dims_text(*g.dims));
  Dims out{g.unknown_rank ? -1 : (*g.dims)[0], -1, -1, g.unknown_rank ? -1 : (*g.dims)[3]};
  if (nearest_grad) {
    if (g.dtype == DType::Bool || !(is_floating(g.dtype) || is_integer(g.dtype)))
      c.fail(std::string("ResizeNearestNeighborGrad does not support ") + tf_type_name(g.dtype));
    if (c.in(1).dtype != DType::Int32) c.fail(std::string("size must be int32, got ") + tf_type_name(c.in(1).dtype));
    if (!c.in(1).unknown_rank && (c.in(1).dims->size() != 1 || ((*c.in(1).dims)[0] >= 0 && (*c.in(1).dims)[0] != 2)))
      c.fail("shape_t must have two elements" + dims_text(*c.in(1).dims));
    std::vector<int64_t> size;
    if (known_ints(c.in(1), &size) && size.size() == 2) {
      if (size[0] <= 0 || size[1] <= 0) c.fail("original dimensions must be positive");
      out[1] = size[0];
      out[2] = size[1];
    }
    c.out(0).dtype = g.dtype;
  } else {
    if (g.dtype != DType::Float32) c.fail(std::string("input_grad must be float32, got ") + tf_type_name(g.dtype));
    if (!is_floating(c.in(1).dtype))
      c.fail(std::string(c.op.name) + " supports floating original images, got " + tf_type_name(c.in(1).dtype));
    const InputInfo& im = c.in(1);
    if (!im.unknown_rank && im.dims->size() != 4) c.fail("original_image must be 4-dimensional" + dims_text(*im.dims));
    if (!im.unknown_rank) {
      for (int d : {0, 3})
        if (out[d] >= 0 && (*im.dims)[d] >= 0 && out[d] != (*im.dims)[d])
          c.fail("input_grad and original_image must agree in batch and depth" + dims_text(*g.dims) +
                 dims_text(*im.dims));
      out = *im.dims;
    }
    c.out(0).dtype = im.dtype;
  }
  c.kernel_dtype = c.out(0).dtype;
  c.out(0).shape = TensorShape(std::move(out));
}

// The forward geometry seen from a backward op: "image" is the output (the original size),
// the resized one is grads.
Geometry grad_geometry_of(const KernelContext& c) {
  const TensorImpl& g = c.in(0);
  const TensorImpl& out = c.out(0);
  if (g.dims.size() != 4 || out.dims.size() != 4 || g.dims[0] != out.dims[0] || g.dims[3] != out.dims[3])
    c.fail("input_grad and the original image do not agree" + dims_text(g.dims) + dims_text(out.dims));
  if (g.num_elements > 0 && (out.dims[1] == 0 || out.dims[2] == 0)) c.fail("original image must be of non-zero size");
  const bool align = c.attrs.b(kAlignCorners), half = c.attrs.b(kHalfPixel);
  return {.n = out.dims[0],
          .h = out.dims[1],
          .w = out.dims[2],
          .c = out.dims[3],
          .oh = g.dims[1],
          .ow = g.dims[2],
          .sy = resize_scale(out.dims[1], g.dims[1], align),
          .sx = resize_scale(out.dims[2], g.dims[2], align),
          .align = align,
          .half = half};
}

// Accumulates in A (float for the 16-bit floats, else T), then stores T.
template <class T, class A, class F>
void accumulate_images(KernelContext& c, const Geometry& g, F&& per_image) {
  T* out = c.out(0).as<T>();
  const int64_t image = g.h * g.w * g.c;
  parallel_for(g.n, 1, [&](int64_t lo, int64_t hi) {
    std::vector<A> acc(static_cast<size_t>(image));
    for (int64_t b = lo; b < hi; ++b) {
      std::fill(acc.begin(), acc.end(), A(0));
      per_image(b, acc.data());
      for (int64_t i = 0; i < image; ++i) out[b * image + i] = static_cast<T>(acc[i]);
    }
  });
}

template <class T>
struct BilinearGradKernel {
  static void run(KernelContext& c) {
    const Geometry g = grad_geometry_of(c);
    const float* grads = c.in(0).as<float>();
    std::vector<Lerp> xs(g.ow);
    for (int64_t x = 0; x < g.ow; ++x) xs[x] = lerp_of(x, g.sx, g.half, g.w);
    accumulate_images<T, T>(c, g, [&](int64_t b, T* acc) {
      for (int64_t y = 0; y < g.oh; ++y) {
        const Lerp ly = lerp_of(y, g.sy, g.half, g.h);
        T* top = acc + ly.lower * g.w * g.c;
        T* bottom = acc + ly.upper * g.w * g.c;
        const float* row = grads + (b * g.oh + y) * g.ow * g.c;
        for (int64_t x = 0; x < g.ow; ++x) {
          const Lerp& lx = xs[x];
          for (int64_t ch = 0; ch < g.c; ++ch) {
            const T dtop = static_cast<T>((1 - ly.frac) * row[x * g.c + ch]);
            const T dbottom = static_cast<T>(ly.frac * row[x * g.c + ch]);
            top[lx.lower * g.c + ch] += dtop * static_cast<T>(1 - lx.frac);
            top[lx.upper * g.c + ch] += dtop * static_cast<T>(lx.frac);
            bottom[lx.lower * g.c + ch] += dbottom * static_cast<T>(1 - lx.frac);
            bottom[lx.upper * g.c + ch] += dbottom * static_cast<T>(lx.frac);
          }
        }
      }
    });
  }
};

template <class T>
struct NearestGradKernel {
  static void run(KernelContext& c) {
    const std::vector<int64_t> size = int_values(c.in(1));
    if (size.size() != 2 || size[0] != c.out(0).dims[1] || size[1] != c.out(0).dims[2])
      c.fail("size does not match the output");
    const Geometry g = grad_geometry_of(c);
    const T* grads = c.in(0).as<T>();
    std::vector<int64_t> xs(g.ow);
    for (int64_t x = 0; x < g.ow; ++x) xs[x] = nearest(x, g.sx, g, g.w);
    accumulate_images<T, T>(c, g, [&](int64_t b, T* acc) {
      for (int64_t y = 0; y < g.oh; ++y) {
        T* dst = acc + nearest(y, g.sy, g, g.h) * g.w * g.c;
        const T* row = grads + (b * g.oh + y) * g.ow * g.c;
        for (int64_t x = 0; x < g.ow; ++x)
          for (int64_t ch = 0; ch < g.c; ++ch) dst[xs[x] * g.c + ch] += row[x * g.c + ch];
      }
    });
  }
};

template <class T>
struct BicubicGradKernel {
  static void run(KernelContext& c) {
    const Geometry g = grad_geometry_of(c);
    const float* grads = c.in(0).as<float>();
    std::vector<Taps> xs(g.ow);
    for (int64_t x = 0; x < g.ow; ++x) xs[x] = taps_of(x, g.sx, g.half, g.w);
    accumulate_images<T, float>(c, g, [&](int64_t b, float* acc) {
      for (int64_t y = 0; y < g.oh; ++y) {
        const Taps ty = taps_of(y, g.sy, g.half, g.h);
        const float* row = grads + (b * g.oh + y) * g.ow * g.c;
        for (int64_t x = 0; x < g.ow; ++x) {
          const Taps& tx = xs[x];
          for (int64_t ch = 0; ch < g.c; ++ch) {
            const float v = row[x * g.c + ch];
            for (int k = 0; k < 4; ++k)
              for (int l = 0; l < 4; ++l)
                acc[(ty.index[k] * g.w + tx.index[l]) * g.c + ch] += v * ty.weight[k] * tx.weight[l];
          }
        }
      }
    });
  }
};

// Gradients: each resize's backward op. An integer image gets none (TensorFlow's
// Resize*Grad ops take floating images only).
void bilinear_grad(GradContext& c) {
  if (!is_floating(c.x[0].dtype())) return;
  c.dx[0] = grad::emit1(c.b, op::ResizeBilinearGrad(), {&c.dy[0], &c.x[0]}, c.attrs);
}
void bicubic_grad(GradContext& c) {
  if (!is_floating(c.x[0].dtype())) return;
  c.dx[0] = grad::emit1(c.b, op::ResizeBicubicGrad(), {&c.dy[0], &c.x[0]}, c.attrs);
}
void nearest_grad(GradContext& c) {
  Dims dims;
  Tensor size;
  if (grad::static_dims(c.x[0], &dims) && dims.size() == 4 && dims[1] >= 0 && dims[2] >= 0) {
    size = grad::ints(c.b, {dims[1], dims[2]});
  } else {
    const Tensor shape = grad::shape(c.b, c.x[0]);
    const Tensor begin = grad::ints(c.b, {1}), count = grad::ints(c.b, {2});
    size = grad::emit1(c.b, op::Slice(), {&shape, &begin, &count});
  }
  c.dx[0] = grad::emit1(c.b, op::ResizeNearestNeighborGrad(), {&c.dy[0], &size}, c.attrs);
}

#define KILN_RESIZE_GRAD_OP(Name, Args, Kernel, Types, Input)                                      \
  const OpDef& op::Name() {                                                                        \
    static const OpDef def = {                                                                     \
        .name = #Name,                                                                             \
        .num_inputs = 2,                                                                           \
        .num_outputs = 1,                                                                          \
        .input_args = Args,                                                                        \
        .traits = kPure,                                                                           \
        .attr_specs = {bool_attr("align_corners", false), bool_attr("half_pixel_centers", false)}, \
        .infer = infer_resize_grad,                                                                \
        .kernels = kernels_for<Kernel, Types>(),                                                   \
        .type_attr_input = Input};                                                                 \
    return def;                                                                                    \
  }

#define KILN_RESIZE_OP(Name, Kernel, Grad)                                                         \
  const OpDef& op::Name() {                                                                        \
    static const OpDef def = {                                                                     \
        .name = #Name,                                                                             \
        .num_inputs = 2,                                                                           \
        .num_outputs = 1,                                                                          \
        .input_args = {"images", "size"},                                                          \
        .traits = kPure | kTfjs,                                                                   \
        .attr_specs = {bool_attr("align_corners", false), bool_attr("half_pixel_centers", false)}, \
        .infer = infer_resize,                                                                     \
        .kernels = kernels_for<Kernel, KILN_NUMERIC>(),                                            \
        .grad = Grad,                                                                              \
        .output_args = {"resized_images"}};                                                        \
    return def;                                                                                    \
  }
}  // namespace

KILN_RESIZE_OP(ResizeBilinear, BilinearKernel, &bilinear_grad)
KILN_RESIZE_OP(ResizeNearestNeighbor, NearestKernel, &nearest_grad)
KILN_RESIZE_OP(ResizeBicubic, BicubicKernel, &bicubic_grad)
const OpDef& op::ResizeArea() {
  static const OpDef def = {.name = "ResizeArea",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"images", "size"},
                            .traits = kPure,
                            .attr_specs = {bool_attr("align_corners", false)},
                            .infer = infer_resize,
                            .kernels = kernels_for<AreaKernel, KILN_NUMERIC, KILN_STORAGE_INTS>(),
                            .grad = nullptr,  // TensorFlow registers no gradient for it either
                            .output_args = {"resized_images"}};
  return def;
}
#define KILN_GRADS_IMAGE_ARGS \
  { "grads", "original_image" }
#define KILN_GRADS_SIZE_ARGS \
  { "grads", "size" }
KILN_RESIZE_GRAD_OP(ResizeBilinearGrad, KILN_GRADS_IMAGE_ARGS, BilinearGradKernel, KILN_FLOATS, 1)
KILN_RESIZE_GRAD_OP(ResizeBicubicGrad, KILN_GRADS_IMAGE_ARGS, BicubicGradKernel, KILN_FLOATS, 1)
KILN_RESIZE_GRAD_OP(ResizeNearestNeighborGrad, KILN_GRADS_SIZE_ARGS, NearestGradKernel, KILN_NUMERIC, 0)

}  // namespace kiln::ops
