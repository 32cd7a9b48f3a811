// parallel_for_split when a chunk throws: on the calling thread (it must still wait for the
// helpers' chunks, which use its stack) or on a helper (which must not terminate the process);
// and when a helper starts late or never runs a chunk.
#include "core/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "kiln/op_registry.h"
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

struct ThreadsScope {
  int before = configured_threads();
  explicit ThreadsScope(int n) { set_intra_op_threads(n); }
  ~ThreadsScope() { set_intra_op_threads(before); }
};

TEST(ParallelForSplit, ThrowOnTheCallerWaitsForHelpers) {
  ThreadsScope threads(2);
  if (configured_threads() < 2) GTEST_SKIP() << "needs two threads";
  const std::thread::id caller = std::this_thread::get_id();
  int thrown_on_caller = 0;
  for (int round = 0; round < 50; ++round) {
    std::atomic<int> helper_chunks{0};
    std::vector<int> on_stack(1000, 1);  // helpers read the caller's stack while it unwinds
    try {
      parallel_for_split(2, [&](int64_t, int64_t) {
        if (std::this_thread::get_id() == caller) throw InvalidArgumentError("caller chunk failed");
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        int sum = 0;
        for (int v : on_stack) sum += v;
        if (sum == 1000) helper_chunks.fetch_add(1);
      });
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("caller chunk failed"), std::string::npos);
      ++thrown_on_caller;
    }
  }
  EXPECT_GT(thrown_on_caller, 0);  // on a loaded machine a helper may have run both chunks
}

TEST(ParallelForSplit, ThrowOnAHelperReachesTheCaller) {
  ThreadsScope threads(2);
  if (configured_threads() < 2) GTEST_SKIP() << "needs two threads";
  const std::thread::id caller = std::this_thread::get_id();
  int thrown_on_helper = 0;
  for (int round = 0; round < 50; ++round) {
    try {
      parallel_for_split(2, [&](int64_t, int64_t) {
        if (std::this_thread::get_id() != caller) throw OutOfRangeError("helper chunk failed");
        std::this_thread::sleep_for(std::chrono::microseconds(200));  // let a helper take a chunk
      });
    } catch (const OutOfRangeError& e) {
      EXPECT_NE(std::string(e.what()).find("helper chunk failed"), std::string::npos);
      ++thrown_on_helper;
    }
  }
  EXPECT_GT(thrown_on_helper, 0);  // the caller may have run both chunks in some rounds
}

TEST(ParallelForSplit, EveryChunkRunsOnceWithoutErrors) {
  ThreadsScope threads(2);
  std::vector<std::atomic<int>> seen(1000);
  parallel_for_split(1000, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) seen[i].fetch_add(1);
  });
  for (auto& s : seen) EXPECT_EQ(s.load(), 1);
}

