// Fused elementwise kernels that read an operand through a window of a wider tensor's
// columns (an LSTM's gates out of one product): which slices the fusion pass absorbs, that
// results are bit for bit the separate ops', and that a malformed window is refused.
#include <map>

#include "ops/fused.h"
#include "ops/op_list.h"
#include "test_util.h"
#include "trace/dispatch.h"

using namespace kiln;
using namespace kiln::testing;

namespace {
namespace op = kiln::ops::op;

std::map<std::string, int> op_counts(const GraphView& g) {
  std::map<std::string, int> m;
  for (const auto& o : g.operations) ++m[o.type];
  return m;
}

// Columns [from, from + width) of a [rows, columns] tensor, as Python's z[:, from:from + width].
Tensor columns(const Tensor& z, int64_t from, int64_t width) {
  return strided_slice(z, {0, from}, {0, from + width}, {1, 1}, {.begin_mask = 1, .end_mask = 1});
}

// The LSTM cell's gate arithmetic over four column windows of one product.
std::tuple<Tensor, Tensor> gates(const Tensor& z, const Tensor& c, int64_t units) {
  const Tensor i = columns(z, 0, units), f = columns(z, units, units), g = columns(z, 2 * units, units),
               o = columns(z, 3 * units, units);
  const Tensor next_c = sigmoid(f) * c + sigmoid(i) * tanh(g);
  return {sigmoid(o) * tanh(next_c), next_c};
}

// KilnFusedElementwise run directly: sigmoid(input 0) * input 1, with the given windows.
Tensor run_fused(const Tensor& a, const Tensor& b, std::vector<int64_t> windows, Dims out) {
  const int64_t sig = ops::fusable_index(&op::Sigmoid()), mul = ops::fusable_index(&op::Mul());
  std::vector<int64_t> program{2, 4, sig, 2, 0, -1, mul, 3, 2, 1};
  const Tensor* in[] = {&a, &b};
  return trace::dispatch1(op::KilnFusedElementwise(), in, 2,
                          ops::with_defaults(op::KilnFusedElementwise(),
                                             ops::Attrs{std::move(program), TensorShape(out), std::move(windows)}));
}
}  // namespace

TEST(FusedWindow, GateSlicesAreReadInPlaceAndAgree) {
  constexpr int64_t kUnits = 24;
  auto f = function([](Tensor z, Tensor c) { return gates(z, c, kUnits); });
  auto cf =
      f.get_concrete_function(TensorSpec{{5, 4 * kUnits}, DType::Float32}, TensorSpec{{5, kUnits}, DType::Float32});
  auto counts = op_counts(cf.optimized_graph());
  EXPECT_EQ(counts["StridedSlice"], 0);  // all four gates read through windows
  EXPECT_EQ(counts["KilnFusedElementwise"], 2);
  const Tensor z = random_uniform({5, 4 * kUnits}, -3, 3, DType::Float32, 1);
  const Tensor c = random_uniform({5, kUnits}, -1, 1, DType::Float32, 2);
  const auto got = cf(z, c);
  const auto [h, next_c] = gates(z, c, kUnits);
  EXPECT_EQ(got[0].to_vector<float>(), h.to_vector<float>());  // bit-identical: the ops' own runs
  EXPECT_EQ(got[1].to_vector<float>(), next_c.to_vector<float>());
}

