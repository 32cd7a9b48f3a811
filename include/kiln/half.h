// kiln::float16 (IEEE binary16, TensorFlow's half) and kiln::bfloat16 (float32's top half),
// the element types of DType::Float16 and DType::BFloat16. kiln stores and moves them like
// any dtype; it computes with them in float32 and rounds each result once, as TensorFlow's
// CPU kernels do per operation.
// Conversions round to nearest even; NaN stays NaN (quiet), overflow becomes infinity.
#pragma once
#include <cstdint>
#include <cstring>
#include <limits>
#include <ostream>
#include <type_traits>

namespace kiln {
namespace detail {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint16_t float_to_half_bits(float value) {
  uint32_t f = float_bits(value);
  const uint32_t sign = f & 0x80000000u;
  f ^= sign;
  uint16_t out;
  if (f >= 0x47800000u) {  // 2^16 and beyond (after rounding every such value overflows), Inf, NaN
    out = f > 0x7f800000u ? 0x7e00 : 0x7c00;
  } else if (f < 0x38800000u) {  // below 2^-14: a subnormal half or zero
    // Adding 0.5 lines the half's subnormal bits up with the float's low mantissa bits, and
    // the float addition rounds them to nearest even.
    const float shifted = bits_float(f) + 0.5f;
    out = static_cast<uint16_t>(float_bits(shifted) - 0x3f000000u);
  } else {
    const uint32_t odd = (f >> 13) & 1u;  // round half to even
    f += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu + odd;
    out = static_cast<uint16_t>(f >> 13);
  }
  return static_cast<uint16_t>(out | (sign >> 16));
}

inline float half_bits_to_float(uint16_t h) {
  constexpr uint32_t kExpMask = 0x7c00u << 13;
  uint32_t o = (h & 0x7fffu) << 13;
  const uint32_t exp = o & kExpMask;
  o += static_cast<uint32_t>(127 - 15) << 23;
  if (exp == kExpMask) {
    o += static_cast<uint32_t>(128 - 16) << 23;  // Inf or NaN
  } else if (exp == 0) {                         // zero or subnormal: renormalize
    o += 1u << 23;
    o = float_bits(bits_float(o) - bits_float(113u << 23));
  }
  return bits_float(o | (static_cast<uint32_t>(h & 0x8000u) << 16));
}

inline uint16_t float_to_bfloat16_bits(float value) {
  const uint32_t f = float_bits(value);
  if ((f & 0x7fffffffu) > 0x7f800000u) return (f & 0x80000000u) ? 0xffc0 : 0x7fc0;  // NaN, quiet
  return static_cast<uint16_t>((f + 0x7fffu + ((f >> 16) & 1u)) >> 16);
}
inline float bfloat16_bits_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

// A 16-bit float of one of the two formats; Codec converts its bits.
template <class Codec>
struct Float16Base {
  uint16_t bits;
  Float16Base() = default;
  template <class T>
  requires std::is_arithmetic_v<T>
  explicit Float16Base(T v) : bits(Codec::encode(static_cast<float>(v))) {}
  explicit operator float() const { return Codec::decode(bits); }
  template <class T>
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, float>) explicit operator T() const {
    return static_cast<T>(Codec::decode(bits));
  }
  static Float16Base from_bits(uint16_t b) {
    Float16Base r;
    r.bits = b;
    return r;
  }
  friend bool operator==(Float16Base a, Float16Base b) { return float(a) == float(b); }
  friend bool operator!=(Float16Base a, Float16Base b) { return float(a) != float(b); }
  friend bool operator<(Float16Base a, Float16Base b) { return float(a) < float(b); }
  friend bool operator<=(Float16Base a, Float16Base b) { return float(a) <= float(b); }
  friend bool operator>(Float16Base a, Float16Base b) { return float(a) > float(b); }
  friend bool operator>=(Float16Base a, Float16Base b) { return float(a) >= float(b); }
  friend std::ostream& operator<<(std::ostream& os, Float16Base v) { return os << float(v); }
};

struct HalfCodec {
  static uint16_t encode(float f) { return float_to_half_bits(f); }
  static float decode(uint16_t b) { return half_bits_to_float(b); }
};
struct BFloat16Codec {
  static uint16_t encode(float f) { return float_to_bfloat16_bits(f); }
  static float decode(uint16_t b) { return bfloat16_bits_to_float(b); }
};

}  // namespace detail

using float16 = detail::Float16Base<detail::HalfCodec>;
using bfloat16 = detail::Float16Base<detail::BFloat16Codec>;

// True for the 16-bit float types, which kiln computes with through float32.
template <class T>
inline constexpr bool is_reduced_float_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

}  // namespace kiln

// numeric_limits, so generic code (Cast's saturation, the fuzzer's extreme values) reads them
// as it reads float's; each format's constants are its bit patterns.
namespace kiln::detail {
template <class F, uint16_t kMin, uint16_t kLowest, uint16_t kMax, uint16_t kEpsilon, uint16_t kInfinity,
          uint16_t kQuietNaN>
struct Float16Limits {
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_infinity = true;
  static F min() { return F::from_bits(kMin); }
  static F lowest() { return F::from_bits(kLowest); }
  static F max() { return F::from_bits(kMax); }
  static F epsilon() { return F::from_bits(kEpsilon); }
  static F infinity() { return F::from_bits(kInfinity); }
  static F quiet_NaN() { return F::from_bits(kQuietNaN); }
  static F denorm_min() { return F::from_bits(0x0001); }
};
}  // namespace kiln::detail
template <>
class std::numeric_limits<kiln::float16>
    : public kiln::detail::Float16Limits<kiln::float16, 0x0400, 0xfbff, 0x7bff, 0x1400, 0x7c00, 0x7e00> {};
template <>
class std::numeric_limits<kiln::bfloat16>
    : public kiln::detail::Float16Limits<kiln::bfloat16, 0x0080, 0xff7f, 0x7f7f, 0x3c00, 0x7f80, 0x7fc0> {};
