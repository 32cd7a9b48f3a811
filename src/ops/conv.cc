// Convolution and pooling over NHWC images: Conv2D, MaxPool, AvgPool, with TensorFlow's
// attrs (strides, padding SAME/VALID/EXPLICIT, dilations, ksize) and output sizes.
// Conv2D is im2col plus one GEMM; the pools take the max or the mean of the window's
// elements inside the image (padding is never part of a window's max or count, as in
// TensorFlow). Channels-first layouts are refused. Their gradients and backward ops are in
// conv_backprop.cc.
#include <algorithm>
#include <limits>
#include <optional>
#include <type_traits>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "core/parallel.h"
#include "core/scratch.h"
#include "kernels/gemm.h"
#include "kernels/isa_dispatch.h"
#include "kernels/onednn.h"
#include "ops/batch_rows.h"
#include "ops/channel_vector.h"
#include "ops/conv_epilogue.h"
#include "ops/conv_window.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

using conv::check_format;
using conv::check_padding;
using conv::four;
using conv::image;
using conv::pad_before;
using conv::Window;
using conv::window;

// Conv2D, DepthwiseConv2dNative and their fused forms share the convolution attrs' places;
// the pools theirs.
int conv_attr(const char* name) {
  return attr_index({{&op::Conv2D(), name},
                     {&op::KilnFusedConv2D(), name},
                     {&op::DepthwiseConv2dNative(), name},
                     {&op::KilnFusedDepthwiseConv2dNative(), name}});
}
const int kConvStrides = conv_attr("strides");
const int kConvPadding = conv_attr("padding");
const int kConvExplicitPaddings = conv_attr("explicit_paddings");
const int kConvFormat = conv_attr("data_format");
const int kConvDilations = conv_attr("dilations");
const int kFusedOps =
    attr_index({{&op::KilnFusedConv2D(), "fused_ops"}, {&op::KilnFusedDepthwiseConv2dNative(), "fused_ops"}});
const int kPoolKsize = attr_index({{&op::MaxPool(), "ksize"}, {&op::AvgPool(), "ksize"}});
const int kPoolStrides = attr_index({{&op::MaxPool(), "strides"}, {&op::AvgPool(), "strides"}});
const int kPoolPadding = attr_index({{&op::MaxPool(), "padding"}, {&op::AvgPool(), "padding"}});
const int kMaxPoolExplicitPaddings = attr_index(op::MaxPool(), "explicit_paddings");
const int kMaxPoolFormat = attr_index(op::MaxPool(), "data_format");
const int kAvgPoolFormat = attr_index(op::AvgPool(), "data_format");

// Work per thread below which an image op stays on the calling thread (elements touched).
constexpr int64_t kParallelWork = 64 * 1024;
// A convolution splits over threads above this many multiply-adds (as a GEMM does).
constexpr int64_t kParallelGemmWork = int64_t{128} * 128 * 128;
// Float32 convolutions of at least this many multiply-adds run on oneDNN where it is
// installed (kernels/onednn.h); smaller ones stay on kiln's kernels, where making oneDNN's
// memory objects and stream costs more than its loops save. Measured on Xeon (AVX-512), one
// thread, batch 1 (docs/perf/dispatch.md): kiln's direct 1x1 GEMM wins at 0.8M (12.5 against
// 19 us), oneDNN from 3.2M (31 against 70); its depthwise kernels win from 0.4M (36 against 54).
constexpr int64_t kOneDnnMinWork = int64_t{1} << 21;
constexpr int64_t kOneDnnMinGroupedWork = int64_t{1} << 16;

struct Geometry {
  int64_t n, h, w, c;  // input
  int64_t kh, kw;      // window
  int64_t sh, sw, dh, dw;
  Window y, x;
  // 1x1, stride 1, no padding: each output pixel reads only its own input pixel, so the
  // input's rows are the GEMM's rows, and any run of pixels is a convolution of its own.
  bool pointwise() const {
    return kh == 1 && kw == 1 && sh == 1 && sw == 1 && y.pad_before == 0 && x.pad_before == 0 && y.out == h &&
           x.out == w;
  }
};

// Conv2D(input [N,H,W,C], filter [KH,KW,C/G,OC]): attrs strides, padding, explicit_paddings,
// data_format, dilations, use_cudnn_on_gpu. A filter depth that divides the input depth C
// makes G groups, each convolving C/G input channels into OC/G outputs.
// DepthwiseConv2dNative(input [N,H,W,C], filter [KH,KW,C,M]): each channel convolved with its
// own M filters, output C*M channels (channel c's m-th at c*M+m); the same attrs.
bool is_depthwise(const OpDef& op) {
  return &op == &op::DepthwiseConv2dNative() || &op == &op::KilnFusedDepthwiseConv2dNative();
}

void infer_conv2d(InferContext& c) {
  require_same_dtypes(c, 0, 1);
  if (!is_floating(c.in(0).dtype))
    c.fail(std::string(c.op.name) + " supports float and double, got " + tf_type_name(c.in(0).dtype));
  const bool depthwise = is_depthwise(c.op);
  const auto& strides = four(c, kConvStrides, "strides");
  const std::string& padding = c.attrs.s(kConvPadding);
  check_padding(c, padding, c.attrs.list(kConvExplicitPaddings));
  check_format(c, kConvFormat);
  const auto& dilations = four(c, kConvDilations, "dilations");
  if (strides[0] != 1 || strides[3] != 1)
    c.fail("Current implementation does not yet support strides in the batch and depth dimensions.");
  if (dilations[0] != 1 || dilations[3] != 1)
    c.fail("Current implementation does not yet support dilations in the batch and depth dimensions.");
  const Dims* in = image(c, 0, "input");
  const Dims* f = image(c, 1, "filter");
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  if (f && std::find(f->begin(), f->end(), 0) != f->end())
    c.fail("filter must not have zero elements (i.e. all dimensions must be non-zero)");
  if (in && f && (*in)[3] >= 0 && (*f)[2] >= 0 && (*in)[3] != (*f)[2]) {
    if (depthwise || (*f)[2] == 0 || (*in)[3] % (*f)[2] != 0)
      c.fail("input depth must be evenly divisible by filter depth: " + std::to_string((*in)[3]) + " vs " +
             std::to_string((*f)[2]));
    const int64_t groups = (*in)[3] / (*f)[2];
    if (groups > 0 && (*f)[3] >= 0 && (*f)[3] % groups != 0)  // no input channels: zeros, as TensorFlow
      c.fail("output depth must be evenly divisible by number of groups: " + std::to_string((*f)[3]) + " vs " +
             std::to_string(groups));
  }
  const auto& ep = c.attrs.list(kConvExplicitPaddings);
  const bool ex = padding == "EXPLICIT";
  int64_t depth = f ? (*f)[3] : -1;
  if (depthwise) depth = f && (*f)[2] >= 0 && (*f)[3] >= 0 ? (*f)[2] * (*f)[3] : -1;
  Dims out{in ? (*in)[0] : -1, -1, -1, depth};
  if (in && f && (*f)[0] >= 0 && (*f)[1] >= 0) {
    out[1] = window(c, (*in)[1], (*f)[0], dilations[1], strides[1], padding, ex ? ep[2] : 0, ex ? ep[3] : 0).out;
    out[2] = window(c, (*in)[2], (*f)[1], dilations[2], strides[2], padding, ex ? ep[4] : 0, ex ? ep[5] : 0).out;
  }
  c.out(0).shape = (in || f) ? TensorShape(Dims(out)) : TensorShape::unknown();
}