TEST(FusedWindow, UnknownBatchIsWindowedAndBroadcastsAsTheOpsDo) {
  auto f = function([](Tensor z, Tensor c) { return tanh(columns(z, 8, 8)) * c; });
  auto cf = f.get_concrete_function(TensorSpec{{-1, 32}, DType::Float64}, TensorSpec{{-1, 8}, DType::Float64});
  EXPECT_EQ(op_counts(cf.optimized_graph())["StridedSlice"], 0);
  for (int64_t batch : {0, 1, 7}) {
    const Tensor z = random_uniform({batch, 32}, -2, 2, DType::Float64, 3);
    const Tensor c = random_uniform({batch, 8}, -2, 2, DType::Float64, 4);
    const Tensor got = cf(z, c)[0];
    EXPECT_EQ(got.shape().dims(), (Dims{batch, 8}));
    EXPECT_EQ(got.to_vector<double>(), (tanh(columns(z, 8, 8)) * c).to_vector<double>()) << batch;
  }
  // Batches that differ at run time broadcast (1 against 3) or fail, as the separate ops would.
  const Tensor z1 = random_uniform({1, 32}, -2, 2, DType::Float64, 5),
               c3 = random_uniform({3, 8}, -2, 2, DType::Float64, 6);
  EXPECT_EQ(cf(z1, c3)[0].to_vector<double>(), (tanh(columns(z1, 8, 8)) * c3).to_vector<double>());
  const Tensor z3 = random_uniform({3, 32}, -2, 2, DType::Float64, 7),
               c1 = random_uniform({1, 8}, -2, 2, DType::Float64, 8);
  EXPECT_EQ(cf(z3, c1)[0].to_vector<double>(), (tanh(columns(z3, 8, 8)) * c1).to_vector<double>());
  EXPECT_THROW(cf(random_uniform({2, 32}, -1, 1, DType::Float64, 9), c3), InvalidArgumentError);
}

TEST(FusedWindow, OnlyContiguousColumnRunsBecomeWindows) {
  // A stride, a slice of rows, a negative start: each the ops' result; only the columns window.
  auto strided = function([](Tensor z) {
    return tanh(strided_slice(z, {0, 0}, {0, 16}, {1, 2}, {.begin_mask = 1, .end_mask = 1})) * 2.0f;
  });
  auto rows = function([](Tensor z) { return tanh(strided_slice(z, {1, 0}, {3, 0}, {1, 1}, {.end_mask = 2})) * 2.0f; });
  auto from_end = function([](Tensor z) {
    return tanh(strided_slice(z, {0, -6}, {0, 0}, {1, 1}, {.begin_mask = 1, .end_mask = 3})) * 2.0f;
  });
  const TensorSpec spec{{4, 16}, DType::Float32};
  EXPECT_EQ(op_counts(strided.get_concrete_function(spec).optimized_graph())["StridedSlice"], 1);
  EXPECT_EQ(op_counts(rows.get_concrete_function(spec).optimized_graph())["StridedSlice"], 1);
  EXPECT_EQ(op_counts(from_end.get_concrete_function(spec).optimized_graph())["StridedSlice"], 0);
  const Tensor z = random_uniform({4, 16}, -2, 2, DType::Float32, 10);
  EXPECT_EQ(
      strided(z).to_vector<float>(),
      (tanh(strided_slice(z, {0, 0}, {0, 16}, {1, 2}, {.begin_mask = 1, .end_mask = 1})) * 2.0f).to_vector<float>());
  EXPECT_EQ(rows(z).to_vector<float>(),
            (tanh(strided_slice(z, {1, 0}, {3, 0}, {1, 1}, {.end_mask = 2})) * 2.0f).to_vector<float>());
  EXPECT_EQ(
      from_end(z).to_vector<float>(),
      (tanh(strided_slice(z, {0, -6}, {0, 0}, {1, 1}, {.begin_mask = 1, .end_mask = 3})) * 2.0f).to_vector<float>());
  // A slice something else also reads stays, and its consumer still takes the window.
  auto shared = function([](Tensor z) {
    const Tensor s = columns(z, 4, 4);
    return std::make_tuple(sigmoid(s) * 3.0f, s);
  });
  auto scf = shared.get_concrete_function(spec);
  EXPECT_EQ(op_counts(scf.optimized_graph())["StridedSlice"], 1);
  EXPECT_EQ(scf(z)[0].to_vector<float>(), (sigmoid(columns(z, 4, 4)) * 3.0f).to_vector<float>());
}

