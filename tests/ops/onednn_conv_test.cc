// Float32 convolutions on oneDNN (kernels/onednn.h) against kiln's own kernels, and its cache
// of reordered filters: a hit only while the very same immutable memory is in use, so an
// assigned variable, a new filter or memory kiln does not own always gives fresh results.
// (CI installs libdnnl-dev; without it these tests say so and skip.)
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <map>
#include <thread>

#include "core/cpu_isa.h"
#include "core/parallel.h"
#include "core/sanitizers.h"
#include "kernels/onednn.h"
#include "kiln/cpu.h"
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

struct Case {
  std::vector<int64_t> x, k, strides, dilations;
  std::string padding;
  std::vector<int64_t> explicit_paddings;
  std::string op = "Conv2D";
};

Tensor convolve(const Case& t, const Tensor& x, const Tensor& k) {
  std::map<std::string, OpAttrValue> attrs = {
      {"strides", t.strides}, {"padding", t.padding}, {"dilations", t.dilations}};
  if (!t.explicit_paddings.empty()) attrs["explicit_paddings"] = t.explicit_paddings;
  return execute_op(t.op, {x, k}, attrs)[0];
}

// Within a few roundings per term of the window's sum: the two libraries add in other orders.
void expect_close(const std::vector<float>& got, const std::vector<float>& want, int64_t patch,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const float bound = 4 * 1.2e-7f * static_cast<float>(patch);  // |x|, |k| <= 1
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], bound) << what << " at " << i << " got " << got[i] << " want " << want[i];
}

std::vector<float> with_kiln_kernels(const Case& t, const Tensor& x, const Tensor& k) {
  kernels::onednn::enable(false);
  std::vector<float> y = convolve(t, x, k).to_vector<float>();
  kernels::onednn::enable(true);
  return y;
}

// BatchNormalization folded into oneDNN's filters (KILN_FOLD_BATCH_NORM) on or off while alive.
class FoldScope {
 public:
  explicit FoldScope(bool on) { kernels::onednn::set_fold_batch_norm(on); }
  ~FoldScope() { kernels::onednn::set_fold_batch_norm(was_); }
  FoldScope(const FoldScope&) = delete;
  FoldScope& operator=(const FoldScope&) = delete;

 private:
  const bool was_ = kernels::onednn::fold_batch_norm_requested();
};

// The per-channel chains after a convolution `y` that the optimizer fuses into it.
enum class Chain {
  kBatchNorm,
  kBatchNormRelu,
  kBatchNormRelu6,
  kBiasRelu6,
  kScaleSub,
  kBiasBatchNormRelu,
  kBatchNormResidualRelu
};
Tensor chain_after(Chain chain, const Tensor& y, const Tensor& scale, const Tensor& shift, const Tensor& residual) {
  switch (chain) {
    case Chain::kBatchNorm:
      return y * scale + shift;
    case Chain::kBatchNormRelu:
      return relu(y * scale + shift);
    case Chain::kBatchNormRelu6:
      return relu6(y * scale + shift);
    case Chain::kBiasRelu6:
      return relu6(bias_add(y, shift));
    case Chain::kScaleSub:
      return scale * y - shift;
    case Chain::kBiasBatchNormRelu:
      return relu(bias_add(y, shift) * scale + shift);
    case Chain::kBatchNormResidualRelu:
      return relu(y * scale + shift + residual);
  }
  return y;
}

#define REQUIRE_ONEDNN() \
  if (!kernels::onednn::usable()) GTEST_SKIP() << "convolutions run on " << config::convolution_library()

}  // namespace

