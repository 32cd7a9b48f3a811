// Division without the divider (kernels/vmath.h): vdivide_by_scalar gives exactly what IEEE
// division gives, bit for bit, at every level this CPU runs: every significand (both signs)
// where the multiply-add sequence runs and at the range edges where it hands over to
// division, zeros, subnormals, infinities and NaNs, random pairs, and runs of every length
// (the masked tail: nothing written past it).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_isa.h"
#include "kernels/isa_dispatch.h"
#include "kernels/vmath.h"

namespace kiln::kernels {
KILN_ISA_DECLARE(void vdivide_by_scalar(const float* x, float s, float* y, int64_t n))
namespace {

using DivideByScalar = void (*)(const float*, float, float*, int64_t);

// Equal bits, or both NaN (a NaN's payload is the divider's business).
bool same(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

float from_bits(uint32_t u) { return std::bit_cast<float>(u); }

// Every significand at a biased exponent, positive then negative.
std::vector<float> every_significand(uint32_t exponent) {
  std::vector<float> x;
  x.reserve(size_t{2} << 23);
  for (uint32_t sign : {0u, 0x80000000u})
    for (uint32_t m = 0; m < (1u << 23); ++m) x.push_back(from_bits(sign | (exponent << 23) | m));
  return x;
}

// Zeros, subnormals, the largest and smallest normals, infinities, NaN.
std::vector<float> specials() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {0.0f,
                          -0.0f,
                          inf,
                          -inf,
                          std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::denorm_min(),
                          -std::numeric_limits<float>::denorm_min(),
                          std::numeric_limits<float>::min(),
                          -std::numeric_limits<float>::min(),
                          std::numeric_limits<float>::max(),
                          -std::numeric_limits<float>::max(),
                          1.0f,
                          -1.0f,
                          3.0f};
  for (uint32_t m : {1u, 0x400000u, 0x7FFFFFu}) x.push_back(from_bits(m));  // subnormals
  return x;
}

template <class Fn>
std::vector<std::pair<std::string, Fn>> levels(Fn baseline, Fn avx2, Fn avx512) {
  std::vector<std::pair<std::string, Fn>> out = {{"baseline", baseline}};
#if defined(__x86_64__)
  if (cpu_isa_supported() != CpuIsa::kBaseline) out.emplace_back("avx2", avx2);
  if (cpu_isa_supported() == CpuIsa::kAvx512) out.emplace_back("avx512", avx512);
#else
  (void)avx2, (void)avx512;
#endif
  return out;
}

// Every exponent's numbers, sampled (both signs), and the specials.
std::vector<float> spread() {
  std::vector<float> x = specials();
  for (uint32_t e = 0; e < 255; ++e)
    for (uint32_t m = 0; m < (1u << 23); m += 104729) {
      x.push_back(from_bits((e << 23) | m));
      x.push_back(from_bits(0x80000000u | (e << 23) | m));
    }
  return x;
}

void expect_quotients(DivideByScalar fn, const std::vector<float>& x, float s, const std::string& what) {
  std::vector<float> y(x.size());
  fn(x.data(), s, y.data(), static_cast<int64_t>(x.size()));
  int64_t wrong = 0;
  for (size_t i = 0; i < x.size(); ++i)
    if (!same(y[i], x[i] / s) && wrong++ < 5)
      ADD_FAILURE() << what << ": " << std::hexfloat << x[i] << " / " << s << " = " << y[i] << ", division gives "
                    << x[i] / s;
  EXPECT_EQ(wrong, 0) << what;
}

std::vector<float> divisors() {
  const float inf = std::numeric_limits<float>::infinity();
  return {3.0f,
          -3.0f,
          7.0f,
          0.1f,
          1.0f / 3.0f,
          from_bits(0x3FFFFFFF),  // all-ones significand
          1.0f,
          -1.0f,
          0x1p63f,
          0x1p-63f,
          -0x1p-63f,
          0x1.000002p63f,  // just outside: division
          0x1p-64f,
          1e-30f,
          1e30f,
          0.0f,
          -0.0f,
          inf,
          -inf,
          std::numeric_limits<float>::quiet_NaN(),
          std::numeric_limits<float>::denorm_min()};
}

TEST(FastDivision, DivisionByAScalarIsDivisionForEverySignificand) {
  // The AVX-512 sequence: every significand where the quotient is near 1 and at the numerator
  // range's edges ([2^-62, 2^-61) is inside; of [2^62, 2^63) only 2^62), for divisors of both
  // signs and one with an all-ones significand. The other levels are division loops.
#if defined(__x86_64__)
  if (cpu_isa_supported() == CpuIsa::kAvx512)
    for (float s : {3.0f, -7.0f, from_bits(0x3FFFFFFF)})
      for (uint32_t e : {127u, 65u, 189u})
        expect_quotients(&isa_avx512::vdivide_by_scalar, every_significand(e), s,
                         "avx512 exponent " + std::to_string(e) + " divisor " + std::to_string(s));
#endif
  const std::vector<float> x = spread();
  for (const auto& [level, fn] : levels<DivideByScalar>(&isa_baseline::vdivide_by_scalar, &isa_avx2::vdivide_by_scalar,
                                                        &isa_avx512::vdivide_by_scalar)) {
    // Every divisor against a spread of numerators of every exponent, then random pairs.
    for (float s : divisors()) expect_quotients(fn, x, s, level + " divisor " + std::to_string(s));
    // (Odd rounds keep numerators and divisor inside the sequence's range, so that whole
    // vectors take it; even rounds draw from every float.)
    std::mt19937 rng(7);
    std::vector<float> r(1 << 18);
    auto inside = [&] { return from_bits((rng() & 0x807FFFFFu) | ((65 + rng() % 125) << 23)); };
    for (int round = 0; round < 16; ++round) {
      for (float& v : r) v = round % 2 ? inside() : from_bits(rng());
      const float s = round % 2 ? inside() : from_bits(rng());
      expect_quotients(fn, r, s, level + " random round " + std::to_string(round));
    }
  }
}

TEST(FastDivision, RunsOfEveryLengthStayInside) {
  std::vector<float> in(64);
  for (size_t i = 0; i < in.size(); ++i) in[i] = 0.37f * static_cast<float>(i) - 9.5f;
  for (int64_t n = 0; n <= 48; ++n) {
    std::vector<float> out(n + 1, -7.0f);
    vdivide_by_scalar(in.data(), 3.0f, out.data(), n);
    for (int64_t i = 0; i < n; ++i) EXPECT_TRUE(same(out[i], in[i] / 3.0f)) << n;
    EXPECT_EQ(out[n], -7.0f) << "wrote past a run of " << n;
  }
}

}  // namespace
}  // namespace kiln::kernels