TEST(FusedWindow, TheKernelRefusesWindowsThatDoNotFit) {
  const Tensor z = random_uniform({3, 8}, -1, 1, DType::Float32, 11),
               b = random_uniform({3, 2}, -1, 1, DType::Float32, 12);
  const Tensor good = run_fused(z, b, {8, 6, 0, 0}, {3, 2});
  EXPECT_EQ(good.to_vector<float>(), (sigmoid(columns(z, 6, 2)) * b).to_vector<float>());
  // Each a typed error, never a read outside the input.
  EXPECT_THROW(run_fused(z, b, {8, 7, 0, 0}, {3, 2}), InvalidArgumentError);  // past the last column
  EXPECT_THROW(run_fused(z, b, {8, -1, 0, 0}, {3, 2}), InvalidArgumentError);
  EXPECT_THROW(run_fused(z, b, {16, 0, 0, 0}, {3, 2}), InvalidArgumentError);  // not the input's columns
  EXPECT_THROW(run_fused(z, b, {-8, 0, 0, 0}, {3, 2}), InvalidArgumentError);
  EXPECT_THROW(run_fused(z, b, {8, 0}, {3, 2}), InvalidArgumentError);    // one pair for two inputs
  EXPECT_THROW(run_fused(z, b, {8, 0, 0, 0}, {}), InvalidArgumentError);  // a scalar output has no columns
  const Tensor flat = random_uniform({24}, -1, 1, DType::Float32, 13);
  EXPECT_THROW(run_fused(flat, b, {8, 0, 0, 0}, {3, 2}), InvalidArgumentError);  // rank differs
}

TEST(FusedWindow, OneRowReadsItsWindowsInPlaceAndAgrees) {
  // A batch of one (an LSTM step at batch 1): each window's columns are contiguous and read
  // where they are; the results are still the separate ops', in registers (float32) or step
  // by step (float64), at rank 2 and 3.
  constexpr int64_t kUnits = 24;
  auto f = function([](Tensor z, Tensor c) { return gates(z, c, kUnits); });
  for (DType dtype : {DType::Float32, DType::Float64}) {
    auto cf = f.get_concrete_function(TensorSpec{{-1, 4 * kUnits}, dtype}, TensorSpec{{-1, kUnits}, dtype});
    EXPECT_EQ(op_counts(cf.optimized_graph())["StridedSlice"], 0);
    const Tensor z = cast(random_uniform({1, 4 * kUnits}, -3, 3, DType::Float32, 14), dtype);
    const Tensor c = cast(random_uniform({1, kUnits}, -1, 1, DType::Float32, 15), dtype);
    const auto got = cf(z, c);
    const auto [h, next_c] = gates(z, c, kUnits);
    const auto f64 = [](const Tensor& t) { return cast(t, DType::Float64).to_vector<double>(); };
    EXPECT_EQ(f64(got[0]), f64(h)) << dtype_name(dtype);
    EXPECT_EQ(f64(got[1]), f64(next_c)) << dtype_name(dtype);
  }
  const Tensor z = random_uniform({1, 1, 8}, -1, 1, DType::Float32, 16),
               b = random_uniform({1, 1, 2}, -1, 1, DType::Float32, 17);
  EXPECT_EQ(run_fused(z, b, {8, 6, 0, 0}, {1, 1, 2}).to_vector<float>(),
            (sigmoid(strided_slice(z, {0, 0, 6}, {0, 0, 8}, {1, 1, 1}, {.begin_mask = 3, .end_mask = 3})) * b)
                .to_vector<float>());
  // One row's windows are checked as any others.
  EXPECT_THROW(run_fused(z, b, {8, 7, 0, 0}, {1, 1, 2}), InvalidArgumentError);
  EXPECT_THROW(run_fused(z, b, {16, 0, 0, 0}, {1, 1, 2}), InvalidArgumentError);
}