Geometry geometry(const KernelContext& c, int64_t kh, int64_t kw, const std::vector<int64_t>& strides,
                  const std::vector<int64_t>& dilations, const std::string& padding, const std::vector<int64_t>& ep) {
  const TensorImpl& in = c.in(0);
  const TensorImpl& out = c.out(0);
  Geometry g{.n = in.dims[0],
             .h = in.dims[1],
             .w = in.dims[2],
             .c = in.dims[3],
             .kh = kh,
             .kw = kw,
             .sh = strides[1],
             .sw = strides[2],
             .dh = dilations[1],
             .dw = dilations[2],
             .y = {.out = out.dims[1], .pad_before = 0},
             .x = {.out = out.dims[2], .pad_before = 0}};
  const bool ex = padding == "EXPLICIT";
  g.y.pad_before = pad_before(g.h, (kh - 1) * g.dh + 1, g.sh, g.y.out, padding, ex ? ep[2] : 0);
  g.x.pad_before = pad_before(g.w, (kw - 1) * g.dw + 1, g.sw, g.x.out, padding, ex ? ep[4] : 0);
  return g;
}

using conv::apply_epilogue;
using conv::Epilogue;
using conv::EpilogueOp;

#if defined(__x86_64__)
// A thin float convolution (kh * kw * C <= kThinPatch taps per output: a first layer over one
// to a few channels; output channels a multiple of 16) without a patch matrix: each output
// pixel reads its taps straight from the image through a table of offsets (or, at the
// border, from a small gathered copy with zeros for the padding), and keeps each 16 output
// channels in one register, four pixels at a time so that their multiply-add chains overlap.
// A library GEMM would spend more on packing such thin operands than on the arithmetic.
// AVX-512 code in a file built for the baseline: it runs only when cpu_isa() is AVX-512.
constexpr int64_t kThinPatch = 32;

__attribute__((target(KILN_TARGET_AVX512_FEATURES))) void thin_rows(const float* const* src, const int64_t* const* offs,
                                                                    int count, const float* w, int64_t k, int64_t n,
                                                                    float* y) {
  for (int64_t j0 = 0; j0 < n; j0 += 16) {
    __m512 acc[4];
    const __m512 w0 = _mm512_loadu_ps(w + j0);
    for (int i = 0; i < count; ++i) acc[i] = _mm512_mul_ps(_mm512_set1_ps(src[i][offs[i][0]]), w0);
    for (int64_t p = 1; p < k; ++p) {
      const __m512 wp = _mm512_loadu_ps(w + p * n + j0);
      for (int i = 0; i < count; ++i) acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(src[i][offs[i][p]]), wp, acc[i]);
    }
    for (int i = 0; i < count; ++i) _mm512_storeu_ps(y + i * n + j0, acc[i]);
  }
}

// Output rows [r0, r1) (consecutive pixels) of a thin convolution.
__attribute__((target(KILN_TARGET_AVX512_FEATURES))) void thin_block(const Geometry& g, const float* x, const float* w,
                                                                     int64_t oc, const int64_t* offsets,
                                                                     const int64_t* identity, int64_t r0, int64_t r1,
                                                                     float* y) {
  const int64_t patch = g.kh * g.kw * g.c;
  float gathered[4][kThinPatch];
  const float* src[4];
  const int64_t* offs[4];
  int count = 0;
  int64_t first = r0;
  int64_t ox = r0 % g.x.out, oy = (r0 / g.x.out) % g.y.out, b = r0 / (g.x.out * g.y.out);
  for (int64_t r = r0; r < r1; ++r, ++ox) {
    if (ox == g.x.out) {
      ox = 0;
      if (++oy == g.y.out) {
        oy = 0;
        ++b;
      }
    }
    const int64_t iy0 = oy * g.sh - g.y.pad_before, ix0 = ox * g.sw - g.x.pad_before;
    if (iy0 >= 0 && iy0 + (g.kh - 1) * g.dh < g.h && ix0 >= 0 && ix0 + (g.kw - 1) * g.dw < g.w) {
      src[count] = x + ((b * g.h + iy0) * g.w + ix0) * g.c;  // the window is inside the image
      offs[count] = offsets;
    } else {
      float* row = gathered[count];
      for (int64_t ky = 0; ky < g.kh; ++ky)
        for (int64_t kx = 0; kx < g.kw; ++kx) {
          const int64_t iy = iy0 + ky * g.dh, ix = ix0 + kx * g.dw;
          const bool inside = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w;
          for (int64_t ch = 0; ch < g.c; ++ch)
            row[(ky * g.kw + kx) * g.c + ch] = inside ? x[((b * g.h + iy) * g.w + ix) * g.c + ch] : 0.0f;
        }
      src[count] = row;
      offs[count] = identity;
    }
    if (++count == 4 || r + 1 == r1) {
      thin_rows(src, offs, count, w, patch, oc, y + first * oc);
      first = r + 1;
      count = 0;
    }
  }
}
#endif

