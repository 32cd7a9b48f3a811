// oneDNN (libdnnl.so.2, the CPU library TensorFlow and PyTorch use), loaded at first use like
// OpenBLAS: kiln runs without it and the same binary picks it up where it is installed. Its
// JIT convolutions beat kiln's im2col + GEMM on every ResNet50 layer measured
// (docs/perf/dispatch.md), mostly because they read a filter reordered once into their
// blocked layout, where a GEMM repacks the filter on every call.
#pragma once
#include <cstdint>

namespace kiln::detail {
struct TensorImpl;
}

namespace kiln::kernels::onednn {

// A float32 NHWC convolution. Its filter is [KH, KW, C / groups, OC], group g's outputs
// OC / groups at g * OC / groups (a depthwise filter [KH, KW, C, M] is groups = C).
struct Conv2D {
  int64_t n, h, w, c;  // input
  int64_t oh, ow, oc;  // output
  int64_t kh, kw, sh, sw, dh, dw;
  int64_t pad_top, pad_left;
  int64_t groups = 1;
};

// Whether convolutions may run on oneDNN: the library loaded, KILN_ONEDNN is not "0" and
// tests have not turned it off. Loading it also hands kiln's parallel_for to oneDNN's OpenMP
// team (core/parallel.h, set_team_runner), where the library runs on OpenMP: its threads spin
// a while after each convolution, and kiln's pool beside them would share the cores with
// that spinning (MobileNetV2 at batch 1 on two threads: a quarter of the samples in libgomp).
bool usable();
// "onednn <version> (<ISA it runs>)", or "kiln (<why not>)" (kiln::config::convolution_library).
const char* description();
// Tests: route convolutions to kiln's own kernels (false) or to oneDNN when usable (true).
void enable(bool on);

// What a convolution computes inside oneDNN after the sums where BatchNormalization is folded
// (fold_batch_norm_requested): the filter times a per-output-channel scale (folded into the
// reordered copy, cached with it), plus a per-channel bias, then an activation, each output
// while it is in registers. Not TensorFlow's bits: w*s summed rounds differently from the sum
// times s, and oneDNN's Relu and clip turn NaN into 0 where TensorFlow's Relu and Relu6 keep
// it (docs/perf/models.md, sessions 33 and 34).
enum class Activation : uint8_t { kNone, kRelu, kRelu6 };
struct Folded {
  const detail::TensorImpl* scale = nullptr;  // [OC] float32; null: the filter as it is
  const float* bias = nullptr;                // [OC]; null: none
  Activation activation = Activation::kNone;
};

// y = conv(x, filter), row-major NHWC output. The filter's reordered copy is cached while the
// filter tensor lives (kiln's tensors are immutable, and the cache's reference keeps a
// variable's value from being updated in place), so a served model reorders each filter
// once. Returns false, having written nothing, where oneDNN cannot run the convolution.
bool conv2d(const Conv2D& geometry, const float* x, const detail::TensorImpl& filter, float* y, int threads,
            const Folded& folded = {});
// Whether KILN_FOLD_BATCH_NORM=1 asked for BatchNormalization's scale and shift (and the
// Relu or Relu6 after them) to run inside oneDNN's convolutions (Folded); tests override it.
bool fold_batch_norm_requested();
void set_fold_batch_norm(bool on);

// C = op(A) op(B), row-major with leading dimensions, on oneDNN's GEMM in the calling thread
// (the caller splits large products). Its JIT kernels beat OpenBLAS's on the shapes measured
// (docs/perf/dispatch.md). Returns false, having written nothing, where oneDNN is not usable.
bool sgemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
           const float* b, int64_t ldb, float* c, int64_t ldc);

// Cached reordered filters, their bytes, and whether one of the filter at `data` is cached
// (tests and memory accounting).
int64_t cached_filters();
int64_t cached_filter_bytes();
bool holds_filter(const void* data);
// Convolutions run with Winograd's algorithm so far (KILN_ONEDNN_WINOGRAD=1; tests).
int64_t winograd_runs();
// Whether KILN_ONEDNN_WINOGRAD=1 asked for Winograd's 3x3 convolutions.
bool winograd_requested();

}  // namespace kiln::kernels::onednn
