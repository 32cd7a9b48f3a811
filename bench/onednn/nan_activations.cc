// What oneDNN's activation post-ops make of a NaN: a 1x1 and a depthwise convolution with
// BatchNormalization's multiply and add as binary post-ops, then nothing, a clip to [0, 6]
// (Relu6) or a Relu, over an input holding one NaN and one infinity. TensorFlow's Relu and
// Relu6 keep a NaN; a post-op that turns it into 0 cannot stand in for them. Built and run by
// compare.sh against both oneDNN versions.
#include <cmath>
#include <cstdio>
#include <limits>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>

namespace {

using dnnl::algorithm;
using dnnl::memory;

enum class Activation { kNone, kClip, kRelu };

const char* name_of(Activation a) { return a == Activation::kNone ? "none" : a == Activation::kClip ? "clip" : "relu"; }

void append_activation(dnnl::post_ops& po, Activation a) {
  if (a == Activation::kNone) return;
  const algorithm alg = a == Activation::kClip ? algorithm::eltwise_clip : algorithm::eltwise_relu;
  const float beta = a == Activation::kClip ? 6.f : 0.f;
#if DNNL_VERSION_MAJOR >= 3
  po.append_eltwise(alg, 0.f, beta);
#else
  po.append_eltwise(1.f, alg, 0.f, beta);
#endif
}

void check(dnnl::engine& eng, dnnl::stream& st, bool depthwise, Activation act) {
  const int h = 14, w = 14, c = 64, oc = depthwise ? 64 : 384, k = depthwise ? 3 : 1, pad = depthwise ? 1 : 0;
  const memory::desc src_md({1, c, h, w}, memory::data_type::f32, memory::format_tag::nhwc);
  const memory::desc dst_md({1, oc, h, w}, memory::data_type::f32, memory::format_tag::nhwc);
  const memory::desc weights_md(depthwise ? memory::dims{c, 1, 1, k, k} : memory::dims{oc, c, k, k},
                                memory::data_type::f32, memory::format_tag::any);
  const memory::desc vector_md({1, oc, 1, 1}, memory::data_type::f32, memory::format_tag::nhwc);
  dnnl::post_ops po;
  po.append_binary(algorithm::binary_mul, vector_md);
  po.append_binary(algorithm::binary_add, vector_md);
  append_activation(po, act);
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
#if DNNL_VERSION_MAJOR >= 3
  const dnnl::convolution_forward::primitive_desc pd(eng, dnnl::prop_kind::forward_inference,
                                                     algorithm::convolution_direct, src_md, weights_md, dst_md, {1, 1},
                                                     {0, 0}, {pad, pad}, {pad, pad}, attr);
#else
  const dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, algorithm::convolution_direct, src_md,
                                          weights_md, dst_md, {1, 1}, {0, 0}, {pad, pad}, {pad, pad});
  const dnnl::convolution_forward::primitive_desc pd(d, attr, eng);
#endif
  dnnl::convolution_forward conv(pd);
  memory src(src_md, eng), dst(dst_md, eng), weights(pd.weights_desc(), eng), scale(vector_md, eng),
      shift(vector_md, eng);
  float* x = static_cast<float*>(src.get_data_handle());
  for (size_t i = 0; i < src_md.get_size() / sizeof(float); ++i) x[i] = 1.f;
  x[(5 * w + 5) * c + 3] = std::numeric_limits<float>::quiet_NaN();  // pixel (5, 5), channel 3
  x[(7 * w + 7) * c + 4] = std::numeric_limits<float>::infinity();   // pixel (7, 7), channel 4
  float* f = static_cast<float*>(weights.get_data_handle());
  for (size_t i = 0; i < pd.weights_desc().get_size() / sizeof(float); ++i) f[i] = 0.5f;
  float* s = static_cast<float*>(scale.get_data_handle());
  float* b = static_cast<float*>(shift.get_data_handle());
  for (int i = 0; i < oc; ++i) s[i] = 1.f, b[i] = 0.f;
  conv.execute(st, {{DNNL_ARG_SRC, src},
                    {DNNL_ARG_WEIGHTS, weights},
                    {DNNL_ARG_DST, dst},
                    {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, scale},
                    {DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1, shift}});
  st.wait();
  // A 1x1 convolution mixes every channel into each output; a depthwise one keeps its own.
  const float* y = static_cast<const float*>(dst.get_data_handle());
  const float from_nan = y[(5 * w + 5) * oc + (depthwise ? 3 : 0)];
  const float from_inf = y[(7 * w + 7) * oc + (depthwise ? 4 : 0)];
  std::printf("%-9s %-4s %-26s NaN -> %g, inf -> %g\n", depthwise ? "depthwise" : "1x1", name_of(act),
              pd.impl_info_str(), from_nan, from_inf);
}

}  // namespace

int main() {
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream st(eng);
  const dnnl::version_t* v = dnnl_version();
  std::printf("oneDNN %d.%d.%d\n", v->major, v->minor, v->patch);
  for (bool depthwise : {false, true})
    for (Activation act : {Activation::kNone, Activation::kClip, Activation::kRelu}) check(eng, st, depthwise, act);
}