// oneDNN writes a convolution's whole output before kiln's epilogue reads it back: at batch 32
// MobileNetV2's outputs are hundreds of megabytes, so the epilogue read them from memory, not
// cache (a quarter of the model's time). A convolution with an epilogue runs in blocks of
// about this much output instead, each block's epilogue right after its convolution: whole
// images, or for a pointwise convolution (1x1, stride 1, no padding) runs of pixels. Blocks of
// 400 KB and 1 MB measured alike on the Xeon (2 MB of L2 per core); 512 KB is also Zen 2's and
// Zen 3's L2 per core (not measured there). Each output is oneDNN's same sum either way: its
// direct kernels sum a pixel's window the same way however many pixels or images a call has
// (OneDnnConv.FusedChainsGiveTheSeparateOpsValues compares blocked fused convolutions with the
// eager ops bit for bit).
constexpr int64_t kEpilogueBlockBytes = int64_t{512} << 10;
// An output of at most this much runs whole all the same, its epilogue after: every call of
// oneDNN has its own setup and its own fork and join of the team, and splitting a batch-1
// layer's pixels into blocks left each call too few for two threads. Whole, batch 1 on the
// Xeon (outputs up to MobileNetV2's and EfficientNetB0's 112x112x96, 4.8 MB; InceptionV3's
// largest, 5.5 MB): MobileNetV2 on two threads 3.81-3.48 -> 3.50-3.32 ms, on one
// 5.51-5.10 -> 5.16-4.94, ResNet50 on two 27.6-26.4 -> 25.1-25.5; MobileNetV2 at batch 32
// on two threads within noise (its outputs of up to 6 MB, 7x7x960, now whole too).
constexpr int64_t kEpilogueWholeBytes = int64_t{6} << 20;

// The epilogue over `rows` output rows from row `first_row` (at `y`), split over the threads
// in chunks of about kEpilogueChunk values: a late layer's few rows of many channels (a
// batch-1 MobileNetV2's 14x14x384) are split too, not only outputs of many rows.
constexpr int64_t kEpilogueChunk = int64_t{1} << 14;
template <class T>
void epilogue_rows(T* y, int64_t first_row, int64_t rows, int64_t oc, const Epilogue& epilogue) {
  if (epilogue.count == 0 || rows == 0) return;
  const int64_t chunk = std::max<int64_t>(1, kEpilogueChunk / std::max<int64_t>(oc, 1));
  parallel_for((rows + chunk - 1) / chunk, 2, [&](int64_t lo, int64_t hi) {
    for (int64_t blk = lo; blk < hi; ++blk)
      apply_epilogue(y + blk * chunk * oc, first_row + blk * chunk, std::min(chunk, rows - blk * chunk), oc, epilogue);
  });
}

// BatchNormalization folded into oneDNN's convolution (KILN_FOLD_BATCH_NORM=1,
// kernels::onednn::Folded): a chain that starts [BiasAdd|AddV2] Mul [AddV2|Sub] becomes the
// filter times the Mul's vector plus one bias, b = pre * scale + shift; a Relu or Relu6
// right after them runs in oneDNN too. What follows (a residual Add, a Swish, an activation
// after the Add) stays the epilogue's (`rest`). False: the chain has no Mul where it must.
struct FoldPlan {
  kernels::onednn::Folded folded;
  std::vector<float> bias;
  Epilogue rest;
};
bool plan_fold(const KernelContext& c, const Epilogue& e, int64_t oc, FoldPlan& plan) {
  int s = 0;
  auto at = [&](EpilogueOp a, EpilogueOp b) { return s < e.count && (e.steps[s].op == a || e.steps[s].op == b); };
  const int pre = at(EpilogueOp::kBiasAdd, EpilogueOp::kAddV2) ? s++ : -1;
  if (!at(EpilogueOp::kMul, EpilogueOp::kMul) || e.steps[s].input < 0) return false;
  const int mul = s++;
  const int shift = at(EpilogueOp::kAddV2, EpilogueOp::kSub) ? s++ : -1;
  const float* m = static_cast<const float*>(e.steps[mul].channel_values);
  const float* p = pre >= 0 ? static_cast<const float*>(e.steps[pre].channel_values) : nullptr;
  const float* t = shift >= 0 ? static_cast<const float*>(e.steps[shift].channel_values) : nullptr;
  const bool negate = shift >= 0 && e.steps[shift].op == EpilogueOp::kSub;
  plan.bias.resize(static_cast<size_t>(oc));
  for (int64_t o = 0; o < oc; ++o) plan.bias[o] = (p ? p[o] * m[o] : 0.f) + (t ? (negate ? -t[o] : t[o]) : 0.f);
  plan.folded = {.scale = &c.in(e.steps[mul].input), .bias = plan.bias.data()};
  if (s + 1 == e.count && (e.steps[s].op == EpilogueOp::kRelu || e.steps[s].op == EpilogueOp::kRelu6)) {
    plan.folded.activation =
        e.steps[s].op == EpilogueOp::kRelu ? kernels::onednn::Activation::kRelu : kernels::onednn::Activation::kRelu6;
    ++s;
  }
  plan.rest = Epilogue{};
  for (; s < e.count; ++s) plan.rest.steps[plan.rest.count++] = e.steps[s];
  return true;
}

