// Runtime CPU dispatch: the level picked, and KILN_CPU_ISA's lowering of it.
#include "core/cpu_isa.h"

#include <gtest/gtest.h>
#include <kiln/cpu.h>

#include <cstdlib>
#include <string>

namespace kiln {
namespace {

#if defined(__x86_64__)
TEST(CpuIsa, SupportedLevelIsWhatTheCpuReports) {
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  const CpuIsa cpu = cpu_isa_supported();
  EXPECT_EQ(cpu == CpuIsa::kAvx512, avx512);
  if (!avx2) {
    EXPECT_EQ(cpu, CpuIsa::kBaseline);
  }
  EXPECT_STREQ(config::cpu_isa_supported(), cpu_isa_name(cpu));
}
#endif

TEST(CpuIsa, RunningLevelFollowsTheEnvironment) {
  bool unknown = false;
  const CpuIsa expected = detail::pick_cpu_isa(cpu_isa_supported(), std::getenv("KILN_CPU_ISA"), &unknown);
  EXPECT_EQ(cpu_isa(), expected);
  EXPECT_STREQ(config::cpu_isa(), cpu_isa_name(expected));
}

// Under an emulated CPU (ctest's *_cpu tests run this binary in QEMU), the level its CPU
// has; KILN_EXPECT_CPU_ISA says which.
TEST(CpuIsa, LevelOfTheCpuItRunsOn) {
  const char* expected = std::getenv("KILN_EXPECT_CPU_ISA");
  if (!expected) GTEST_SKIP() << "KILN_EXPECT_CPU_ISA is not set";
  EXPECT_STREQ(config::cpu_isa_supported(), expected);
  EXPECT_STREQ(config::cpu_isa(), expected);
}

TEST(CpuIsa, EnvironmentLowersButNeverRaises) {
  bool unknown = true;
  EXPECT_EQ(detail::pick_cpu_isa(CpuIsa::kAvx512, nullptr, &unknown), CpuIsa::kAvx512);
  EXPECT_FALSE(unknown);
  EXPECT_EQ(detail::pick_cpu_isa(CpuIsa::kAvx512, "", &unknown), CpuIsa::kAvx512);
  EXPECT_EQ(detail::pick_cpu_isa(CpuIsa::kAvx512, "avx2", &unknown), CpuIsa::kAvx2);
  EXPECT_EQ(detail::pick_cpu_isa(CpuIsa::kAvx512, "baseline", &unknown), CpuIsa::kBaseline);
  EXPECT_EQ(detail::pick_cpu_isa(CpuIsa::kAvx2, "avx512", &unknown), CpuIsa::kAvx2);
  EXPECT_EQ(detail::pick_cpu_isa(CpuIsa::kBaseline, "avx2", &unknown), CpuIsa::kBaseline);
  EXPECT_FALSE(unknown);
  EXPECT_EQ(detail::pick_cpu_isa(CpuIsa::kAvx2, "AVX-512", &unknown), CpuIsa::kAvx2);
  EXPECT_TRUE(unknown);
}

TEST(CpuIsa, Names) {
  EXPECT_EQ(std::string(cpu_isa_name(CpuIsa::kBaseline)), "baseline");
  EXPECT_EQ(std::string(cpu_isa_name(CpuIsa::kAvx2)), "avx2");
  EXPECT_EQ(std::string(cpu_isa_name(CpuIsa::kAvx512)), "avx512");
}

}  // namespace
}  // namespace kiln
