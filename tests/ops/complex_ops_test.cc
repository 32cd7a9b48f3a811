// complex64 / complex128: TensorFlow's (Eigen's vector-lane) arithmetic, casts both ways, the
// parts ops, and complex values through GraphDef constants.
#include <complex>

#include "ops/op_list.h"
#include "test_util.h"
#include "trace/dispatch.h"

using namespace kiln;
using namespace kiln::testing;
using C = std::complex<float>;

namespace {
namespace op = kiln::ops::op;
Tensor run(const ops::OpDef& def, std::vector<Tensor> in, ops::Attrs attrs = {}) {
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : in) ptrs.push_back(&t);
  return trace::dispatch1(def, ptrs.data(), static_cast<int>(ptrs.size()), ops::with_defaults(def, std::move(attrs)));
}
}  // namespace

TEST(Complex, ArithmeticIsTheTextbookFormula) {
  const Tensor a = constant<C>({C(1, 2), C(-3.5f, 4)}, {2});
  const Tensor b = constant<C>({C(0.5f, -1), C(2, 0.25f)}, {2});
  const std::vector<C> prod = (a * b).to_vector<C>();
  EXPECT_EQ(prod[0], C(1 * 0.5f - 2 * -1.0f, 1 * -1.0f + 2 * 0.5f));
  EXPECT_EQ((a + b).to_vector<C>()[1], C(-1.5f, 4.25f));
  const std::vector<C> q = (a / b).to_vector<C>();
  EXPECT_NEAR(q[0].real(), (C(1, 2) / C(0.5f, -1)).real(), 1e-6);
  EXPECT_NEAR(q[0].imag(), (C(1, 2) / C(0.5f, -1)).imag(), 1e-6);
  EXPECT_EQ(run(op::Equal(), {a, a}).to_vector<bool>(), (std::vector<bool>{true, true}));
}

TEST(Complex, CastsAndParts) {
  const Tensor a = constant<C>({C(1.5f, 2), C(-3, -4)}, {2});
  EXPECT_EQ(cast(a, DType::Float32).to_vector<float>(), (std::vector<float>{1.5f, -3}));
  EXPECT_EQ(cast(a, DType::Bool).to_vector<bool>(), (std::vector<bool>{true, true}));
  EXPECT_EQ(cast(constant<int32_t>({7}), DType::Complex128).to_vector<std::complex<double>>()[0],
            std::complex<double>(7, 0));
  EXPECT_EQ(run(op::ComplexAbs(), {a}, ops::Attrs{DType::Float32}).to_vector<float>()[1], 5.0f);
  EXPECT_EQ(run(op::Conj(), {a}).to_vector<C>()[0], C(1.5f, -2));
  EXPECT_EQ(run(op::Imag(), {a}, ops::Attrs{DType::Float32}).to_vector<float>(), (std::vector<float>{2, -4}));
  const Tensor z = run(op::Complex(), {constant<float>({1, 2}), constant(3.0f)}, ops::Attrs{DType::Complex64});
  EXPECT_EQ(z.to_vector<C>(), (std::vector<C>{C(1, 3), C(2, 3)}));
  EXPECT_THROW(run(op::Real(), {a}, ops::Attrs{DType::Float64}), InvalidArgumentError);  // Tout must match
  EXPECT_THROW(run(op::Real(), {constant(1.0f)}, ops::Attrs{DType::Float32}), InvalidArgumentError);
}

TEST(Complex, TracedEqualsEagerAndConstantsRoundTrip) {
  auto body = [](const Tensor& z) {
    const Tensor k = constant<C>({C(2, -1), C(0, 1)}, {2});  // a Const node in the trace
    return z * k + z;
  };
  auto f = function(body);
  const Tensor z = constant<C>({C(1, 1), C(-2, 0.5f)}, {2});
  EXPECT_EQ(f(z).to_vector<C>(), body(z).to_vector<C>());
}