// Runs the convolution on oneDNN where that is installed and the work is large enough (a
// float32 one of `fd` input channels per group, `oc` outputs); false leaves it to kiln's own
// kernels (which then write the whole output again). The epilogue runs after the whole
// convolution for an output of at most kEpilogueWholeBytes, else per block of output
// (kEpilogueBlockBytes); either way in chunks of rows split over the threads.
template <class T>
bool on_onednn(KernelContext& c, const Geometry& g, int64_t fd, int64_t oc, const Epilogue& epilogue) {
  if constexpr (!std::is_same_v<T, float>) {
    return false;
  } else {
    const int64_t rows = g.n * g.y.out * g.x.out;
    const int64_t work = rows * g.kh * g.kw * fd * oc;
    if (work < (fd == g.c ? kOneDnnMinWork : kOneDnnMinGroupedWork) || !kernels::onednn::usable()) return false;
    const kernels::onednn::Conv2D geometry = {.n = g.n,
                                              .h = g.h,
                                              .w = g.w,
                                              .c = g.c,
                                              .oh = g.y.out,
                                              .ow = g.x.out,
                                              .oc = oc,
                                              .kh = g.kh,
                                              .kw = g.kw,
                                              .sh = g.sh,
                                              .sw = g.sw,
                                              .dh = g.dh,
                                              .dw = g.dw,
                                              .pad_top = g.y.pad_before,
                                              .pad_left = g.x.pad_before,
                                              .groups = g.c / fd};
    const T* x = c.in(0).as<T>();
    T* y = c.out(0).as<T>();
    const bool pointwise = g.pointwise() && fd == g.c;
    FoldPlan fold;
    const bool folding =
        epilogue.count > 0 && kernels::onednn::fold_batch_norm_requested() && plan_fold(c, epilogue, oc, fold);
    const Epilogue& rest = folding ? fold.rest : epilogue;
    const kernels::onednn::Folded folded = folding ? fold.folded : kernels::onednn::Folded{};
    // Whole: nothing left to apply, an output of at most kEpilogueWholeBytes, or Winograd's
    // tiles (which give other bits at another batch).
    if (rest.count == 0 || rows * oc * static_cast<int64_t>(sizeof(float)) <= kEpilogueWholeBytes ||
        (!pointwise && kernels::onednn::winograd_requested())) {
      if (!kernels::onednn::conv2d(geometry, x, c.in(1), y, intra_op_threads(), folded)) return false;
      epilogue_rows(y, 0, rows, oc, rest);
      return true;
    }
    const int64_t unit_rows = pointwise ? 1 : g.y.out * g.x.out;  // output rows of a pixel or an image
    const int64_t unit_inputs = pointwise ? g.c : g.h * g.w * g.c;
    const int64_t units = rows / std::max<int64_t>(unit_rows, 1);
    // At least 64 pixels: fewer would cost more in oneDNN's per-call setup than they save.
    const int64_t per_block = std::max<int64_t>(pointwise ? 64 : 1, kEpilogueBlockBytes / (unit_rows * oc * 4));
    for (int64_t u0 = 0; u0 < units; u0 += per_block) {
      const int64_t n = std::min(per_block, units - u0);
      kernels::onednn::Conv2D block = geometry;
      if (n < units && pointwise) {  // n pixels: a column of n rows of one pixel
        block.n = 1;
        block.h = block.oh = n;
        block.w = block.ow = 1;
      } else if (n < units) {
        block.n = n;
      }
      const int64_t r0 = u0 * unit_rows;
      if (!kernels::onednn::conv2d(block, x + u0 * unit_inputs, c.in(1), y + r0 * oc, intra_op_threads(), folded))
        return false;
      epilogue_rows(y + r0 * oc, r0, n * unit_rows, oc, rest);
    }
    return true;
  }
}

// Convolution as GEMMs over blocks of output pixels: each block's im2col rows (the window's
// pixels, zeros outside the image, in the filter's [KH, KW, C] order) and its output rows
// stay in cache while the GEMM and the epilogue run, and threads take whole blocks. A 1x1
// convolution with stride 1 and no padding reads its input rows directly. The split into
// blocks depends only on the shapes, so every run (eager, traced, any thread count) computes
// each output the same way.
// A grouped convolution (Conv2D whose filter depth fd divides the input depth into G groups;
// DepthwiseConv2dNative is the case fd = 1, G = C, with its filter [KH,KW,C,M] laid out as
// [KH,KW,1,C*M]) computed directly: each output pixel accumulates, window pixel by window
// pixel, every group's fd inputs times its OC/G filter columns. Threads take output rows.
// One image row r of a grouped convolution's output pixels (see grouped_convolve).
template <class T>
KILN_ISA_BODY void grouped_row_body(const Geometry& g, const T* x, const T* w, int64_t fd, int64_t oc, int64_t r,
                                    T* y_row) {
  const int64_t groups = g.c / fd, per_group = oc / groups;
  const int64_t b = r / g.y.out, oy = r % g.y.out;
  for (int64_t ox = 0; ox < g.x.out; ++ox) {
    T* __restrict out = y_row + ox * oc;
    for (int64_t o = 0; o < oc; ++o) out[o] = T(0);
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      const int64_t iy = oy * g.sh - g.y.pad_before + ky * g.dh;
      if (iy < 0 || iy >= g.h) continue;
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        const int64_t ix = ox * g.sw - g.x.pad_before + kx * g.dw;
        if (ix < 0 || ix >= g.w) continue;
        const T* __restrict px = x + ((b * g.h + iy) * g.w + ix) * g.c;
        const T* __restrict wk = w + (ky * g.kw + kx) * fd * oc;
        if (fd == 1 && per_group == 1) {
          // Depthwise with multiplier 1 (MobileNet's, EfficientNet's): one tap per channel,
          // so the channels are the vector; each output is the same sum in the same order.
          for (int64_t o = 0; o < oc; ++o) out[o] += px[o] * wk[o];
          continue;
        }
        for (int64_t gr = 0; gr < groups; ++gr) {
          T* __restrict og = out + gr * per_group;
          for (int64_t ci = 0; ci < fd; ++ci) {
            const T v = px[gr * fd + ci];
            const T* __restrict wr = wk + ci * oc + gr * per_group;
            for (int64_t o = 0; o < per_group; ++o) og[o] += v * wr[o];
          }
        }
      }
    }
  }
}

template <class T>
void grouped_convolve(KernelContext& c, const Geometry& g, int64_t fd, int64_t oc, const Epilogue& epilogue) {
  if (g.c == 0) {  // no input channels: every output is an empty sum
    T* y = c.out(0).as<T>();
    const int64_t rows = g.n * g.y.out * g.x.out;  // the output may hold more images (a fused Add's)
    std::fill(y, y + rows * oc, T(0));
    apply_epilogue(y, 0, rows, oc, epilogue);
    return;
  }
  const int64_t groups = g.c / fd, per_group = oc / groups;
  if (groups * fd != g.c || groups * per_group != oc) c.fail("the filter's depths do not divide into groups");
  if (on_onednn<T>(c, g, fd, oc, epilogue)) return;
  const T* x = c.in(0).as<T>();
  const T* w = c.in(1).as<T>();
  T* y = c.out(0).as<T>();
  const int64_t out_rows = g.n * g.y.out;  // one image row of output pixels each
  const int64_t work = out_rows * g.x.out * g.kh * g.kw * g.c * per_group;
  parallel_for(out_rows,
               std::max<int64_t>(1, kParallelGemmWork / std::max<int64_t>(work / std::max<int64_t>(out_rows, 1), 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t r = lo; r < hi; ++r) {
                   KILN_ISA_DISPATCH((grouped_row_body(g, x, w, fd, oc, r, y + r * g.x.out * oc)));
                   apply_epilogue(y + r * g.x.out * oc, r * g.x.out, g.x.out, oc, epilogue);
                 }
               });
}

