// verfc (kernels/vmath.h), float32 Erfc's vectorized runs: within 3 ulps of the C library's
// erfcf at each level this CPU can run (the vector variant of each width, and
// the run's zero-padded tail at every length), at both ends of the range, and for NaN, the
// infinities, signed zeros and denormals.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "core/cpu_isa.h"
#include "kernels/isa_dispatch.h"
#include "kernels/vmath.h"

namespace kiln::kernels {
KILN_ISA_DECLARE(void verfc(const float* x, float* y, int64_t n))
namespace {

using VecFn = void (*)(const float*, float*, int64_t);

// Distance in units in the last place, counting across zero; NaN matches only NaN.
int64_t ulps(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : std::numeric_limits<int64_t>::max();
  auto ordered = [](float v) {
    const auto bits = static_cast<int64_t>(std::bit_cast<int32_t>(v));
    return bits < 0 ? static_cast<int64_t>(INT32_MIN) - bits : bits;
  };
  return std::llabs(ordered(a) - ordered(b));
}

std::vector<float> inputs() {
  std::vector<float> x;
  for (int i = -200000; i <= 200000; ++i) x.push_back(static_cast<float>(i) * 6e-5f);  // [-12, 12]
  for (float v = 1e-38f; v < 1e-2f; v *= 1.37f) {                                      // tiny, both signs
    x.push_back(v);
    x.push_back(-v);
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                  std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(), 1e30f, -1e30f,
                  std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(), 10.05f, 10.06f, 9.2f})
    x.push_back(v);
  return x;
}

// The levels this CPU runs, each variant called directly.
std::vector<VecFn> levels() {
  std::vector<VecFn> out = {&isa_baseline::verfc};
#if defined(__x86_64__)
  if (cpu_isa_supported() != CpuIsa::kBaseline) out.push_back(&isa_avx2::verfc);
  if (cpu_isa_supported() == CpuIsa::kAvx512) out.push_back(&isa_avx512::verfc);
#endif
  return out;
}

void expect_close(VecFn fn, float (*scalar)(float), const char* what, int64_t max_ulps) {
  const std::vector<float> x = inputs();
  std::vector<float> y(x.size());
  fn(x.data(), y.data(), static_cast<int64_t>(x.size()));
  int64_t worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t d = ulps(y[i], scalar(x[i]));
    ASSERT_LE(d, max_ulps) << what << "(" << x[i] << ") = " << y[i] << ", the C library's " << scalar(x[i]);
    worst = std::max(worst, d);
  }
  // Every run length up to three vectors: the tail is padded, never read past or written past.
  for (int64_t n = 0; n <= 48; ++n) {
    std::vector<float> in(x.begin() + 1000, x.begin() + 1000 + n), out(n + 1, -7.0f);
    fn(in.data(), out.data(), n);
    for (int64_t i = 0; i < n; ++i) EXPECT_LE(ulps(out[i], scalar(in[i])), max_ulps) << what << " n=" << n;
    EXPECT_EQ(out[n], -7.0f) << what << " wrote past a run of " << n;
  }
  ::testing::Test::RecordProperty(std::string(what) + "_worst_ulps", static_cast<int>(worst));
}

float c_erfc(float v) { return std::erfc(v); }

// The vector functions are there to be tested (glibc >= 2.35 has them in libmvec): the test
// below would otherwise only compare the scalar fallback with itself.
#if defined(__x86_64__) && defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 35)
TEST(VectorErf, LibmvecHasErfcAtEachWidth) {
  for (const char* name : {"_ZGVbN4v_erfcf", "_ZGVdN8v_erfcf", "_ZGVeN16v_erfcf"})
    EXPECT_NE(libmvec_symbol(name), nullptr) << name;
}
#endif

TEST(VectorErf, ErfcWithinThreeUlpsOfTheCLibraryAtEachLevel) {
  for (VecFn fn : levels()) expect_close(fn, &c_erfc, "erfc", 3);
  expect_close(&verfc, &c_erfc, "erfc", 3);  // the dispatched entry point
}

}  // namespace
}  // namespace kiln::kernels
