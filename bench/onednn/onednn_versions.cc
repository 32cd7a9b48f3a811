// Times float32 convolutions of the real models' shapes on the oneDNN this file is built and
// linked against (NHWC input and output, weights in the primitive's own layout, reordered
// once), plain and with the per-channel multiply and add (BatchNormalization at inference)
// as binary post-ops, then with a clip (Relu6) after them. Built twice by compare.sh, against
// Debian's oneDNN 2.6 (the one kiln loads) and a oneDNN 3.x from PyPI, to see what a 3.x
// loader would buy. Not part of the build or CI: a measurement for docs/perf/models.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <vector>

namespace {

using dnnl::algorithm;
using dnnl::memory;

struct Shape {
  const char* name;
  int n, h, w, c, oc, k, stride, pad;
  bool depthwise;
};

enum class Epilogue { kNone, kMulAdd, kMulAddClip };

dnnl::post_ops post_ops_for(Epilogue e, const memory::desc& vector) {
  dnnl::post_ops po;
  if (e == Epilogue::kNone) return po;
  po.append_binary(algorithm::binary_mul, vector);
  po.append_binary(algorithm::binary_add, vector);
  if (e == Epilogue::kMulAddClip) {
#if DNNL_VERSION_MAJOR >= 3
    po.append_eltwise(algorithm::eltwise_clip, 0.f, 6.f);
#else
    po.append_eltwise(1.f, algorithm::eltwise_clip, 0.f, 6.f);
#endif
  }
  return po;
}

void fill(memory& m) {
  float* p = static_cast<float*>(m.get_data_handle());
  const size_t n = m.get_desc().get_size() / sizeof(float);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<float>(i % 13) * 0.01f - 0.05f;
}

// Best microseconds of `reps` calls after three warm ones.
double time_conv(dnnl::engine& eng, dnnl::stream& st, const Shape& s, Epilogue e, int reps, bool print_impl) {
  const int oh = (s.h + 2 * s.pad - s.k) / s.stride + 1, ow = (s.w + 2 * s.pad - s.k) / s.stride + 1;
  const memory::desc src_md({s.n, s.c, s.h, s.w}, memory::data_type::f32, memory::format_tag::nhwc);
  const memory::desc dst_md({s.n, s.oc, oh, ow}, memory::data_type::f32, memory::format_tag::nhwc);
  const memory::dims filter = s.depthwise ? memory::dims{s.c, 1, 1, s.k, s.k} : memory::dims{s.oc, s.c, s.k, s.k};
  const memory::desc weights_any(filter, memory::data_type::f32, memory::format_tag::any);
  const memory::desc vector_md({1, s.oc, 1, 1}, memory::data_type::f32, memory::format_tag::nhwc);
  dnnl::primitive_attr attr;
  attr.set_post_ops(post_ops_for(e, vector_md));
  const memory::dims strides = {s.stride, s.stride}, dilations = {0, 0}, pad_l = {s.pad, s.pad};
  const memory::dims pad_r = {(oh - 1) * s.stride + s.k - s.h - s.pad, (ow - 1) * s.stride + s.k - s.w - s.pad};
#if DNNL_VERSION_MAJOR >= 3
  const dnnl::convolution_forward::primitive_desc pd(eng, dnnl::prop_kind::forward_inference,
                                                     algorithm::convolution_direct, src_md, weights_any, dst_md,
                                                     strides, dilations, pad_l, pad_r, attr);
#else
  const dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, algorithm::convolution_direct, src_md,
                                          weights_any, dst_md, strides, dilations, pad_l, pad_r);
  const dnnl::convolution_forward::primitive_desc pd(d, attr, eng);
#endif
  dnnl::convolution_forward conv(pd);
  memory src(src_md, eng), dst(dst_md, eng), weights(pd.weights_desc(), eng), scale(vector_md, eng),
      shift(vector_md, eng);
  fill(src);
  fill(weights);
  fill(scale);
  fill(shift);
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
  if (e != Epilogue::kNone) {
    args.insert({DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, scale});
    args.insert({DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1, shift});
  }
  for (int i = 0; i < 3; ++i) conv.execute(st, args);
  st.wait();
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    conv.execute(st, args);
    st.wait();
    best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  if (print_impl) std::printf("%-26s %-26s", s.name, pd.impl_info_str());
  return best;
}

}  // namespace