template <class T>
void convolve(KernelContext& c, const Geometry& g, const Epilogue& epilogue) {
  const TensorImpl& f = c.in(1);
  if (is_depthwise(c.op)) {
    if (f.dims[2] != g.c) c.fail("input and filter must have the same depth");
    return grouped_convolve<T>(c, g, 1, f.dims[2] * f.dims[3], epilogue);
  }
  if (f.dims[2] != g.c) return grouped_convolve<T>(c, g, f.dims[2], f.dims[3], epilogue);
  const int64_t oc = f.dims[3], patch = g.kh * g.kw * g.c, rows = g.n * g.y.out * g.x.out;
  if (rows == 0 || oc == 0) return;
  const T* x = c.in(0).as<T>();
  const T* w = f.as<T>();
  T* y = c.out(0).as<T>();
  const bool pointwise = g.pointwise();
  if (patch == 0) {
    std::fill(y, y + rows * oc, T(0));
    apply_epilogue(y, 0, rows, oc, epilogue);
    return;
  }
  if (on_onednn<T>(c, g, g.c, oc, epilogue)) return;
#if defined(__x86_64__)
  if constexpr (std::is_same_v<T, float>) {
    if (::kiln::detail::g_cpu_isa == CpuIsa::kAvx512 && patch <= kThinPatch && oc % 16 == 0) {
      int64_t offsets[kThinPatch], identity[kThinPatch];
      for (int64_t ky = 0; ky < g.kh; ++ky)
        for (int64_t kx = 0; kx < g.kw; ++kx)
          for (int64_t ch = 0; ch < g.c; ++ch) {
            const int64_t p = (ky * g.kw + kx) * g.c + ch;
            offsets[p] = (ky * g.dh * g.w + kx * g.dw) * g.c + ch;
            identity[p] = p;
          }
      constexpr int64_t kThinBlock = 1024;  // output rows per task
      const int64_t blocks = (rows + kThinBlock - 1) / kThinBlock;
      const bool worth_threads = rows * patch * oc >= kParallelGemmWork;
      parallel_for(blocks, worth_threads ? 2 : blocks + 1, [&](int64_t lo, int64_t hi) {
        for (int64_t blk = lo; blk < hi; ++blk) {
          const int64_t r0 = blk * kThinBlock, r1 = std::min(rows, r0 + kThinBlock);
          thin_block(g, x, w, oc, offsets, identity, r0, r1, y);
          apply_epilogue(y + r0 * oc, r0, r1 - r0, oc, epilogue);
        }
      });
      return;
    }
  }
#endif
  // About 256 KB of im2col rows and output rows per block (a core's L2), 256 to 4096 rows:
  // each block's GEMM packs the whole filter matrix again, so a block of fewer rows than
  // about 256 spends more on that copy than on its multiply-adds (ResNet50's 3x3x256 layers
  // had blocks of 16 rows, and a third of their time was the library packing the filter).
  constexpr int64_t kBlockBytes = 256 * 1024;
  const int64_t block =
      std::clamp<int64_t>(kBlockBytes / static_cast<int64_t>(sizeof(T)) / (patch + oc) / 16 * 16, 256, 4096);
  const int64_t blocks = (rows + block - 1) / block;
  const int64_t block_work = block * patch * oc;  // multiply-adds
  const int64_t min_parallel = std::max<int64_t>(2, kParallelGemmWork / std::max<int64_t>(block_work, 1));
  // One block (a small image, a late layer): its GEMM may split over the threads itself.
  const bool one_block = blocks == 1;
  parallel_for(blocks, one_block ? 2 : min_parallel, [&](int64_t lo, int64_t hi) {
    std::optional<SerialKernelsScope> serial;  // otherwise each thread's share is one GEMM at a time
    if (!one_block) serial.emplace();
    for (int64_t blk = lo; blk < hi; ++blk) {
      const int64_t r0 = blk * block, r1 = std::min(rows, r0 + block);
      const T* a = x + r0 * patch;
      if (!pointwise) {
        T* cols = detail::scratch<T>(detail::kConvScratch, static_cast<size_t>(block * patch));
        // The block's first output pixel; later ones step along x, then y, then the batch.
        int64_t ox = r0 % g.x.out, oy = (r0 / g.x.out) % g.y.out, b = r0 / (g.x.out * g.y.out);
        for (int64_t r = r0; r < r1; ++r, ++ox) {
          if (ox == g.x.out) {
            ox = 0;
            if (++oy == g.y.out) {
              oy = 0;
              ++b;
            }
          }
          T* row = cols + (r - r0) * patch;
          const int64_t ix0 = ox * g.sw - g.x.pad_before;
          // Undilated and inside the image across: each window row is kw * C contiguous values.
          const bool across_inside = g.dw == 1 && ix0 >= 0 && ix0 + g.kw <= g.w;
          for (int64_t ky = 0; ky < g.kh; ++ky) {
            const int64_t iy = oy * g.sh - g.y.pad_before + ky * g.dh;
            const bool row_inside = iy >= 0 && iy < g.h;
            if (row_inside && across_inside) {
              const T* __restrict src = x + ((b * g.h + iy) * g.w + ix0) * g.c;
              T* __restrict dst = row + ky * g.kw * g.c;
              for (int64_t i = 0; i < g.kw * g.c; ++i) dst[i] = src[i];
              continue;
            }
            for (int64_t kx = 0; kx < g.kw; ++kx) {
              const int64_t ix = ox * g.sw - g.x.pad_before + kx * g.dw;
              T* __restrict dst = row + (ky * g.kw + kx) * g.c;
              if (!row_inside || ix < 0 || ix >= g.w) {
                for (int64_t ch = 0; ch < g.c; ++ch) dst[ch] = T(0);
                continue;
              }
              // A plain loop, not std::copy: with few channels a library call per pixel
              // costs more than the copy.
              const T* __restrict src = x + ((b * g.h + iy) * g.w + ix) * g.c;
              for (int64_t ch = 0; ch < g.c; ++ch) dst[ch] = src[ch];
            }
          }
        }
        a = cols;
      }
      kernels::gemm<T>(false, false, r1 - r0, oc, patch, a, w, y + r0 * oc);
      apply_epilogue(y + r0 * oc, r0, r1 - r0, oc, epilogue);
    }
  });
}