// A helper the pool cannot start (every worker busy) does not hold the caller up: the caller
// takes its chunks, returns, and the helper finds none left when it runs. (Waiting for every
// helper, the caller waited here until the workers were released, two seconds later.)
TEST(ParallelForSplit, TheCallerTakesTheChunksOfAHelperThatHasNotStarted) {
  ThreadsScope threads(2);
  if (configured_threads() < 2) GTEST_SKIP() << "needs two threads";
  struct Hold {  // shared with the pool's tasks, which may outlive this test's frame
    std::atomic<bool> release{false};
    std::atomic<int> held{0};
  };
  auto hold = std::make_shared<Hold>();
  const int workers = std::max(1, default_intra_op_threads() - 1);  // the pool's threads
  for (int i = 0; i < workers; ++i)
    schedule_on_pool([hold] {
      hold->held.fetch_add(1);
      while (!hold->release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
  while (hold->held.load() < workers) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::thread releaser([hold] {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    hold->release.store(true);
  });
  std::atomic<int64_t> covered{0};
  const auto start = std::chrono::steady_clock::now();
  parallel_for_split(2, [&](int64_t b, int64_t e) { covered.fetch_add(e - b); });
  const auto elapsed = std::chrono::steady_clock::now() - start;
  hold->release.store(true);
  releaser.join();
  EXPECT_EQ(covered.load(), 2);
  EXPECT_LT(elapsed, std::chrono::seconds(1));
}

// A pool thread that has just done its share of a job joins the next one at once, without
// going back to sleep in between (on a VM, waking it again took longer than the kernel).
TEST(ParallelForSplit, AHelperLingersAndJoinsTheNextJob) {
  ThreadsScope threads(2);
  if (configured_threads() < 2) GTEST_SKIP() << "needs two threads";
  const std::thread::id caller = std::this_thread::get_id();
  // Two chunks; the caller's waits (up to a second) until another thread has taken the other.
  auto job = [&] {
    std::atomic<bool> other{false};
    parallel_for_split(2, [&](int64_t, int64_t) {
      if (std::this_thread::get_id() != caller) {
        other.store(true);
        return;
      }
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      while (!other.load() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    });
    return other.load();
  };
  struct LingerScope {  // long enough that the next job comes within it on any host
    LingerScope() { set_helper_linger(std::chrono::seconds(2)); }
    ~LingerScope() { set_helper_linger(std::chrono::microseconds(300)); }
  } linger;
  const int64_t before = lingering_joins();
  for (int round = 0; round < 3; ++round) {
    if (!job()) GTEST_SKIP() << "the pool's thread did not run within a second (a loaded machine)";
    // Right after: the helper, still polling, takes the second chunk; the task the pool
    // queued for it waits behind the polling.
    EXPECT_TRUE(job());
  }
  EXPECT_GE(lingering_joins(), before + 3);
}

// Jobs back to back of every size, helpers lingering into the next: every index runs once.
TEST(ParallelForSplit, BackToBackJobsCoverEveryIndexOnce) {
  ThreadsScope threads(2);
  for (int64_t n = 1; n <= 300; ++n) {
    std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
    parallel_for_split(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) seen[static_cast<size_t>(i)].fetch_add(1);
    });
    for (auto& s : seen) ASSERT_EQ(s.load(), 1) << n;
  }
}

// A task scheduled on the pool is not held up by a thread lingering after a job.
TEST(ParallelForSplit, APoolTaskEndsTheLingering) {
  ThreadsScope threads(2);
  if (configured_threads() < 2) GTEST_SKIP() << "needs two threads";
  auto started = std::make_shared<std::atomic<bool>>(false);
  parallel_for_split(8, [&](int64_t, int64_t) { std::this_thread::sleep_for(std::chrono::microseconds(300)); });
  schedule_on_pool([started] { started->store(true); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!started->load() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  EXPECT_TRUE(started->load());
}

// A chunk that runs a parallel kernel (Conv3D's GEMM per block) runs it on its own thread:
// with the pool's workers all inside outer chunks, a nested split used to wait forever.
TEST(ParallelForSplit, NestedSplitsFinish) {
  ThreadsScope threads(2);
  std::atomic<int64_t> sum{0};
  parallel_for_split(8, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      EXPECT_EQ(intra_op_threads(), 1);
      parallel_for(1000, 2, [&](int64_t lo, int64_t hi) { sum.fetch_add(hi - lo); });
    }
  });
  EXPECT_EQ(sum.load(), 8 * 1000);
  EXPECT_EQ(intra_op_threads(), configured_threads());  // restored after the split
  // The case that hung: a large float GEMM inside each chunk of a 3-D convolution.
  Tensor x = random_uniform({2, 6, 34, 34, 16}, -1, 1, DType::Float32, 1);
  Tensor w = random_uniform({3, 3, 3, 16, 32}, -1, 1, DType::Float32, 2);
  Tensor y = execute_op("Conv3D", {x, w},
                        {{"strides", std::vector<int64_t>{1, 1, 1, 1, 1}}, {"padding", std::string("SAME")}})[0];
  EXPECT_EQ(y.shape(), TensorShape({2, 6, 34, 34, 32}));
}

}  // namespace

// The public setting (tf.config.threading's): what was set is what get reports, 0 and below
// mean the default, and the kernels' thread count follows it.
TEST(IntraOpParallelism, PublicSettingDrivesTheKernels) {
  EXPECT_EQ(kiln::config::get_intra_op_parallelism_threads(), 0);
  kiln::config::set_intra_op_parallelism_threads(1);
  EXPECT_EQ(kiln::config::get_intra_op_parallelism_threads(), 1);
  EXPECT_EQ(kiln::intra_op_threads(), 1);
  kiln::config::set_intra_op_parallelism_threads(1 << 20);  // capped to the CPUs we may use
  EXPECT_EQ(kiln::intra_op_threads(), kiln::default_intra_op_threads());
  kiln::config::set_intra_op_parallelism_threads(-3);
  EXPECT_EQ(kiln::config::get_intra_op_parallelism_threads(), -3);
  EXPECT_EQ(kiln::intra_op_threads(), kiln::default_intra_op_threads());
  kiln::config::set_intra_op_parallelism_threads(0);
  EXPECT_EQ(kiln::config::get_intra_op_parallelism_threads(), 0);
}
