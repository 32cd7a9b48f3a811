// vmath's functions for one instruction-set level: this file is compiled once per level
// (CMakeLists.txt, KILN_ISA_SOURCES), because Eigen picks its packet width with the
// preprocessor. kernels/vmath.cc runs the variant cpu_isa() picked.
#include <algorithm>
#include <cmath>
#include <new>
#include <string>
#include <type_traits>

#include "kernels/eigen_core.h"
#include "kernels/vmath.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kiln::kernels::KILN_ISA_NS {
namespace {
template <class T>
using Arr = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
template <class T>
using OutArr = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
}  // namespace

#define KILN_VMATH_IMPL(name, expr)                  \
  void name(const float* x, float* y, int64_t n) {   \
    auto a = Arr<float>(x, n);                       \
    OutArr<float>(y, n) = expr;                      \
  }                                                  \
  void name(const double* x, double* y, int64_t n) { \
    auto a = Arr<double>(x, n);                      \
    OutArr<double>(y, n) = expr;                     \
  }
KILN_VMATH_IMPL(vlog, a.log())
KILN_VMATH_IMPL(vrsqrt, a.rsqrt())
#undef KILN_VMATH_IMPL

namespace {
// Eigen's vector exp clamps its argument below at about ln(smallest normal) (-88.38 for float,
// -709.78 for double), so exp(-inf) came out as a denormal instead of 0. Elements below the
// clamp are recomputed with the C library, whose results there are IEEE's (denormals, then 0).
template <class T>
constexpr T kExpClamp = std::is_same_v<T, float> ? T(-88.3762626647949) : T(-709.436139303);

// sigmoid(x) = 1 / (1 + exp(-x)): within 2 ulps everywhere. Eigen's own logistic() returns
// exp(x) below x = -9 for float, thousands of ulps from the true value. Eigen's exp clamp
// (above) does not matter here: where it bites, -x < -88.38, the result rounds to 1 anyway.
// Every element goes through the same vector code, a run's tail through a zero-padded
// vector: an element's result depends on its value only, not on where it sits in the array
// (an Eigen expression computes an unaligned head and the tail with the scalar exp, ulps
// apart). A convolution's swish epilogue (ops/conv_epilogue.h) relies on it: it takes the
// sigmoid of a row at a time and must match the separate op's over the whole tensor.
// One vector's sigmoid and tanh, inlined into every caller (the loops below and vlanes'
// register chains; a call per vector cost the AVX2 chain most of its gain). Every copy rounds
// alike because this file is compiled without multiply-add contraction (CMakeLists.txt):
// with it, clang at -O1 fused a multiply and an add in one inlined copy and not in another,
// and a fused chain's tanh differed from the op's in the last bit.
template <class Packet>
[[gnu::always_inline]] inline Packet sigmoid_packet(Packet v) {
  namespace ei = Eigen::internal;
  const Packet one = ei::pset1<Packet>(typename ei::unpacket_traits<Packet>::type(1));
  return ei::pdiv(one, ei::padd(one, ei::pexp(ei::pnegate(v))));
}
template <class Packet>
[[gnu::always_inline]] inline Packet tanh_packet(Packet v) {
  return Eigen::internal::ptanh(v);
}
// y[i] = f(x[i]) a vector at a time, the tail through a zero-padded vector.
template <class T, class F>
void packets_impl(const T* x, T* y, int64_t n, F f) {
  namespace ei = Eigen::internal;
  using Packet = typename ei::packet_traits<T>::type;
  constexpr int64_t kLanes = sizeof(Packet) / sizeof(T);  // (unpacket_traits<__m128> warns: attributes)
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) ei::pstoreu(y + i, f(ei::ploadu<Packet>(x + i)));
  if (i == n) return;
  alignas(64) T tail[kLanes] = {};
  std::copy(x + i, x + n, tail);
  ei::pstoreu(tail, f(ei::ploadu<Packet>(tail)));
  std::copy(tail, tail + (n - i), y + i);
}
template <class T>
void sigmoid_impl(const T* x, T* y, int64_t n) {
  using Packet = typename Eigen::internal::packet_traits<T>::type;
  packets_impl(x, y, n, [](Packet v) { return sigmoid_packet(v); });
}
// One vector's exp before that fix-up, inlined into every caller as tanh_packet is (vlanes'
// register chains fix their lanes below the clamp as exp_impl does).
template <class Packet>
[[gnu::always_inline]] inline Packet exp_packet(Packet v) {
  return Eigen::internal::pexp(v);
}
// Every element through the vector code (packets_impl), so that an element's exp does
// not depend on where it sits in the array, as sigmoid's.
template <class T>
void exp_impl(const T* x, T* y, int64_t n) {
  using Packet = typename Eigen::internal::packet_traits<T>::type;
  packets_impl(x, y, n, [](Packet v) { return exp_packet(v); });
  // A vectorizable scan first (a count: GCC does not vectorize an or of bools), so the
  // scalar fix-up runs only for arrays that need it.
  int64_t below = 0;
  for (int64_t i = 0; i < n; ++i) below += x[i] < kExpClamp<T>;
  if (below == 0) return;
  for (int64_t i = 0; i < n; ++i)
    if (x[i] < kExpClamp<T>) y[i] = std::exp(x[i]);
}
// A correctly rounded square root, as IEEE (and TensorFlow) give it: Eigen's fast-math
// packet sqrt is an rsqrt estimate with a Newton step, 1 ulp off and NaN for +inf. The file
// is compiled with -fno-math-errno, so this loop becomes vsqrtps/vsqrtpd.
template <class T>
void sqrt_impl(const T* x, T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::sqrt(x[i]);
}
}  // namespace

