// A While loop whose steps compute each batch row from that row alone runs as one loop per
// block of rows on the intra-op threads (exec/loop_rows.h): which loops do, that the results
// are the whole loop's (bit for bit where every op computes a row the same way at any number
// of rows), and that what cannot split runs whole.
#include "exec/loop_rows.h"

#include <chrono>

#include "core/parallel.h"
#include "kiln/limits.h"
#include "kiln/threading.h"
#include "ops/op_list.h"
#include "test_util.h"
#include "trace/concrete.h"
#include "trace/dispatch.h"

using namespace kiln;
using namespace kiln::testing;

namespace {
using kiln::ops::Attrs;
namespace op = kiln::ops::op;

constexpr int32_t kSteps = 12;
constexpr int64_t kFeatures = 64, kUnits = 512;  // a step's product takes tens of microseconds

Tensor reserve(const Tensor& element_shape, int32_t n) {
  const Tensor count = constant(n);
  return trace::dispatch1(op::TensorListReserve(), {&element_shape, &count},
                          ops::with_defaults(op::TensorListReserve(), Attrs{DType::Float32}));
}
Tensor set_item(const Tensor& list, const Tensor& index, const Tensor& item) {
  return trace::dispatch1(op::TensorListSetItem(), {&list, &index, &item},
                          ops::with_defaults(op::TensorListSetItem(), Attrs{}));
}
Tensor get_item(const Tensor& list, const Tensor& index, const Tensor& element_shape) {
  return trace::dispatch1(op::TensorListGetItem(), {&list, &index, &element_shape}, Attrs{DType::Float32});
}
Tensor stack(const Tensor& list, const Tensor& element_shape, int64_t n) {
  return trace::dispatch1(op::TensorListStack(), {&list, &element_shape}, Attrs{DType::Float32, n});
}
Tensor from_tensor(const Tensor& t, const Tensor& element_shape) {
  return trace::dispatch1(op::TensorListFromTensor(), {&t, &element_shape});
}

enum class Variant { kRowwise, kCondReadsRows, kMixesRows };

// A recurrent layer as Keras writes it: the sequence (time-major) read from a list, the
// state carried, each step's output written to a list; `v` breaks row independence.
ConcreteFunction recurrent(Variant v) {
  auto f = function([v](Tensor x, Tensor h0, Tensor w, Tensor u) {
    const Tensor in = from_tensor(x, constant<int32_t>({-1, kFeatures}));
    const Tensor out0 = reserve(constant<int32_t>({-1, kUnits}), kSteps);
    auto [i, h, out, seq] = while_loop(
        [v](Tensor i, Tensor h, Tensor, Tensor) {
          if (v == Variant::kCondReadsRows) return logical_and(i < kSteps, reduce_sum(h) < 1e9f);
          return i < kSteps;
        },
        [v, w, u](Tensor i, Tensor h, Tensor out, Tensor seq) {
          const Tensor x_t = get_item(seq, i, constant<int32_t>({-1, kFeatures}));
          Tensor next = tanh(matmul(x_t, w) + matmul(h, u));
          if (v == Variant::kMixesRows) next = next + reduce_mean(h, {0}) * 0.0f;  // the batch's mean
          return std::make_tuple(i + 1, next, set_item(out, i, next), seq);
        },
        std::make_tuple(constant(0), h0, out0, in));
    return std::make_tuple(stack(out, constant<int32_t>({-1, kUnits}), kSteps), h);
  });
  return f.get_concrete_function(
      TensorSpec{{kSteps, -1, kFeatures}, DType::Float32}, TensorSpec{{-1, kUnits}, DType::Float32},
      TensorSpec{{kFeatures, kUnits}, DType::Float32}, TensorSpec{{kUnits, kUnits}, DType::Float32});
}

struct Inputs {
  Tensor x, h0, w, u;
};
Inputs inputs(int64_t batch) {
  return {.x = random_uniform({kSteps, batch, kFeatures}, -1, 1, DType::Float32, 1),
          .h0 = random_uniform({batch, kUnits}, -1, 1, DType::Float32, 2),
          .w = random_uniform({kFeatures, kUnits}, -0.2, 0.2, DType::Float32, 3),
          .u = random_uniform({kUnits, kUnits}, -0.05, 0.05, DType::Float32, 4)};
}

// The function's results with `threads` intra-op threads, and whether its loop ran by rows.
std::pair<std::vector<std::vector<float>>, bool> run(ConcreteFunction& cf, const Inputs& in, int threads) {
  config::set_intra_op_parallelism_threads(threads);
  const int64_t before = exec::loops_run_by_rows();
  const std::vector<Tensor> out = cf(in.x, in.h0, in.w, in.u);
  const bool by_rows = exec::loops_run_by_rows() > before;
  config::set_intra_op_parallelism_threads(0);
  return {{out[0].to_vector<float>(), out[1].to_vector<float>()}, by_rows};
}
}  // namespace