TEST(OneDnnConv, AgreesWithKilnsOwnKernels) {
  REQUIRE_ONEDNN();
  const std::vector<Case> cases = {
      {{1, 56, 56, 64}, {1, 1, 64, 64}, {1, 1, 1, 1}, {1, 1, 1, 1}, "VALID", {}},
      {{2, 30, 30, 16}, {3, 3, 16, 32}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME", {}},
      {{1, 224, 224, 3}, {7, 7, 3, 64}, {1, 2, 2, 1}, {1, 1, 1, 1}, "SAME", {}},  // ResNet's stem
      {{3, 33, 31, 8}, {3, 3, 8, 24}, {1, 2, 1, 1}, {1, 1, 2, 1}, "VALID", {}},   // stride and dilation
      {{2, 20, 21, 16}, {3, 5, 16, 32}, {1, 1, 2, 1}, {1, 1, 1, 1}, "EXPLICIT", {0, 0, 1, 3, 2, 0, 0, 0}},
      {{1, 7, 7, 512}, {3, 3, 512, 512}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME", {}},  // filter-bound
      // Depthwise (MobileNet's, EfficientNet's; with a multiplier) and grouped.
      {{1, 56, 56, 144}, {3, 3, 144, 1}, {1, 2, 2, 1}, {1, 1, 1, 1}, "SAME", {}, "DepthwiseConv2dNative"},
      {{2, 20, 18, 24}, {5, 5, 24, 2}, {1, 1, 1, 1}, {1, 1, 1, 1}, "VALID", {}, "DepthwiseConv2dNative"},
      {{1, 28, 28, 64}, {3, 3, 16, 64}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME", {}},  // 4 groups
  };
  int seed = 1;
  for (const Case& t : cases) {
    const Tensor x = random_uniform(t.x, -1, 1, DType::Float32, seed++);
    const Tensor k = random_uniform(t.k, -1, 1, DType::Float32, seed++);
    const std::vector<float> got = convolve(t, x, k).to_vector<float>();
    const std::string what =
        t.op + " " + t.padding + " filter " + std::to_string(t.k[0]) + "x" + std::to_string(t.k[1]);
    // The first two shapes have JIT kernels at every level oneDNN runs; others may not (then
    // kiln's own kernels run them: oneDNN's im2col and reference paths are not used).
    if (seed <= 5) {
      EXPECT_TRUE(kernels::onednn::holds_filter(k.data())) << what << ": it ran on oneDNN";
    }
    expect_close(got, with_kiln_kernels(t, x, k), t.k[0] * t.k[1] * t.k[2], what);
    // Traced, with a fused epilogue: the same values as the eager op then the epilogue.
    auto f = function([&](Tensor a, Tensor b) { return relu(convolve(t, a, b)); });
    EXPECT_EQ(f(x, k).to_vector<float>(), relu(convolve(t, x, k)).to_vector<float>()) << what;
  }
}

// Winograd's algorithm runs only when asked for (KILN_ONEDNN_WINOGRAD=1: ctest runs these
// tests so too), for 3x3 stride-1 convolutions at the AVX-512 level: within the same bound of
// kiln's own kernels as the direct kernel, and a traced fused chain still gives the eager
// ops' values (both run the same convolution).
TEST(OneDnnConv, WinogradOnlyWhenAskedFor) {
  REQUIRE_ONEDNN();
  const char* env = std::getenv("KILN_ONEDNN_WINOGRAD");
  const bool asked = env && std::string(env) == "1";
  for (const Case& t : {Case{{2, 28, 28, 64}, {3, 3, 64, 64}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME", {}},
                        Case{{1, 14, 15, 96}, {3, 3, 96, 80}, {1, 1, 1, 1}, {1, 1, 1, 1}, "VALID", {}}}) {
    const Tensor x = random_uniform(t.x, -1, 1, DType::Float32, 91);
    const Tensor k = random_uniform(t.k, -1, 1, DType::Float32, 92);
    const int64_t before = kernels::onednn::winograd_runs();
    const Tensor y = convolve(t, x, k);
    const int64_t ran = kernels::onednn::winograd_runs() - before;
    if (!asked) {
      EXPECT_EQ(ran, 0) << t.padding;
    } else if (cpu_isa() == CpuIsa::kAvx512) {
      EXPECT_EQ(ran, 1) << t.padding;
    }
    expect_close(y.to_vector<float>(), with_kiln_kernels(t, x, k), 9 * t.k[2], t.padding);
    auto f = function([&](Tensor a, Tensor b) { return relu(convolve(t, a, b)); });
    EXPECT_EQ(f(x, k).to_vector<float>(), relu(y).to_vector<float>()) << t.padding;
  }
}

// A 3x3 convolution of 32 channels into 64 (288 terms per output), an input and two filters.
struct TwoFilters {
  Case t = {{1, 28, 28, 32}, {3, 3, 32, 64}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME", {}};
  Tensor x, k1, k2;
  explicit TwoFilters(int seed)
      : x(random_uniform(t.x, -1, 1, DType::Float32, seed)),
        k1(random_uniform(t.k, -1, 1, DType::Float32, seed + 1)),
        k2(random_uniform(t.k, -1, 1, DType::Float32, seed + 2)) {}
};

// A traced convolution on oneDNN with its fused chain (BiasAdd, Keras's BatchNormalization's
// Mul and AddV2, a Sub, a residual AddV2 of a tensor of the output's shape, ReLU or ReLU6,
// applied by kiln's epilogue after oneDNN): the same
// values as the eager ops, NaN and infinities included, with one NaN in most windows and
// channel vectors of both signs. Outputs above 512 KB run in blocks, each block's epilogue
// after its convolution (ops/conv.cc, kEpilogueBlockBytes): runs of pixels for the pointwise
// ones (the [2, 40, 40, 64] one's first block ends inside the second image), one image each
// for the [3, 48, 48, 32] convolution and the [3, 40, 40, 96] depthwise one.
TEST(OneDnnConv, FusedChainsGiveTheSeparateOpsValues) {
  REQUIRE_ONEDNN();
  const FoldScope fold_off(false);  // whatever KILN_FOLD_BATCH_NORM says: folding gives other bits
  const std::vector<Case> shapes = {
      {{1, 56, 56, 64}, {1, 1, 64, 64}, {1, 1, 1, 1}, {1, 1, 1, 1}, "VALID", {}},
      {{2, 30, 30, 16}, {3, 3, 16, 32}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME", {}},
      {{1, 56, 56, 144}, {3, 3, 144, 1}, {1, 2, 2, 1}, {1, 1, 1, 1}, "SAME", {}, "DepthwiseConv2dNative"},
      {{1, 28, 28, 64}, {3, 3, 16, 64}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME", {}},
      {{2, 40, 40, 64}, {1, 1, 64, 64}, {1, 1, 1, 1}, {1, 1, 1, 1}, "VALID", {}},
      {{3, 48, 48, 32}, {3, 3, 32, 64}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME", {}},
      {{3, 40, 40, 96}, {3, 3, 96, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME", {}, "DepthwiseConv2dNative"},
      // Outputs over 6 MB (7.3 and 7.1 MB), which run in blocks: pixels, then images.
      {{2, 64, 64, 32}, {1, 1, 32, 224}, {1, 1, 1, 1}, {1, 1, 1, 1}, "VALID", {}},
      {{2, 96, 96, 96}, {3, 3, 96, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME", {}, "DepthwiseConv2dNative"}};
  int seed = 40;
  for (const Case& t : shapes) {
    std::vector<float> xs = random_uniform(t.x, -1, 1, DType::Float32, seed++).to_vector<float>();
    for (size_t i = 0; i < xs.size(); i += 997) xs[i] = std::nanf("");
    xs[xs.size() / 2] = INFINITY;
    const Tensor x = constant(xs, t.x);
    const Tensor k = random_uniform(t.k, -1, 1, DType::Float32, seed++);
    const int64_t oc = t.op == "Conv2D" ? t.k[3] : t.k[2] * t.k[3];
    const Tensor scale = random_uniform({oc}, -2, 2, DType::Float32, seed++);
    const Tensor shift = random_uniform({oc}, -1, 1, DType::Float32, seed++);
    std::vector<int64_t> out_dims = convolve(t, x, k).shape().dims();
    std::vector<float> rs = random_uniform(out_dims, -2, 2, DType::Float32, seed++).to_vector<float>();
    rs[rs.size() / 3] = std::nanf("");
    const Tensor residual = constant(rs, out_dims);
    for (Chain chain : {Chain::kBatchNormRelu, Chain::kBiasRelu6, Chain::kScaleSub, Chain::kBiasBatchNormRelu,
                        Chain::kBatchNormResidualRelu}) {
      auto body = [&](Tensor a, Tensor b) { return chain_after(chain, convolve(t, a, b), scale, shift, residual); };
      auto traced = function(body);
      if (chain == Chain::kBatchNormResidualRelu) {  // the residual AddV2 and the ReLU are the convolution's
        int separate = 0;
        for (const auto& op : traced.get_concrete_function(x, k).optimized_graph().operations)
          separate += op.type == "AddV2" || op.type == "Relu" || op.type == "KilnFusedElementwise";
        EXPECT_EQ(separate, 0) << t.op;
      }
      const std::vector<float> got = traced(x, k).to_vector<float>();
      const std::vector<float> want = body(x, k).to_vector<float>();
      ASSERT_EQ(got.size(), want.size());
      int nan = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        nan += std::isnan(want[i]);
        ASSERT_TRUE(std::isnan(got[i]) == std::isnan(want[i]) && (std::isnan(want[i]) || got[i] == want[i]))
            << t.op << " chain " << static_cast<int>(chain) << " at " << i << ": traced " << got[i] << ", eager "
            << want[i];
      }
      EXPECT_GT(nan, 0) << t.op << " chain " << static_cast<int>(chain);
    }
  }
}

// KILN_FOLD_BATCH_NORM=1: the chain's scale is multiplied into the filter and its shifts
// become oneDNN's bias, a Relu or Relu6 right after them its post-op. Not the separate ops'
// bits, but within the roundings a different order of the same products gives; and a new
// scale (another call's values, the same filter) is folded again, never served stale.
TEST(OneDnnConv, FoldedBatchNormIsCloseToTheSeparateOpsAndFollowsTheScale) {
  REQUIRE_ONEDNN();
  const FoldScope fold_on(true);
  const std::vector<Case> shapes = {
      {{1, 56, 56, 64}, {1, 1, 64, 96}, {1, 1, 1, 1}, {1, 1, 1, 1}, "VALID", {}},
      {{2, 30, 30, 16}, {3, 3, 16, 32}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME", {}},
      {{1, 56, 56, 144}, {3, 3, 144, 1}, {1, 2, 2, 1}, {1, 1, 1, 1}, "SAME", {}, "DepthwiseConv2dNative"},
      {{1, 28, 28, 64}, {3, 3, 16, 64}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME", {}},
      // Over 6 MB of output: blocks of pixels, each with the folded filter and bias.
      {{2, 64, 64, 32}, {1, 1, 32, 224}, {1, 1, 1, 1}, {1, 1, 1, 1}, "VALID", {}}};
  int seed = 70;
  for (const Case& t : shapes) {
    int64_t differ = 0;  // outputs whose bits are not the separate ops': the fold ran
    const Tensor x = random_uniform(t.x, -1, 1, DType::Float32, seed++);
    const Tensor k = random_uniform(t.k, -1, 1, DType::Float32, seed++);
    const int64_t oc = t.op == "Conv2D" ? t.k[3] : t.k[2] * t.k[3];
    const int64_t patch = t.k[0] * t.k[1] * (t.op == "Conv2D" ? t.k[2] : 1);
    const Tensor shift = random_uniform({oc}, -1, 1, DType::Float32, seed++);
    const std::vector<int64_t> out_dims = convolve(t, x, k).shape().dims();
    const Tensor residual = random_uniform(out_dims, -2, 2, DType::Float32, seed++);
    for (Chain chain : {Chain::kBatchNormRelu6, Chain::kScaleSub, Chain::kBiasBatchNormRelu,
                        Chain::kBatchNormResidualRelu, Chain::kBatchNorm}) {
      auto body = [&](Tensor a, Tensor b, Tensor scale) {
        return chain_after(chain, convolve(t, a, b), scale, shift, residual);
      };
      auto traced = function(body);
      // Two scales through one traced function and one filter: the second is folded anew.
      for (int round = 0; round < 2; ++round) {
        const Tensor scale = random_uniform({oc}, -2, 2, DType::Float32, seed++);
        const std::vector<float> got = traced(x, k, scale).to_vector<float>();
        const std::vector<float> want = body(x, k, scale).to_vector<float>();
        // |x|, |k| <= 1, |scale| <= 2: each of the patch's products and the sum's partial sums
        // within a few roundings of a value at most 2 * patch.
        const float bound = 8 * 1.2e-7f * 2 * static_cast<float>(patch + 2);
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) {
          ASSERT_NEAR(got[i], want[i], bound)
              << t.op << " chain " << static_cast<int>(chain) << " round " << round << " at " << i;
          differ += got[i] != want[i];
        }
      }
    }
    EXPECT_GT(differ, 0) << t.op << " " << t.k[0] << "x" << t.k[1] << "x" << t.k[2] << "x" << t.k[3];  // on oneDNN
  }
  // The filters died with the loop: the cache's several entries for each (a layout and two
  // scales) leave at the next insertion.
  const Case t = {{1, 16, 16, 32}, {3, 3, 32, 32}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME", {}};
  convolve(t, random_uniform(t.x, -1, 1, DType::Float32, 1), random_uniform(t.k, -1, 1, DType::Float32, 2));
  EXPECT_LE(kernels::onednn::cached_filters(), 2);
}

TEST(OneDnnConv, AssignedVariablesAndNewFiltersGiveFreshResults) {
  REQUIRE_ONEDNN();
  const TwoFilters s(7);
  const Case& t = s.t;
  const Tensor &x = s.x, &k1 = s.k1, &k2 = s.k2;
  const std::vector<float> want1 = with_kiln_kernels(t, x, k1), want2 = with_kiln_kernels(t, x, k2);
  Variable v(k1), w(k2);
  auto f = function([&](Tensor a) { return convolve(t, a, v.read()); });
  expect_close(f(x).to_vector<float>(), want1, 288, "before the assignment");
  expect_close(f(x).to_vector<float>(), want1, 288, "cached");
  // A variable's reads are new aliases of its buffer on each call: its reordered copy stays
  // cached while the variable holds that buffer, beside another variable's.
  auto both = function([&](Tensor a) { return convolve(t, a, v.read()) + convolve(t, a, w.read()); });
  for (int call = 0; call < 3; ++call) both(x);
  EXPECT_TRUE(kernels::onednn::holds_filter(v.read().data()));
  EXPECT_TRUE(kernels::onednn::holds_filter(w.read().data()));
  v.assign(k2);
  expect_close(f(x).to_vector<float>(), want2, 288, "after assign");
  v.assign_add(zeros(t.k));  // an update in place would be one the cache holds: it copies
  expect_close(f(x).to_vector<float>(), want2, 288, "after assign_add");
}

TEST(OneDnnConv, MemoryKilnDoesNotOwnIsNeverCached) {
  REQUIRE_ONEDNN();
  const TwoFilters s(10);
  const Case& t = s.t;
  const Tensor &x = s.x, &k1 = s.k1, &k2 = s.k2;
  // A filter over caller-owned memory (as a numpy array's), which its owner then rewrites.
  std::vector<float> memory = k1.to_vector<float>();
  const Tensor k = adopt_external(
      DType::Float32, t.k, memory.data(), [](void*) noexcept {}, nullptr);
  expect_close(convolve(t, x, k).to_vector<float>(), with_kiln_kernels(t, x, k1), 288, "first");
  EXPECT_FALSE(kernels::onednn::holds_filter(k.data()));
  const std::vector<float> values2 = k2.to_vector<float>();
  std::copy(values2.begin(), values2.end(), memory.begin());  // the same memory, new values
  expect_close(convolve(t, x, k).to_vector<float>(), with_kiln_kernels(t, x, k2), 288, "rewritten");
}

TEST(OneDnnConv, DeadFiltersLeaveTheCache) {
  REQUIRE_ONEDNN();
  const Case t = {{1, 16, 16, 32}, {3, 3, 32, 32}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME", {}};
  const Tensor x = random_uniform(t.x, -1, 1, DType::Float32, 13);
  for (int step = 0; step < 20; ++step) convolve(t, x, random_uniform(t.k, -1, 1, DType::Float32, 100 + step));
  // Each call's filter died with the call; each insertion drops the dead ones before it.
  EXPECT_LE(kernels::onednn::cached_filters(), 8);
}

TEST(OneDnnConv, ConcurrentCallsAgree) {
  REQUIRE_ONEDNN();
  const Case t = {{2, 24, 24, 16}, {3, 3, 16, 32}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME", {}};
  const Tensor x = random_uniform(t.x, -1, 1, DType::Float32, 20);
  const Tensor k[2] = {random_uniform(t.k, -1, 1, DType::Float32, 21), random_uniform(t.k, -1, 1, DType::Float32, 22)};
  std::vector<float> want[2];
  {
    SerialKernelsScope serial;  // one thread, as each thread below
    for (int i = 0; i < 2; ++i) want[i] = convolve(t, x, k[i]).to_vector<float>();
  }
  bool same[2] = {true, true};
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i)
    threads.emplace_back([&, i] {
      SerialKernelsScope serial;
      for (int rep = 0; rep < 10; ++rep) same[i] = same[i] && convolve(t, x, k[i]).to_vector<float>() == want[i];
    });
  for (auto& th : threads) th.join();
  EXPECT_TRUE(same[0] && same[1]);
}

TEST(OneDnnConv, TheLibraryIsNamed) {
  const std::string name = config::convolution_library();
  EXPECT_TRUE(name.rfind("onednn 2.", 0) == 0 || name.rfind("kiln (", 0) == 0) << name;
  EXPECT_EQ(kernels::onednn::usable(), name.rfind("onednn", 0) == 0);
}

// Once oneDNN is loaded, kiln's parallel_for runs on its OpenMP team (kiln's pool without
// one): every index exactly once, for any thread count, and a chunk's error reaches the caller.
TEST(OneDnnTeam, ParallelForCoversTheRangeOnceAndErrorsReachTheCaller) {
  (void)kernels::onednn::usable();  // loads the library, and with it the team
  for (int64_t n : {0, 1, 2, 7, 1000})
    for (int threads : {1, 2, 0}) {  // 0: the default again
      kiln::config::set_intra_op_parallelism_threads(threads);
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      kiln::parallel_for(n, 2, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << n << " " << threads;
    }
  expect_error<InvalidArgumentError>(
      [] {
        kiln::parallel_for(100, 2, [](int64_t lo, int64_t) {
          if (lo == 0) throw InvalidArgumentError("chunk 0 failed");
        });
      },
      "chunk 0 failed");
}

// A forked child has only the thread that forked: libgomp cannot start a team there and the
// parent's pool threads are gone. Python's multiprocessing forks by default on Linux, so a
// child of a process that ran convolutions must still run them (on kiln's kernels) and split
// work, not wait forever. The child kills itself with SIGALRM if it hangs. (Not among the
// kernel tests run under QEMU's user mode, whose forked child of a threaded process fails an
// assertion of QEMU's own at its first new thread.)
TEST(OneDnnTeam, AForkedChildStillRunsKernelsAndSplitsWork) {
#if defined(KILN_TSAN)
  GTEST_SKIP() << "ThreadSanitizer does not support starting threads after a multi-threaded fork";
#endif
  const Case t = {{1, 30, 30, 16}, {3, 3, 16, 32}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME", {}};
  const Tensor x = random_uniform(t.x, -1, 1, DType::Float32, 3);
  const Tensor k = random_uniform(t.k, -1, 1, DType::Float32, 4);
  kiln::config::set_intra_op_parallelism_threads(2);
  const std::vector<float> want = convolve(t, x, k).to_vector<float>();
  kiln::parallel_for(1000, 2, [](int64_t, int64_t) {});  // the team or the pool has started
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(60);
    std::atomic<int64_t> covered{0};
    kiln::parallel_for(1000, 2, [&](int64_t lo, int64_t hi) { covered += hi - lo; });
    const std::vector<float> got = convolve(t, x, k).to_vector<float>();
    bool close = got.size() == want.size();
    for (size_t i = 0; close && i < got.size(); ++i) close = std::fabs(got[i] - want[i]) <= 1e-3f;
    _exit(covered != 1000 ? 2 : close ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  kiln::config::set_intra_op_parallelism_threads(0);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status) << " (14: it hung)";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: the child's split missed work; 3: its convolution differs";
}
