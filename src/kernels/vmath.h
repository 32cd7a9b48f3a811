// Vectorized transcendental math over contiguous arrays (Eigen's packet math), instantiated
// once here so the rest of the build never parses Eigen.
#pragma once
#include <cstdint>

namespace kiln::kernels {

#define KILN_VMATH(name)                          \
  void name(const float* x, float* y, int64_t n); \
  void name(const double* x, double* y, int64_t n);
KILN_VMATH(vexp)
KILN_VMATH(vlog)
KILN_VMATH(vtanh)
KILN_VMATH(vsigmoid)
KILN_VMATH(vsqrt)
KILN_VMATH(vrsqrt)
#undef KILN_VMATH

// y = x / s, float32, with exactly division's results: at the AVX-512 level three fused
// multiply-adds per 16 lanes instead of vdivps (kernels/isa/vmath_isa.cc says why it is exact).
void vdivide_by_scalar(const float* x, float s, float* y, int64_t n);

// A fused chain of float32 elementwise ops run in registers (ops/fused.cc's programs, when
// every step is one of these): 128 elements at a time (64 at AVX2) go from the inputs through
// every step to the output without a pass per step, each op computing what its own kernel
// does (the same instructions: Eigen's tanh and exp packets, vsigmoid's and vdivide_by_scalar's
// sequences, the comparisons of Maximum, Minimum, Relu and Relu6), so the bits are the
// separate ops'. Steps: dst = op(a, b); registers below `num_inputs` are the inputs, a scalar
// input is one element broadcast; the last step's register is the output.
enum class LaneOp : int8_t {
  kNone = -1,  // an op without a register form (OpDef::lane)
  // binary: dst = op(a, b)
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMaximum,
  kMinimum,
  // unary: dst = op(a), from kTanh on (lane_op_is_unary)
  kTanh,
  kSigmoid,
  kExp,
  kNeg,
  kSquare,
  kRelu,
  kRelu6
};
inline constexpr bool lane_op_is_unary(LaneOp op) { return op >= LaneOp::kTanh; }
// An elementwise op's functor names its register form with `static constexpr LaneOp kLane`
// (ops/unary.cc, ops/binary.cc); the op rows take it from there (OpDef::lane).
template <class Functor>
constexpr LaneOp lane_of() {
  if constexpr (requires { Functor::kLane; })
    return Functor::kLane;
  else
    return LaneOp::kNone;
}
struct LaneStep {
  LaneOp op;
  int8_t dst, a, b;  // b -1: unary
  // Where the operands come from and where the result goes (plan_lanes fills these once per
  // program): an operand that is the previous step's result is read from an accumulator of
  // vector registers, and a result goes to the register file on the stack only when a step
  // after the next reads it. The defaults, a program not planned, keep every result there.
  bool a_prev = false, b_prev = false, keep = true;
};
inline constexpr int kMaxLaneRegisters = 32;
// Fills each step's a_prev, b_prev and keep from the program's registers.
void plan_lanes(LaneStep* steps, int num_steps);
// Runs the program over the first n - n % (8 * lanes) elements at the AVX-512 level (16 lanes)
// and the AVX2 level (8), and returns how many it ran: 0 at the baseline level (the caller runs
// the steps one by one over the rest).
int64_t vlanes(const LaneStep* steps, int num_steps, int num_inputs, const float* const* inputs, const char* scalar,
               float* out, int64_t n);

// The complementary error function, float32 (GELU's, as TensorFlow writes it): glibc's vector
// math library (libmvec, glibc >= 2.35) at the CPU's vector width, within 3 ulps of the scalar
// erfcf (tests/ops/vmath_erf_test.cc); where libmvec is missing, the scalar erfcf. Erf stays
// scalar: libmvec's vector erff is 4 ulps from the scalar one, the most TensorFlow's kernel
// tests allow kiln's Erf from TensorFlow's own.
void verfc(const float* x, float* y, int64_t n);

// A function of libmvec (glibc's vector math), looked up at run time so that kiln's binary
// asks nothing of the C library beyond what it links; null where it is missing.
const void* libmvec_symbol(const char* name);

}  // namespace kiln::kernels