// The same values within float rounding: a block's step product has fewer rows than the
// whole batch's, and at some instruction-set levels another kernel serves fewer rows (at AVX2
// kiln's few-row kernel up to 16 rows, OpenBLAS above), which sums in another order.
void expect_close(const std::vector<std::vector<float>>& got, const std::vector<std::vector<float>>& want,
                  int64_t batch) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t r = 0; r < got.size(); ++r) {
    ASSERT_EQ(got[r].size(), want[r].size());
    for (size_t i = 0; i < got[r].size(); ++i)
      ASSERT_NEAR(got[r][i], want[r][i], 1e-5) << "batch " << batch << ", result " << r << " at " << i;
  }
}

TEST(LoopRows, ARecurrentLoopRunsByRowsAndGivesTheWholeLoopsValues) {
  if (default_intra_op_threads() < 2) GTEST_SKIP() << "one CPU: nothing runs beside the caller";
  ConcreteFunction cf = recurrent(Variant::kRowwise);
  for (int64_t batch : {8, 13, 32}) {  // even and uneven blocks
    const Inputs in = inputs(batch);
    const auto [whole, whole_by_rows] = run(cf, in, 1);
    const auto [split, by_rows] = run(cf, in, 2);
    EXPECT_FALSE(whole_by_rows);
    EXPECT_TRUE(by_rows) << batch;
    expect_close(split, whole, batch);
  }
  // Too few rows for two blocks of kRowsMinBlock: whole, the same bits.
  const auto [values, by_rows] = run(cf, inputs(2 * exec::kRowsMinBlock - 1), 2);
  EXPECT_FALSE(by_rows);
  EXPECT_EQ(values, run(cf, inputs(2 * exec::kRowsMinBlock - 1), 1).first);
}

TEST(LoopRows, RowsComputedTheSameWayAtAnyBatchGiveTheWholeLoopsBits) {
  if (default_intra_op_threads() < 2) GTEST_SKIP() << "one CPU: nothing runs beside the caller";
  // Elementwise steps compute a row the same way at any number of rows: the blocks' values
  // are the whole loop's bit for bit, at every instruction-set level.
  constexpr int64_t kWide = 4096;  // a step of tens of microseconds
  auto f = function([](Tensor x, Tensor h0) {
    const Tensor in = from_tensor(x, constant<int32_t>({-1, kWide}));
    const Tensor out0 = reserve(constant<int32_t>({-1, kWide}), kSteps);
    auto [i, h, out, seq] =
        while_loop([](Tensor i, Tensor, Tensor, Tensor) { return i < kSteps; },
                   [](Tensor i, Tensor h, Tensor out, Tensor seq) {
                     const Tensor next = tanh(h * 0.9f + get_item(seq, i, constant<int32_t>({-1, kWide})));
                     return std::make_tuple(i + 1, next, set_item(out, i, next), seq);
                   },
                   std::make_tuple(constant(0), h0, out0, in));
    return std::make_tuple(stack(out, constant<int32_t>({-1, kWide}), kSteps), h);
  });
  ConcreteFunction cf =
      f.get_concrete_function(TensorSpec{{kSteps, -1, kWide}, DType::Float32}, TensorSpec{{-1, kWide}, DType::Float32});
  for (int64_t batch : {8, 13, 32}) {
    const Tensor x = random_uniform({kSteps, batch, kWide}, -1, 1, DType::Float32, 5);
    const Tensor h0 = random_uniform({batch, kWide}, -1, 1, DType::Float32, 6);
    std::vector<std::vector<float>> results[2];
    bool by_rows[2];
    for (int threads : {1, 2}) {
      config::set_intra_op_parallelism_threads(threads);
      const int64_t before = exec::loops_run_by_rows();
      const std::vector<Tensor> out = cf(x, h0);
      by_rows[threads - 1] = exec::loops_run_by_rows() > before;
      config::set_intra_op_parallelism_threads(0);
      results[threads - 1] = {out[0].to_vector<float>(), out[1].to_vector<float>()};
    }
    EXPECT_FALSE(by_rows[0]);
    EXPECT_TRUE(by_rows[1]) << batch;
    EXPECT_EQ(results[1], results[0]) << batch;
  }
}