namespace {
// libmvec's float functions at this file's vector width, by their vector-ABI names ("e" AVX-512,
// "d" AVX2, "b" SSE; N lanes; "v" one vector argument): each takes and returns one register.
// A run's tail goes through a zero-padded vector. Without the function: the scalar one.
#define KILN_LIBMVEC_WIDTH(Vec, lanes, prefix, loadu, storeu) \
  using VecF = Vec;                                           \
  constexpr int kLanes = lanes;                               \
  constexpr const char* kWidth = prefix;                      \
  inline VecF load(const float* p) { return loadu(p); }       \
  inline void store(float* p, VecF v) { storeu(p, v); }
#if defined(__AVX512F__)
KILN_LIBMVEC_WIDTH(__m512, 16, "_ZGVeN16v_", _mm512_loadu_ps, _mm512_storeu_ps)
#elif defined(__AVX2__)
KILN_LIBMVEC_WIDTH(__m256, 8, "_ZGVdN8v_", _mm256_loadu_ps, _mm256_storeu_ps)
#elif defined(__x86_64__)
KILN_LIBMVEC_WIDTH(__m128, 4, "_ZGVbN4v_", _mm_loadu_ps, _mm_storeu_ps)
#endif
#undef KILN_LIBMVEC_WIDTH

#if defined(__x86_64__)
using VecFn = VecF (*)(VecF);
VecFn libmvec_float(const char* name) {
  return reinterpret_cast<VecFn>(const_cast<void*>(libmvec_symbol((std::string(kWidth) + name).c_str())));
}
void apply_vector(VecFn fn, const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(y + i, fn(load(x + i)));
  if (i == n) return;
  alignas(64) float tail[kLanes] = {};
  std::copy(x + i, x + n, tail);
  store(tail, fn(load(tail)));
  std::copy(tail, tail + (n - i), y + i);
}
#endif
}  // namespace

void verfc(const float* x, float* y, int64_t n) {
#if defined(__x86_64__)
  static const VecFn fn = libmvec_float("erfcf");
  if (fn) return apply_vector(fn, x, y, n);
#endif
  for (int64_t i = 0; i < n; ++i) y[i] = std::erfc(x[i]);
}