template <class T>
struct Conv2DKernel {
  static void run(KernelContext& c) {
    const TensorImpl& f = c.in(1);
    const Geometry g = geometry(c, f.dims[0], f.dims[1], c.attrs.list(kConvStrides), c.attrs.list(kConvDilations),
                                c.attrs.s(kConvPadding), c.attrs.list(kConvExplicitPaddings));
    convolve<T>(c, g, Epilogue{});
  }
};

// KilnFusedConv2D / KilnFusedDepthwiseConv2dNative(input, filter, args...): the convolution
// and the per-channel ops the optimizer's fuse_contraction folded into it (TensorFlow's
// remapper makes _FusedConv2D the same way), which apply to each block of output rows while
// it is in cache (conv_epilogue.h). Attrs: the convolution's strides, padding,
// explicit_paddings, data_format, dilations, then fused_ops: the ops' names in order,
// comma-separated ("BiasAdd,Mul,AddV2,Add,Relu"); each of BiasAdd, Mul, AddV2 and Sub takes
// the next of `args`, a vector of the output's channels (shape [C] or [1, ..., 1, C]); Add
// takes a tensor of the output's shape; Swish its beta, a scalar.
Epilogue fused_epilogue(const OpDef& op, const Attrs& attrs, int num_inputs) {
  Epilogue e;
  if (std::string why = conv::parse_epilogue(attrs.s(kFusedOps), e); !why.empty())
    throw InternalError(std::string(op.name) + ": " + why);
  if (num_inputs != 2 + conv::num_inputs(e))
    throw InternalError(std::string(op.name) + ": " + std::to_string(num_inputs - 2) + " vectors for fused ops '" +
                        attrs.s(kFusedOps) + "'");
  return e;
}
// The images a fused Add's result has: the AddV2's broadcast of the convolution's batch
// `a` and the tensor's `b` (-1 unknown); other sizes are the convolution's.
int64_t broadcast_batch(InferContext& c, int64_t a, int64_t b, const Dims& tensor) {
  if (a == b || b == 1) return a;
  if (a == 1) return b;
  if (a < 0 || b < 0) return a < 0 ? b : a;  // the unknown one is 1 or the other
  c.fail("Incompatible shapes: the convolution's batch " + std::to_string(a) + " vs. a fused Add's " +
         dims_text(tensor));
}
void infer_fused_conv2d(InferContext& c) {
  const Epilogue e = fused_epilogue(c.op, c.attrs, c.num_inputs);
  infer_conv2d(c);
  TensorShape& out = c.out(0).shape;
  const int64_t channels = out.unknown_rank() ? -1 : out.dims().back();
  for (int s = 0, i = 2; s < e.count; ++s) {
    if (!conv::takes_input(e.steps[s].op)) continue;
    const InputInfo& v = c.in(i++);
    if (v.dtype != c.in(0).dtype) c.fail("a fused op's vector must have the input's dtype");
    if (v.unknown_rank) continue;
    const Dims& d = *v.dims;
    if (conv::takes_output_sized(e.steps[s].op)) {
      // The tensor an Add step adds: the convolution's shape but for the batch, which
      // broadcasts as the AddV2's would (an unknown size is checked again when it runs).
      bool same = d.size() == 4 && (out.unknown_rank() || out.dims().size() == 4);
      for (size_t k = 1; same && !out.unknown_rank() && k < 4; ++k)
        same = d[k] < 0 || out.dims()[k] < 0 || d[k] == out.dims()[k];
      if (!same) c.fail("a fused Add's tensor must have the output's shape" + dims_text(d));
      if (!out.unknown_rank()) {
        Dims dims = out.dims();
        dims[0] = broadcast_batch(c, dims[0], d[0], d);
        out = TensorShape(dims);
      }
      continue;
    }
    if (conv::takes_scalar(e.steps[s].op)) {
      if (std::any_of(d.begin(), d.end(), [](int64_t k) { return k != 1 && k >= 0; }))
        c.fail(std::string("a fused ") + conv::epilogue_op_name(e.steps[s].op) + "'s operand must be a scalar" +
               dims_text(d));
      continue;
    }
    // An unknown channel count on either side is checked again when the kernel runs.
    const bool unknown = channels < 0 || (!d.empty() && d.back() < 0);
    if (!is_channel_vector(d, unknown && !d.empty() ? d.back() : channels, 4))
      c.fail("a fused op's vector must be [channels]" + dims_text(d));
  }
}
template <class T>
struct FusedConv2DKernel {
  static void run(KernelContext& c) {
    const TensorImpl& f = c.in(1);
    const Geometry g = geometry(c, f.dims[0], f.dims[1], c.attrs.list(kConvStrides), c.attrs.list(kConvDilations),
                                c.attrs.s(kConvPadding), c.attrs.list(kConvExplicitPaddings));
    Epilogue e = fused_epilogue(c.op, c.attrs, c.num_inputs);
    const Dims& out = c.out(0).dims;  // the convolution's, but for a batch an Add broadcast
    const int64_t channels = out[3];
    const int64_t image_rows = out[1] * out[2];
    int add_step = -1;
    for (int s = 0, arg = 2; s < e.count; ++s) {
      if (!conv::takes_input(e.steps[s].op)) continue;
      const TensorImpl& v = c.in(arg++);
      if (conv::takes_output_sized(e.steps[s].op)) {
        // The shape function checked every size but an unknown batch's: one image broadcasts.
        if (v.dims[0] != out[0]) e.steps[s].tensor_rows = image_rows;
        add_step = s;
      } else if (conv::takes_scalar(e.steps[s].op)) {
        if (v.num_elements != 1)
          throw InternalError(std::string(c.op.name) + ": a fused op's scalar has " + std::to_string(v.num_elements) +
                              " elements");
      } else if (v.num_elements != channels) {
        throw InternalError(std::string(c.op.name) + ": a fused op's vector and the output's channels disagree");
      }
      e.steps[s].channel_values = v.as<T>();
      e.steps[s].input = arg - 1;
    }
    if (out[0] == g.n) return convolve<T>(c, g, e);
    // One image convolved, an Add's tensor of several (or of none): the AddV2 broadcast the
    // image. It is convolved once, with the steps before the Add, then copied to each image;
    // the rest of the steps run on every image.
    if (c.out(0).num_elements == 0) return;
    Epilogue before, after;
    for (int s = 0; s < e.count; ++s) {
      Epilogue& part = s < add_step ? before : after;
      part.steps[part.count++] = e.steps[s];
    }
    convolve<T>(c, g, before);
    T* y = c.out(0).as<T>();
    const int64_t image = image_rows * channels;
    for (int64_t b = 1; b < out[0]; ++b) std::copy(y, y + image, y + b * image);
    apply_epilogue(y, 0, out[0] * image_rows, channels, after);
  }
};