TEST(LoopRows, LoopsWhoseRowsDependOnEachOtherRunWhole) {
  if (default_intra_op_threads() < 2) GTEST_SKIP() << "one CPU: nothing runs beside the caller";
  for (Variant v : {Variant::kCondReadsRows, Variant::kMixesRows}) {
    ConcreteFunction cf = recurrent(v);
    const Inputs in = inputs(32);
    const auto [split, by_rows] = run(cf, in, 2);
    EXPECT_FALSE(by_rows) << static_cast<int>(v);
    expect_close(split, run(cf, in, 1).first, 32);
  }
}

TEST(LoopRows, TheAnalysisNamesEachVariable) {
  // The sequence list is rows though the body passes it along; the counter and the weights
  // the body captures (passed along as two more variables) are free.
  ConcreteFunction cf = recurrent(Variant::kRowwise);
  const graph::Graph& g = *cf.impl()->optimized;
  int loops = 0;
  for (const auto& n : g.nodes()) {
    if (!n->op->has(ops::kLoop)) continue;
    ++loops;
    const auto refs = ops::func_refs(n->attrs);
    const exec::LoopRows rows = exec::analyze_loop_rows(g.library().get(refs[0]->name), g.library().get(refs[1]->name));
    ASSERT_TRUE(rows.separable);
    EXPECT_EQ(rows.vars,
              (std::vector<exec::LoopVar>{exec::LoopVar::kFree, exec::LoopVar::kRows, exec::LoopVar::kListRows,
                                          exec::LoopVar::kListRows, exec::LoopVar::kFree, exec::LoopVar::kFree}));
    // The sequence and the weights come out as they went in: the sequence is not stitched.
    EXPECT_EQ(rows.unchanged, (std::vector<bool>{false, false, false, true, true, true}));
  }
  EXPECT_EQ(loops, 1);
}

TEST(LoopRows, ABlockStopsAtTheCallersDeadline) {
  if (default_intra_op_threads() < 2) GTEST_SKIP() << "one CPU: nothing runs beside the caller";
  // A row-wise loop that never ends: its blocks check the caller's limits.
  auto f = function([](Tensor h, Tensor u) {
    auto [i, last] = while_loop([](Tensor i, Tensor) { return i >= 0; },
                                [u](Tensor i, Tensor h) { return std::make_tuple(i + 1, tanh(matmul(h, u))); },
                                std::make_tuple(constant(0), h));
    return last;
  });
  ConcreteFunction cf =
      f.get_concrete_function(TensorSpec{{-1, kUnits}, DType::Float32}, TensorSpec{{kUnits, kUnits}, DType::Float32});
  const Inputs in = inputs(32);
  config::set_intra_op_parallelism_threads(2);
  const int64_t before = exec::loops_run_by_rows();
  const auto start = std::chrono::steady_clock::now();
  {
    RunLimitsScope limits({.timeout = std::chrono::milliseconds(200)});
    expect_error<DeadlineExceededError>([&] { cf(in.h0, in.u); }, "deadline");
  }
  config::set_intra_op_parallelism_threads(0);
  EXPECT_GT(exec::loops_run_by_rows(), before);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
}