// A pass that only divides (x / 3 in a fused chain, a mean's count) waits on the divider:
// vdivps takes ten cycles per 16 floats on Skylake-SP and Ice Lake. Three multiply-adds give
// the same quotients bit for bit, by Markstein's lemma (as proved in Russinoff's "Formal
// Verification of Floating-Point Hardware Design", ch. 13): with y = RN(1/b) and q within one
// ulp of a/b, r = a - b*q is exact (one fused multiply-add) and RN(q + r*y) = RN(a/b).
// Here y = RN(1/|s|) comes from one scalar division; q = x*y. (The code forms |s|*q - x, r
// negated, so that a -0 numerator keeps its sign; a negative s flips the sign at the end.)
// Vectors with a lane outside |x| in [2^-62, 2^62] (zeros excepted), and s outside
// [2^-63, 2^63], divide: inside, every intermediate is a normal number and r is exact.
// tests/ops/fast_division_test.cc compares every significand at the range's edges, the
// specials and random pairs with division. (Not worth it where other arithmetic fills the
// pass: sigmoid's divisions run in the divider beside its exp, and the same sequence there
// made it slower. Nor at AVX2: vdivps's 8 lanes take about as long as the sequence.)
#if defined(__AVX512F__)
namespace {
// 16 lanes divided by one divisor s, as above: the constants once per divisor, the sequence
// per vector (vdivide_by_scalar's loop and vlanes' division by a scalar share it).
struct DivideByScalar {
  explicit DivideByScalar(float s)
      : fast(std::fabs(s) >= 0x1p-63f && std::fabs(s) <= 0x1p63f),
        sv(_mm512_set1_ps(std::fabs(s))),
        yv(_mm512_set1_ps(1.f / std::fabs(s))),
        div(_mm512_set1_ps(s)),
        sign(_mm512_set1_epi32(std::signbit(s) ? int(0x80000000u) : 0)) {}
  __m512 operator()(__m512 v) const {
    if (!fast) return _mm512_div_ps(v, div);
    const __m512i magnitude = _mm512_set1_epi32(0x7FFFFFFF), low = _mm512_set1_epi32(0x20800000),
                  span = _mm512_set1_epi32(0x5E800000 - 0x20800000);  // 2^-62, 2^62
    const __m512i bits = _mm512_and_si512(_mm512_castps_si512(v), magnitude);
    const __mmask16 ok = _mm512_cmple_epu32_mask(_mm512_sub_epi32(bits, low), span) |
                         _mm512_cmpeq_epi32_mask(bits, _mm512_setzero_si512());
    if (ok != 0xFFFF) return _mm512_div_ps(v, div);
    __m512 q = _mm512_mul_ps(v, yv);
    q = _mm512_fnmadd_ps(_mm512_fmsub_ps(sv, q, v), yv, q);
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(q), sign));
  }
  bool fast;
  __m512 sv, yv, div;
  __m512i sign;
};
}  // namespace
#endif

void vdivide_by_scalar(const float* x, float s, float* y, int64_t n) {
#if defined(__AVX512F__)
  const DivideByScalar divide(s);
  if (divide.fast) {
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 lanes = n - i >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1);
      _mm512_mask_storeu_ps(y + i, lanes, divide(_mm512_maskz_loadu_ps(lanes, x + i)));
    }
    return;
  }
#endif
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] / s;
}

