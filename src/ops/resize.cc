// Image resizing over NHWC images, as TensorFlow's legacy resize ops compute it:
// ResizeBilinear and ResizeBicubic (float32 results), ResizeNearestNeighbor (the input's
// dtype). attrs align_corners and half_pixel_centers choose how output pixels map to input
// coordinates.
#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "core/parallel.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

int resize_attr(const char* name) {
  return attr_index(
      {{&op::ResizeBilinear(), name}, {&op::ResizeNearestNeighbor(), name}, {&op::ResizeBicubic(), name}});
}
const int kAlignCorners = resize_attr("align_corners");
const int kHalfPixel = resize_attr("half_pixel_centers");

constexpr int64_t kParallelPixels = 16 * 1024;

void infer_resize(InferContext& c) {
  if (c.in(0).dtype == DType::Bool) c.fail(std::string(c.op.name) + " does not support bool images");
  if (c.in(1).dtype != DType::Int32) c.fail(std::string("size must be int32, got ") + tf_type_name(c.in(1).dtype));
  if (c.attrs.b(kHalfPixel) && c.attrs.b(kAlignCorners))
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
  const bool align = c.attrs.b(kAlignCorners), half = c.attrs.b(kHalfPixel);
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

#define KILN_RESIZE_OP(Name, Kernel)                                                               \
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
        .grad = nullptr, /* TensorFlow's Resize*Grad ops are not in kiln yet */                    \
        .output_args = {"resized_images"}};                                                        \
    return def;                                                                                    \
  }
}  // namespace

KILN_RESIZE_OP(ResizeBilinear, BilinearKernel)
KILN_RESIZE_OP(ResizeNearestNeighbor, NearestKernel)
KILN_RESIZE_OP(ResizeBicubic, BicubicKernel)

}  // namespace kiln::ops