// MaxPool(input): attrs ksize, strides, padding, explicit_paddings, data_format. AvgPool has
// no explicit_paddings attr (as in TensorFlow).
bool has_explicit_paddings(const OpDef& op) { return op.attr_specs.size() == 5; }
const std::vector<int64_t>& pool_explicit_paddings(const Attrs& attrs, const OpDef& op) {
  static const std::vector<int64_t> none;
  return has_explicit_paddings(op) ? attrs.list(kMaxPoolExplicitPaddings) : none;
}

void infer_pool(InferContext& c) {
  if (c.in(0).dtype == DType::Bool) c.fail(std::string(c.op.name) + " does not support bool tensors");
  if (c.op.name == std::string("AvgPool") && !is_floating(c.in(0).dtype))
    c.fail(std::string("AvgPool supports float and double, got ") + tf_type_name(c.in(0).dtype));
  const auto& ksize = four(c, kPoolKsize, "ksize");
  const auto& strides = four(c, kPoolStrides, "strides");
  const std::string& padding = c.attrs.s(kPoolPadding);
  check_padding(c, padding, pool_explicit_paddings(c.attrs, c.op));
  check_format(c, has_explicit_paddings(c.op) ? kMaxPoolFormat : kAvgPoolFormat);
  if (ksize[0] != 1 || ksize[3] != 1 || strides[0] != 1 || strides[3] != 1)
    c.fail("Pooling is not yet supported on the batch nor depth dimensions.");
  const Dims* in = image(c, 0, "input");
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  if (!in) {
    c.out(0).shape = TensorShape::unknown();
    return;
  }
  const auto& ep = pool_explicit_paddings(c.attrs, c.op);
  const bool ex = padding == "EXPLICIT";
  const int64_t oh = window(c, (*in)[1], ksize[1], 1, strides[1], padding, ex ? ep[2] : 0, ex ? ep[3] : 0).out;
  const int64_t ow = window(c, (*in)[2], ksize[2], 1, strides[2], padding, ex ? ep[4] : 0, ex ? ep[5] : 0).out;
  c.out(0).shape = TensorShape(Dims{(*in)[0], oh, ow, (*in)[3]});
}

template <bool kMax>
struct PoolKernel {
  template <class T>
  struct K {
    static void run(KernelContext& c) {
      const auto& ksize = c.attrs.list(kPoolKsize);
      static const std::vector<int64_t> ones{1, 1, 1, 1};
      const Geometry g = geometry(c, ksize[1], ksize[2], c.attrs.list(kPoolStrides), ones, c.attrs.s(kPoolPadding),
                                  pool_explicit_paddings(c.attrs, c.op));
      const T* x = c.in(0).as<T>();
      T* y = c.out(0).as<T>();
      const int64_t out_rows = g.n * g.y.out;
      const int64_t work_per_row = std::max<int64_t>(1, g.x.out * g.kh * g.kw * g.c);
      parallel_for(out_rows, std::max<int64_t>(1, kParallelWork / work_per_row), [&](int64_t lo, int64_t hi) {
        for (int64_t row = lo; row < hi; ++row) KILN_ISA_DISPATCH((row_body(g, x, y, row)));
      });
    }
    // One image row of output pixels (built per instruction set).
    KILN_ISA_BODY static void row_body(const Geometry& g, const T* x, T* y, int64_t row) {
      const int64_t b = row / g.y.out, oy = row % g.y.out;
      // The window's rows inside the image (padding is never part of a window).
      const int64_t y0 = std::max<int64_t>(0, oy * g.sh - g.y.pad_before);
      const int64_t y1 = std::min<int64_t>(g.h, oy * g.sh - g.y.pad_before + g.kh);
      for (int64_t ox = 0; ox < g.x.out; ++ox) {
        const int64_t x0 = std::max<int64_t>(0, ox * g.sw - g.x.pad_before);
        const int64_t x1 = std::min<int64_t>(g.w, ox * g.sw - g.x.pad_before + g.kw);
        const T* window = x + ((b * g.h + y0) * g.w + x0) * g.c;
        T* dst = y + ((b * g.y.out + oy) * g.x.out + ox) * g.c;
        const int64_t count = std::max<int64_t>(0, y1 - y0) * std::max<int64_t>(0, x1 - x0);
        // Channels in blocks of four vector registers, each block's values held in registers
        // across the whole window (one store per output, not one per tap); the rest as one
        // shorter block. Each channel sees the same taps in the same order either way.
        int64_t ch = 0;
        for (; ch + kBlock <= g.c; ch += kBlock) pixel(g, window + ch, dst + ch, y1 - y0, x1 - x0, count, kBlock);
        if (ch < g.c) pixel(g, window + ch, dst + ch, y1 - y0, x1 - x0, count, g.c - ch);
      }
    }
    // 256 bytes of T: four AVX-512 registers, eight AVX2 ones.
    static constexpr int64_t kBlock = std::max<int64_t>(1, 256 / static_cast<int64_t>(sizeof(T)));
    // The output pixel's `n` (at most kBlock) channels from the window's rows x columns of
    // input pixels, taps in row-major window order; an empty window averages to 0, as
    // TensorFlow's. Inlined, a whole block's n is a constant: its loops unroll into registers.
    KILN_ISA_BODY static void pixel(const Geometry& g, const T* __restrict window, T* __restrict dst, int64_t rows,
                                    int64_t cols, int64_t count, int64_t n) {
      T acc[kBlock];
      for (int64_t j = 0; j < n; ++j) acc[j] = kMax ? std::numeric_limits<T>::lowest() : T(0);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t q = 0; q < cols; ++q) {
          const T* __restrict src = window + (r * g.w + q) * g.c;
          for (int64_t j = 0; j < n; ++j) {
            if constexpr (kMax) {
              // As TensorFlow's max pooling: a NaN never wins (a window of NaNs gives the
              // lowest value), and of equal values (+0, -0) the first stays.
              acc[j] = src[j] > acc[j] ? src[j] : acc[j];
            } else {
              acc[j] += src[j];
            }
          }
        }
      for (int64_t j = 0; j < n; ++j) dst[j] = kMax ? acc[j] : count ? acc[j] / static_cast<T>(count) : T(0);
    }
  };
};