namespace {
// The register forms at this level: vectors of kWidth floats, each op as its span kernel computes
// it here (Eigen's packets, the divider or the division-by-a-scalar sequence, Relu's select).
#if defined(__AVX512F__)
struct Lanes {
  using V = __m512;
  using Packet = Eigen::internal::Packet16f;
  using Divider = DivideByScalar;
  static constexpr int kWidth = 16;
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V div(V a, V b) { return _mm512_div_ps(a, b); }
  static V neg(V a) {
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32(INT32_MIN)));
  }
  // b where take_b (the op's comparison failed: Maximum's a > b, Minimum's a < b), else a; a + b
  // where either is NaN (ops/binary.cc's MaxF and MinF).
  static V pick(__mmask16 take_b, V a, V b) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q), _mm512_mask_blend_ps(take_b, a, b),
                                _mm512_add_ps(a, b));
  }
  static V maximum(V a, V b) { return pick(_mm512_cmp_ps_mask(a, b, _CMP_NGT_UQ), a, b); }
  static V minimum(V a, V b) { return pick(_mm512_cmp_ps_mask(a, b, _CMP_NLT_UQ), a, b); }
  static V relu(V a) {  // x < 0 ? 0 : x, as the op: NaN and -0 stay
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, _mm512_setzero_ps(), _CMP_LT_OQ), a, _mm512_setzero_ps());
  }
  static V relu6(V a) {  // x < 0 ? 0 : (x > 6 ? 6 : x)
    const V six = _mm512_set1_ps(6.f);
    return relu(_mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, six, _CMP_GT_OQ), a, six));
  }
  static bool any_below(V a, float x) { return _mm512_cmp_ps_mask(a, _mm512_set1_ps(x), _CMP_LT_OQ) != 0; }
};
#elif defined(__AVX2__) && defined(__FMA__)
struct Lanes {
  using V = __m256;
  using Packet = Eigen::internal::Packet8f;
  struct Divider {  // at AVX2 the span kernel divides (the sequence saves nothing at 8 lanes)
    explicit Divider(float s) : div(_mm256_set1_ps(s)) {}
    V operator()(V v) const { return _mm256_div_ps(v, div); }
    V div;
  };
  static constexpr int kWidth = 8;
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V neg(V a) { return _mm256_xor_ps(a, _mm256_set1_ps(-0.f)); }
  static V pick(V take_b, V a, V b) {
    return _mm256_blendv_ps(_mm256_blendv_ps(a, b, take_b), _mm256_add_ps(a, b), _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
  }
  static V maximum(V a, V b) { return pick(_mm256_cmp_ps(a, b, _CMP_NGT_UQ), a, b); }
  static V minimum(V a, V b) { return pick(_mm256_cmp_ps(a, b, _CMP_NLT_UQ), a, b); }
  static V relu(V a) {
    return _mm256_blendv_ps(a, _mm256_setzero_ps(), _mm256_cmp_ps(a, _mm256_setzero_ps(), _CMP_LT_OQ));
  }
  static V relu6(V a) {
    const V six = _mm256_set1_ps(6.f);
    return relu(_mm256_blendv_ps(a, six, _mm256_cmp_ps(a, six, _CMP_GT_OQ)));
  }
  static bool any_below(V a, float x) {
    return _mm256_movemask_ps(_mm256_cmp_ps(a, _mm256_set1_ps(x), _CMP_LT_OQ)) != 0;
  }
};
#endif

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
// exp of one vector as exp_impl gives it: the packet, then the C library's below the clamp.
Lanes::V exp_lanes(Lanes::V a) {
  Lanes::V y = exp_packet<Lanes::Packet>(a);
  if (!Lanes::any_below(a, kExpClamp<float>)) return y;
  alignas(64) float xs[Lanes::kWidth], ys[Lanes::kWidth];
  Lanes::store(xs, a);
  Lanes::store(ys, y);
  for (int l = 0; l < Lanes::kWidth; ++l)
    if (xs[l] < kExpClamp<float>) ys[l] = std::exp(xs[l]);
  return Lanes::load(ys);
}
// Eight vectors per step: one dispatch per 8 * kWidth lanes, and eight independent chains in
// flight (four took 10% longer on a 1M chain at AVX-512).
constexpr int kV = 8;
using Block = Lanes::V[kV];  // the accumulator: the previous step's result (LaneStep::a_prev)
// acc[j] = f(operand a), a from the accumulator or the register file; unrolled, so that the
// accumulator is eight registers.
template <class F>
[[gnu::always_inline]] inline void unary_step(Block& acc, const Lanes::V* a, bool a_acc, F f) {
  if (a_acc) {
#pragma GCC unroll 8
    for (int j = 0; j < kV; ++j) acc[j] = f(acc[j]);
  } else {
#pragma GCC unroll 8
    for (int j = 0; j < kV; ++j) acc[j] = f(a[j]);
  }
}
template <class F>
[[gnu::always_inline]] inline void binary_step(Block& acc, const Lanes::V* a, const Lanes::V* b, bool a_acc, bool b_acc,
                                               F f) {
  if (a_acc && b_acc) {
#pragma GCC unroll 8
    for (int j = 0; j < kV; ++j) acc[j] = f(acc[j], acc[j]);
  } else if (a_acc) {
#pragma GCC unroll 8
    for (int j = 0; j < kV; ++j) acc[j] = f(acc[j], b[j]);
  } else if (b_acc) {
#pragma GCC unroll 8
    for (int j = 0; j < kV; ++j) acc[j] = f(a[j], acc[j]);
  } else {
#pragma GCC unroll 8
    for (int j = 0; j < kV; ++j) acc[j] = f(a[j], b[j]);
  }
}
int64_t run_lanes(const LaneStep* steps, int num_steps, int num_inputs, const float* const* inputs, const char* scalar,
                  float* out, int64_t n) {
  using V = Lanes::V;
  using Packet = Lanes::Packet;
  using Divider = Lanes::Divider;
  constexpr int kW = Lanes::kWidth;
  if (num_steps <= 0 || num_steps > kMaxLaneRegisters) return 0;
  V r[kMaxLaneRegisters][kV];  // the register file: inputs, and the results kept (LaneStep::keep)
  // The program in a local copy: read through the caller's pointer, every step's fields were
  // loaded again after each vector store (a vector type may alias anything), 25% of the 1M chain.
  LaneStep program[kMaxLaneRegisters];
  std::copy(steps, steps + num_steps, program);
  // A scalar input is broadcast once; a division by one keeps its divisor's constants.
  alignas(64) unsigned char divisors[kMaxLaneRegisters][sizeof(Divider)];
  for (int k = 0; k < num_inputs; ++k)
    if (scalar[k])
      for (int j = 0; j < kV; ++j) r[k][j] = Lanes::set1(inputs[k][0]);
  for (int s = 0; s < num_steps; ++s)
    if (steps[s].op == LaneOp::kDiv && steps[s].b < num_inputs && scalar[steps[s].b])
      new (divisors[s]) Divider(inputs[steps[s].b][0]);
  const int64_t whole = n - n % (kW * kV);
  for (int64_t i = 0; i < whole; i += kW * kV) {
    // The inputs that are whole tensors: their lanes here.
    for (int k = 0; k < num_inputs; ++k)
      if (!scalar[k])
        for (int j = 0; j < kV; ++j) r[k][j] = Lanes::load(inputs[k] + i + kW * j);
    Block acc;
    for (int s = 0; s < num_steps; ++s) {
      const LaneStep& st = program[s];
      const V* a = r[st.a];
      const V* b = st.b >= 0 ? r[st.b] : nullptr;
      switch (st.op) {
        case LaneOp::kTanh:
          unary_step(acc, a, st.a_prev, [](V v) { return tanh_packet<Packet>(v); });
          break;
        case LaneOp::kSigmoid:
          unary_step(acc, a, st.a_prev, [](V v) { return sigmoid_packet<Packet>(v); });
          break;
        case LaneOp::kExp:
          unary_step(acc, a, st.a_prev, [](V v) { return exp_lanes(v); });
          break;
        case LaneOp::kNeg:
          unary_step(acc, a, st.a_prev, [](V v) { return Lanes::neg(v); });
          break;
        case LaneOp::kSquare:
          unary_step(acc, a, st.a_prev, [](V v) { return Lanes::mul(v, v); });
          break;
        case LaneOp::kRelu:
          unary_step(acc, a, st.a_prev, [](V v) { return Lanes::relu(v); });
          break;
        case LaneOp::kRelu6:
          unary_step(acc, a, st.a_prev, [](V v) { return Lanes::relu6(v); });
          break;
        case LaneOp::kMaximum:
          binary_step(acc, a, b, st.a_prev, st.b_prev, [](V x, V y) { return Lanes::maximum(x, y); });
          break;
        case LaneOp::kMinimum:
          binary_step(acc, a, b, st.a_prev, st.b_prev, [](V x, V y) { return Lanes::minimum(x, y); });
          break;
        case LaneOp::kAdd:
          binary_step(acc, a, b, st.a_prev, st.b_prev, [](V x, V y) { return Lanes::add(x, y); });
          break;
        case LaneOp::kSub:
          binary_step(acc, a, b, st.a_prev, st.b_prev, [](V x, V y) { return Lanes::sub(x, y); });
          break;
        case LaneOp::kMul:
          binary_step(acc, a, b, st.a_prev, st.b_prev, [](V x, V y) { return Lanes::mul(x, y); });
          break;
        case LaneOp::kDiv:
          if (st.b < num_inputs && scalar[st.b]) {
            const Divider& divide = *std::launder(reinterpret_cast<const Divider*>(divisors[s]));
            unary_step(acc, a, st.a_prev, [&divide](V v) { return divide(v); });
          } else {
            binary_step(acc, a, b, st.a_prev, st.b_prev, [](V x, V y) { return Lanes::div(x, y); });
          }
          break;
        case LaneOp::kNone:  // never planned: lane_program refuses ops without a lane form
          for (int j = 0; j < kV; ++j) acc[j] = Lanes::set1(0.f);
          break;
      }
      if (st.keep)
        for (int j = 0; j < kV; ++j) r[st.dst][j] = acc[j];
    }
#pragma GCC unroll 8
    for (int j = 0; j < kV; ++j) Lanes::store(out + i + kW * j, acc[j]);
  }
  return whole;
}
#endif
}  // namespace