int main() {
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream st(eng);
  const dnnl::version_t* v = dnnl_version();
  std::printf("oneDNN %d.%d.%d\n", v->major, v->minor, v->patch);
  const std::vector<Shape> shapes = {
      {.name = "ResNet50 b32 7x7/2 3-64",
       .n = 32,
       .h = 224,
       .w = 224,
       .c = 3,
       .oc = 64,
       .k = 7,
       .stride = 2,
       .pad = 3,
       .depthwise = false},
      {.name = "ResNet50 b32 1x1 64-256",
       .n = 32,
       .h = 56,
       .w = 56,
       .c = 64,
       .oc = 256,
       .k = 1,
       .stride = 1,
       .pad = 0,
       .depthwise = false},
      {.name = "ResNet50 b32 3x3 64 @56",
       .n = 32,
       .h = 56,
       .w = 56,
       .c = 64,
       .oc = 64,
       .k = 3,
       .stride = 1,
       .pad = 1,
       .depthwise = false},
      {.name = "ResNet50 b32 1x1 256-64",
       .n = 32,
       .h = 56,
       .w = 56,
       .c = 256,
       .oc = 64,
       .k = 1,
       .stride = 1,
       .pad = 0,
       .depthwise = false},
      {.name = "ResNet50 b32 3x3 128 @28",
       .n = 32,
       .h = 28,
       .w = 28,
       .c = 128,
       .oc = 128,
       .k = 3,
       .stride = 1,
       .pad = 1,
       .depthwise = false},
      {.name = "ResNet50 b32 3x3 256 @14",
       .n = 32,
       .h = 14,
       .w = 14,
       .c = 256,
       .oc = 256,
       .k = 3,
       .stride = 1,
       .pad = 1,
       .depthwise = false},
      {.name = "ResNet50 b32 1x1 1024-256",
       .n = 32,
       .h = 14,
       .w = 14,
       .c = 1024,
       .oc = 256,
       .k = 1,
       .stride = 1,
       .pad = 0,
       .depthwise = false},
      {.name = "ResNet50 b32 3x3 512 @7",
       .n = 32,
       .h = 7,
       .w = 7,
       .c = 512,
       .oc = 512,
       .k = 3,
       .stride = 1,
       .pad = 1,
       .depthwise = false},
      {.name = "MobileNetV2 b1 1x1 64-384",
       .n = 1,
       .h = 14,
       .w = 14,
       .c = 64,
       .oc = 384,
       .k = 1,
       .stride = 1,
       .pad = 0,
       .depthwise = false},
      {.name = "MobileNetV2 b1 1x1 16-96",
       .n = 1,
       .h = 112,
       .w = 112,
       .c = 16,
       .oc = 96,
       .k = 1,
       .stride = 1,
       .pad = 0,
       .depthwise = false},
      {.name = "MobileNetV2 b1 dw 384 @14",
       .n = 1,
       .h = 14,
       .w = 14,
       .c = 384,
       .oc = 384,
       .k = 3,
       .stride = 1,
       .pad = 1,
       .depthwise = true},
      {.name = "MobileNetV2 b1 dw 32 @112",
       .n = 1,
       .h = 112,
       .w = 112,
       .c = 32,
       .oc = 32,
       .k = 3,
       .stride = 1,
       .pad = 1,
       .depthwise = true},
      {.name = "MobileNetV2 b1 dw 144 @56",
       .n = 1,
       .h = 56,
       .w = 56,
       .c = 144,
       .oc = 144,
       .k = 3,
       .stride = 1,
       .pad = 1,
       .depthwise = true},
      {.name = "InceptionV3 b1 3x3 32-64",
       .n = 1,
       .h = 147,
       .w = 147,
       .c = 32,
       .oc = 64,
       .k = 3,
       .stride = 1,
       .pad = 1,
       .depthwise = false},
      {.name = "InceptionV3 b1 1x1 768-192",
       .n = 1,
       .h = 17,
       .w = 17,
       .c = 768,
       .oc = 192,
       .k = 1,
       .stride = 1,
       .pad = 0,
       .depthwise = false},
  };
  std::printf("%-26s %-26s %10s %10s %10s  (best us)\n", "shape", "implementation", "plain", "mul+add", "+clip");
  for (const Shape& s : shapes) {
    const int reps = s.n == 32 ? 30 : 2000;
    const double plain = time_conv(eng, st, s, Epilogue::kNone, reps, true);
    const double mul_add = time_conv(eng, st, s, Epilogue::kMulAdd, reps, false);
    const double clip = time_conv(eng, st, s, Epilogue::kMulAddClip, reps, false);
    std::printf(" %10.1f %10.1f %10.1f\n", plain, mul_add, clip);
  }
}