// Multiply-adds of one call, for the plan's scheduling (exec/plan.cc): each input element
// meets KH*KW*Cout/Cin filter elements (a depthwise filter's last dimension is the
// multiplier: the same formula), fewer by the strides. An unknown (batch) dimension counts
// as 1: a loaded signature's plan is made before any batch size is known.
int64_t conv_cost(const InputInfo* in, int, const Attrs& attrs) {
  if (in[0].unknown_rank || in[1].unknown_rank || in[0].dims->size() != 4 || in[1].dims->size() != 4) return 0;
  double input = 1, filter = 1, strides = 1;
  for (int64_t d : *in[0].dims) input *= static_cast<double>(std::max<int64_t>(d, 1));
  for (int64_t d : *in[1].dims) {
    if (d <= 0) return 0;
    filter *= static_cast<double>(d);
  }
  for (int64_t s : attrs.list(kConvStrides)) strides *= static_cast<double>(std::max<int64_t>(s, 1));
  return static_cast<int64_t>(std::min(input * filter / (static_cast<double>((*in[1].dims)[2]) * strides), 1e18));
}

// Convolutions and poolings of NHWC images compute each image from that image alone: the
// filter must be free, and a fused epilogue's vectors and residual per image too.
RowKind rows_of_images(const RowsContext& c) {
  const int format = &c.op == &op::MaxPool() ? kMaxPoolFormat : &c.op == &op::AvgPool() ? kAvgPoolFormat : kConvFormat;
  if (c.sized() || c.attrs.s(format) != "NHWC" || !c.rows(0) || (c.num_inputs > 1 && !c.free(1)))
    return RowKind::kOther;
  for (int i = 2; i < c.num_inputs; ++i)
    if (c.rows(i) ? c.rank(i) != 4 : !broadcasts_per_row(c.inputs[i], 4)) return RowKind::kOther;
  return RowKind::kRows;
}

}  // namespace

const OpDef& op::Conv2D() {
  static const OpDef def = {
      .name = "Conv2D",
      .num_inputs = 2,
      .num_outputs = 1,
      .input_args = {"input", "filter"},
      .traits = kPure | kTfjs | kWindowed,
      .attr_specs = {int_list_attr("strides"), string_attr("padding"), int_list_attr("explicit_paddings", {}),
                     string_attr("data_format", "NHWC"), int_list_attr("dilations", {1, 1, 1, 1}),
                     bool_attr("use_cudnn_on_gpu", true)},
      .infer = infer_conv2d,
      .kernels = kernels_for<Conv2DKernel, KILN_FLOATS>(),
      .cost = &conv_cost,
      .grad = &conv::conv2d_grad,
      .rows = &rows_of_images};
  return def;
}
const OpDef& op::DepthwiseConv2dNative() {
  static const OpDef def = {
      .name = "DepthwiseConv2dNative",
      .num_inputs = 2,
      .num_outputs = 1,
      .input_args = {"input", "filter"},
      .traits = kPure | kTfjs | kWindowed,
      .attr_specs = {int_list_attr("strides"), string_attr("padding"), int_list_attr("explicit_paddings", {}),
                     string_attr("data_format", "NHWC"), int_list_attr("dilations", {1, 1, 1, 1})},
      .infer = infer_conv2d,
      .kernels = kernels_for<Conv2DKernel, KILN_FLOATS>(),
      .cost = &conv_cost,
      .grad = &conv::depthwise_conv2d_grad,
      .rows = &rows_of_images};
  return def;
}
namespace {
// The fused rows differ only in which convolution they are (infer_conv2d and convolve ask).
OpDef fused_convolution_row(const char* name) {
  return {.name = name,
          .num_inputs = -1,
          .num_outputs = 1,
          .input_args = {"input", "filter", list_arg("args")},
          .traits = kPure | kInternal | kWindowed,
          .attr_specs = {int_list_attr("strides"), string_attr("padding"), int_list_attr("explicit_paddings", {}),
                         string_attr("data_format", "NHWC"), int_list_attr("dilations", {1, 1, 1, 1}),
                         string_attr("fused_ops")},
          .infer = infer_fused_conv2d,
          .kernels = kernels_for<FusedConv2DKernel, KILN_FLOATS>(),
          .cost = &conv_cost,
          .rows = &rows_of_images};
}
}  // namespace
const OpDef& op::KilnFusedConv2D() {
  static const OpDef def = fused_convolution_row("KilnFusedConv2D");
  return def;
}
const OpDef& op::KilnFusedDepthwiseConv2dNative() {
  static const OpDef def = fused_convolution_row("KilnFusedDepthwiseConv2dNative");
  return def;
}
const OpDef& op::MaxPool() {
  static const OpDef def = {.name = "MaxPool",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"input"},
                            .traits = kPure | kTfjs | kWindowed,
                            .attr_specs = {int_list_attr("ksize"), int_list_attr("strides"), string_attr("padding"),
                                           int_list_attr("explicit_paddings", {}), string_attr("data_format", "NHWC")},
                            .infer = infer_pool,
                            .kernels = kernels_for<PoolKernel<true>::K, KILN_NUMERIC>(),
                            .grad = &conv::max_pool_grad,
                            .rows = &rows_of_images};
  return def;
}
const OpDef& op::AvgPool() {
  static const OpDef def = {.name = "AvgPool",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"value"},
                            .traits = kPure | kTfjs | kWindowed,
                            .attr_specs = {int_list_attr("ksize"), int_list_attr("strides"), string_attr("padding"),
                                           string_attr("data_format", "NHWC")},
                            .infer = infer_pool,
                            .kernels = kernels_for<PoolKernel<false>::K, KILN_FLOATS>(),
                            .grad = &conv::avg_pool_grad,
                            .rows = &rows_of_images};
  return def;
}

}  // namespace kiln::ops