int64_t vlanes(const LaneStep* steps, int num_steps, int num_inputs, const float* const* inputs, const char* scalar,
               float* out, int64_t n) {
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
  return run_lanes(steps, num_steps, num_inputs, inputs, scalar, out, n);
#else
  (void)steps, (void)num_steps, (void)num_inputs, (void)inputs, (void)scalar, (void)out, (void)n;
  return 0;
#endif
}

void vexp(const float* x, float* y, int64_t n) { exp_impl(x, y, n); }
void vexp(const double* x, double* y, int64_t n) { exp_impl(x, y, n); }
// float32 tanh through tanh_packet (vlanes' register chains use it too); float64 as Eigen's
// expression computes it.
void vtanh(const float* x, float* y, int64_t n) {
  using Packet = Eigen::internal::packet_traits<float>::type;
  packets_impl(x, y, n, [](Packet v) { return tanh_packet(v); });
}
void vtanh(const double* x, double* y, int64_t n) { OutArr<double>(y, n) = Arr<double>(x, n).tanh(); }
void vsigmoid(const float* x, float* y, int64_t n) { sigmoid_impl(x, y, n); }
void vsigmoid(const double* x, double* y, int64_t n) { sigmoid_impl(x, y, n); }
void vsqrt(const float* x, float* y, int64_t n) { sqrt_impl(x, y, n); }
void vsqrt(const double* x, double* y, int64_t n) { sqrt_impl(x, y, n); }

}  // namespace kiln::kernels::KILN_ISA_NS
