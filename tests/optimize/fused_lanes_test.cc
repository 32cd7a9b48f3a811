// Fused float32 chains of Add, Sub, Mul, RealDiv, Maximum, Minimum, Tanh, Sigmoid, Exp, Neg,
// Square, Relu and Relu6 run in registers at the AVX-512 and AVX2 levels (kernels::vlanes, from
// ops/fused.cc): every 8 vectors of elements go through the whole program at once, and the
// rest step by step. Either way each element is what the separate ops give, bit for bit, for
// the values that take the ops' special paths too (NaN, infinities, zeros of both signs,
// subnormals, the division-by-a-scalar sequence's range edges, exp's clamp), for operands
// that are scalars on either side, and on one and two threads. At the baseline level the
// steps run one by one; the comparison holds there too.
#include <array>
#include <cmath>
#include <cstring>
#include <map>

#include "core/parallel.h"
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

std::map<std::string, int> op_counts(const GraphView& g) {
  std::map<std::string, int> m;
  for (const auto& o : g.operations) ++m[o.type];
  return m;
}

// Random values of a wide range with the special ones scattered among them.
Tensor values(int64_t n, uint64_t seed) {
  std::vector<float> v = random_uniform({n}, -4, 4, DType::Float32, seed).to_vector<float>();
  const float specials[] = {0.0f,     -0.0f,   INFINITY,        -INFINITY, NAN,    1e-40f, -1e-40f,
                            3e38f,    -3e38f,  1e-20f,          9.5f,      -9.5f,  8.9f,   1e30f,
                            0x1p-62f, 0x1p62f, 0x1.fffffep-63f, 0x1p-63f,  1e-45f, -2e-38f};
  for (size_t i = 0; i < sizeof specials / sizeof *specials; ++i)
    v[(i * 7919 + seed) % static_cast<size_t>(n)] = specials[i];
  return constant<float>(v, {n});
}

// Bit for bit, a NaN for a NaN.
void expect_same_bits(const Tensor& got, const Tensor& want, const std::string& what) {
  const auto g = got.to_vector<float>(), w = want.to_vector<float>();
  ASSERT_EQ(g.size(), w.size()) << what;
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(g[i]) && std::isnan(w[i])) continue;
    ASSERT_EQ(std::memcmp(&g[i], &w[i], sizeof(float)), 0)
        << what << " at " << i << ": " << g[i] << " fused, " << w[i] << " separate";
  }
}

}  // namespace

TEST(FusedLanes, ChainsInRegistersAreTheSeparateOpsBitForBit) {
  using Body = Tensor (*)(Tensor, Tensor);
  const std::pair<const char*, Body> bodies[] = {
      {"tanh(x*0.5+1)*x - x/3", [](Tensor x, Tensor) { return tanh(x * 0.5f + 1.0f) * x - x / 3.0f; }},
      {"(x-y)/(y*x+1.5)", [](Tensor x, Tensor y) { return (x - y) / (y * x + 1.5f); }},
      {"tanh(x/-7)+y", [](Tensor x, Tensor y) { return tanh(x / -7.0f) + y; }},
      {"(x+y)/1e-30", [](Tensor x, Tensor y) { return (x + y) / 1e-30f; }},  // outside the fast divisors
      {"(x+y)/3e20", [](Tensor x, Tensor y) { return (x - y) / 3e20f; }},
      {"2-x*3/y", [](Tensor x, Tensor y) { return 2.0f - x * 3.0f / y; }},  // scalars on the left
      {"tanh(tanh(x)*y)", [](Tensor x, Tensor y) { return tanh(tanh(x) * y); }},
      {"LSTM cell", [](Tensor x, Tensor y) { return sigmoid(x) * y + sigmoid(y - 1.0f) * tanh(x * y); }},
      {"relu(x-y)*2", [](Tensor x, Tensor y) { return relu(x - y) * 2.0f + relu(y); }},
      {"relu(x)*1.5", [](Tensor x, Tensor) { return relu(x) * 1.5f; }},  // -0 stays -0, NaN NaN
      // exp over [-100, 100]: below the clamp (the C library's values), above overflow
      {"exp(x*25)-y", [](Tensor x, Tensor y) { return exp(x * 25.0f) - y; }},
      {"-(x*x)+square(y)", [](Tensor x, Tensor y) { return -(x * x) + square(y); }},
      {"relu6(x*2)+y", [](Tensor x, Tensor y) { return relu6(x * 2.0f) + y; }},
      // a NaN on either side gives a + b; +0 against -0 picks the second
      {"maximum(x,y)*min(x,0)", [](Tensor x, Tensor y) { return maximum(x, y) * minimum(x, constant(0.0f)); }},
      {"minimum(0,x)-max(-0,y)",
       [](Tensor x, Tensor y) { return minimum(constant(0.0f), -x) - maximum(constant(-0.0f), y); }},
  };
  const int before = configured_threads();
  for (const int threads : {1, 2})
    for (const int64_t n : {int64_t{1}, int64_t{127}, int64_t{128}, int64_t{129}, int64_t{511}, int64_t{513},
                            int64_t{4099}, int64_t{70001}, int64_t{300001}}) {
      set_intra_op_threads(threads);
      const Tensor x = values(n, 1), y = values(n, 2);
      for (const auto& [name, body] : bodies) {
        auto f = function(body);
        if (n == 128) {  // the chain is one fused node
          const auto counts =
              op_counts(f.get_concrete_function(TensorSpec{{n}, DType::Float32}, TensorSpec{{n}, DType::Float32})
                            .optimized_graph());
          EXPECT_EQ(counts.count("KilnFusedElementwise"), 1u) << name;
        }
        expect_same_bits(f(x, y), body(x, y),
                         std::string(name) + " n=" + std::to_string(n) + " on " + std::to_string(threads) + " threads");
      }
    }
  set_intra_op_threads(before);
}

// A range whose inputs are all read in place (same-shape, scalar, or broadcast once to the
// output's size) runs in one register call per thread; its elements short of eight vectors go
// on step by step. A group traced over unknown dims, [-1, -1, c], and called with [a, 1, c]
// against [a, b, c] broadcasts the first at run time (neither a row nor a channel vector), as
// a served model's unknown batch can. Sizes around the split between threads and the tail.
TEST(FusedLanes, WholeRangeWithABroadcastInputIsTheSeparateOpsBitForBit) {
  auto body = [](Tensor x, Tensor y) { return tanh(x * y) + x / 3.0f - y; };
  const int before = configured_threads();
  for (const int threads : {1, 2})
    for (const auto& [a, b, c] : {std::array<int64_t, 3>{1, 1, 1}, {2, 7, 9}, {3, 129, 513}, {5, 257, 211}}) {
      set_intra_op_threads(threads);
      const Tensor x = reshape(values(a * c, 3), {a, 1, c}), y = reshape(values(a * b * c, 4), {a, b, c});
      auto cf = function(body).get_concrete_function(TensorSpec{{-1, -1, c}, DType::Float32},
                                                     TensorSpec{{-1, -1, c}, DType::Float32});
      EXPECT_EQ(op_counts(cf.optimized_graph()).count("KilnFusedElementwise"), 1u);
      expect_same_bits(cf(x, y)[0], body(x, y),
                       "[" + std::to_string(a) + ", 1, " + std::to_string(c) + "] against [" + std::to_string(a) +
                           ", " + std::to_string(b) + ", " + std::to_string(c) + "] on " + std::to_string(threads) +
                           " threads");
    }
  set_intra_op_threads(before);
}
