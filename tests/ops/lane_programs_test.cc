// kernels::vlanes runs any program of register steps as the steps run one by one, bit for bit:
// random programs over few registers (so that registers are overwritten, read many steps after
// they were written, written in place, and a step reads the step before it in both operands),
// scalar inputs on either side, every lane op, at each level this CPU runs. The register chains
// keep most results in an accumulator instead of the register file (plan_lanes,
// LaneStep::keep); a result a later step needs must still be there. The reference runs each step over
// the whole array with that level's own span kernels (vtanh, vsigmoid, vexp) and IEEE
// arithmetic for the rest.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_isa.h"
#include "kernels/isa_dispatch.h"
#include "kernels/vmath.h"

namespace kiln::kernels {
KILN_ISA_DECLARE(int64_t vlanes(const LaneStep* steps, int num_steps, int num_inputs, const float* const* inputs,
                                const char* scalar, float* out, int64_t n))
KILN_ISA_DECLARE(void vtanh(const float* x, float* y, int64_t n))
KILN_ISA_DECLARE(void vsigmoid(const float* x, float* y, int64_t n))
KILN_ISA_DECLARE(void vexp(const float* x, float* y, int64_t n))
namespace {

using Lanes = int64_t (*)(const LaneStep*, int, int, const float* const*, const char*, float*, int64_t);
using Span = void (*)(const float*, float*, int64_t);
struct Level {
  std::string name;
  Lanes lanes;
  Span tanh, sigmoid, exp;
};

std::vector<Level> levels() {
  std::vector<Level> out = {
      {"baseline", isa_baseline::vlanes, isa_baseline::vtanh, isa_baseline::vsigmoid, isa_baseline::vexp}};
#if defined(__x86_64__)
  if (cpu_isa_supported() != CpuIsa::kBaseline)
    out.push_back({"avx2", isa_avx2::vlanes, isa_avx2::vtanh, isa_avx2::vsigmoid, isa_avx2::vexp});
  if (cpu_isa_supported() == CpuIsa::kAvx512)
    out.push_back({"avx512", isa_avx512::vlanes, isa_avx512::vtanh, isa_avx512::vsigmoid, isa_avx512::vexp});
#endif
  return out;
}

// Maximum and Minimum as the ops compute them (ops/binary.cc): a NaN on either side gives a + b.
float maximum(float a, float b) { return std::isnan(a) || std::isnan(b) ? a + b : (a > b ? a : b); }
float minimum(float a, float b) { return std::isnan(a) || std::isnan(b) ? a + b : (a < b ? a : b); }

// The program step by step over whole arrays.
std::vector<float> reference(const Level& level, const std::vector<LaneStep>& steps,
                             std::vector<std::vector<float>> regs, int64_t n) {
  for (const LaneStep& st : steps) {
    const std::vector<float> a = regs[st.a];
    const std::vector<float> b = st.b >= 0 ? regs[st.b] : std::vector<float>();
    std::vector<float> d(static_cast<size_t>(n));
    auto at = [](const std::vector<float>& v, int64_t i) { return v.size() == 1 ? v[0] : v[i]; };
    std::vector<float> wide(static_cast<size_t>(n));  // a scalar operand of a span kernel, spread
    for (int64_t i = 0; i < n; ++i) wide[i] = at(a, i);
    switch (st.op) {
      case LaneOp::kTanh:
        level.tanh(wide.data(), d.data(), n);
        break;
      case LaneOp::kSigmoid:
        level.sigmoid(wide.data(), d.data(), n);
        break;
      case LaneOp::kExp:
        level.exp(wide.data(), d.data(), n);
        break;
      default:
        for (int64_t i = 0; i < n; ++i) {
          const float x = at(a, i), y = b.empty() ? 0.f : at(b, i);
          switch (st.op) {
            case LaneOp::kAdd:
              d[i] = x + y;
              break;
            case LaneOp::kSub:
              d[i] = x - y;
              break;
            case LaneOp::kMul:
              d[i] = x * y;
              break;
            case LaneOp::kDiv:
              d[i] = x / y;
              break;
            case LaneOp::kMaximum:
              d[i] = maximum(x, y);
              break;
            case LaneOp::kMinimum:
              d[i] = minimum(x, y);
              break;
            case LaneOp::kNeg:
              d[i] = -x;
              break;
            case LaneOp::kSquare:
              d[i] = x * x;
              break;
            case LaneOp::kRelu:
              d[i] = x < 0 ? 0.f : x;
              break;
            case LaneOp::kRelu6:
              d[i] = x < 0 ? 0.f : (x > 6 ? 6.f : x);
              break;
            default:
              ADD_FAILURE() << "no reference for lane op " << static_cast<int>(st.op);
          }
        }
    }
    regs[st.dst] = d;
  }
  return regs[steps.back().dst];
}

const LaneOp kOps[] = {LaneOp::kAdd,     LaneOp::kSub,  LaneOp::kMul,     LaneOp::kDiv, LaneOp::kMaximum,
                       LaneOp::kMinimum, LaneOp::kTanh, LaneOp::kSigmoid, LaneOp::kExp, LaneOp::kNeg,
                       LaneOp::kSquare,  LaneOp::kRelu, LaneOp::kRelu6};

TEST(LanePrograms, AnyProgramIsItsStepsOneByOne) {
  std::mt19937 rng(20261201);
  for (const Level& level : levels())
    for (int trial = 0; trial < 400; ++trial) {
      const int num_inputs = 1 + static_cast<int>(rng() % 3);
      const int num_regs = num_inputs + 1 + static_cast<int>(rng() % 4);  // few: registers are reused
      const int num_steps = 1 + static_cast<int>(rng() % 12);
      const int64_t n = 128 * (1 + static_cast<int64_t>(rng() % 3)) + static_cast<int64_t>(rng() % 130);
      std::vector<std::vector<float>> regs(static_cast<size_t>(num_regs));
      std::vector<char> scalar(static_cast<size_t>(num_regs), 0);
      std::vector<const float*> inputs;
      std::uniform_real_distribution<float> value(-5.f, 5.f);
      for (int k = 0; k < num_inputs; ++k) {
        scalar[k] = num_inputs > 1 && rng() % 3 == 0;
        regs[k].resize(scalar[k] ? 1 : static_cast<size_t>(n));
        for (float& v : regs[k]) v = value(rng);
        if (!scalar[k]) regs[k][rng() % n] = rng() % 2 ? NAN : -0.f;
        inputs.push_back(regs[k].data());
      }
      // Each step reads registers written before it; the previous step's result often.
      std::vector<bool> written(static_cast<size_t>(num_regs), false);
      for (int k = 0; k < num_inputs; ++k) written[k] = true;
      auto pick = [&](int prev) {
        if (prev >= 0 && rng() % 2) return prev;
        int r;
        do r = static_cast<int>(rng() % num_regs);
        while (!written[r]);
        return r;
      };
      std::vector<LaneStep> steps;
      std::string text;
      for (int s = 0; s < num_steps; ++s) {
        const LaneOp op = kOps[rng() % (sizeof kOps / sizeof *kOps)];
        const int prev = s > 0 ? steps.back().dst : -1;
        const int a = pick(prev), b = lane_op_is_unary(op) ? -1 : pick(prev);
        const int dst = num_inputs + static_cast<int>(rng() % (num_regs - num_inputs));
        steps.push_back(
            {.op = op, .dst = static_cast<int8_t>(dst), .a = static_cast<int8_t>(a), .b = static_cast<int8_t>(b)});
        written[dst] = true;
        text += " r" + std::to_string(dst) + "=op" + std::to_string(static_cast<int>(op)) + "(r" + std::to_string(a) +
                (b >= 0 ? ",r" + std::to_string(b) : "") + ")";
      }
      // A scalar operand's register is never a destination (inputs are not), so its value holds.
      const std::vector<float> want = reference(level, steps, regs, n);
      // As planned (plan_lanes: operands from the accumulator, few results kept) and unplanned
      // (every result through the register file): the same bits.
      for (const bool planned : {false, true}) {
        std::vector<LaneStep> program = steps;
        if (planned) plan_lanes(program.data(), num_steps);
        const std::string what = level.name + (planned ? " planned" : " unplanned") + " program" + text;
        std::vector<float> got(static_cast<size_t>(n), 12345.f);
        const int64_t done =
            level.lanes(program.data(), num_steps, num_inputs, inputs.data(), scalar.data(), got.data(), n);
        if (level.name == "baseline") {
          EXPECT_EQ(done, 0);
          continue;
        }
        ASSERT_EQ(done, n - n % (level.name == "avx512" ? 128 : 64)) << what;
        for (int64_t i = 0; i < done; ++i) {
          if (std::isnan(got[i]) && std::isnan(want[i])) continue;
          ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
              << what << " at " << i << ": " << got[i] << " in registers, " << want[i] << " step by step";
        }
        for (int64_t i = done; i < n; ++i)
          ASSERT_EQ(got[i], 12345.f) << what << ": written past the whole vectors at " << i;
      }
    }
}

}  // namespace
}  // namespace kiln::kernels
