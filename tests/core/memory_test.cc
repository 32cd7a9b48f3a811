// Released memory goes back to the system: the buffer caches keep at most the cache limit
// together (these tests set it to 64 MiB), and large buffers are reused from call to call.
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "core/buffer.h"
#include "core/sanitizers.h"
#include "test_util.h"

using namespace kiln;

namespace {

#if defined(KILN_ASAN) || defined(KILN_TSAN)
constexpr bool kSanitized = true;  // their allocators quarantine freed memory
#else
constexpr bool kSanitized = false;
#endif

// Sets the cache limit for one test and restores it after.
struct CacheLimit {
  int64_t saved = config::memory_stats().cache_limit_bytes;
  explicit CacheLimit(int64_t bytes) { config::set_memory_cache_limit(bytes); }
  ~CacheLimit() { config::set_memory_cache_limit(saved); }
};

int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

TEST(Memory, ReleasedTensorsGoBackToTheSystem) {
  if (kSanitized) GTEST_SKIP() << "sanitizer allocators keep freed memory in quarantine";
  constexpr int64_t kMB = 1 << 20;
  config::trim_memory();
  CacheLimit limit(64 * kMB);
  const int64_t before = resident_bytes();
  {
    std::vector<Tensor> big;
    for (int i = 0; i < 20; ++i) big.push_back(fill({10'000'000}, i));  // 40 MB each
    EXPECT_GT(resident_bytes() - before, 700 * kMB);
    float sum = 0;
    for (const Tensor& t : big) sum += t.to_vector<float>()[9'999'999];
    EXPECT_EQ(sum, 190.0f);
  }
  const int64_t after = resident_bytes();
  std::printf("resident: %lld MB before, %lld MB after releasing 800 MB; caches hold %lld MB\n",
              static_cast<long long>(before / kMB), static_cast<long long>(after / kMB),
              static_cast<long long>(config::memory_stats().cached_bytes / kMB));
  EXPECT_LE(config::memory_stats().cached_bytes, 64 * kMB);
  EXPECT_LE(after - before, 64 * kMB);
  config::trim_memory();
  EXPECT_EQ(config::memory_stats().cached_bytes, 0);
  EXPECT_LE(resident_bytes() - before, 16 * kMB);
}

TEST(Memory, SmallBuffersStillComeFromTheCache) {
  for (int i = 0; i < 4; ++i) (void)(fill({1000}, 1.0) + 1.0f);  // warm: two buffers at once
  const auto before = buffer_stats().system_allocations;
  for (int i = 0; i < 100; ++i) (void)(fill({1000}, 1.0) + 1.0f);
  EXPECT_EQ(buffer_stats().system_allocations, before);
}

// Each thread recycles buffers through its own cache, claiming budget in chunks; together
// the caches still hold at most 64 MiB, while the threads run and after they exit (their
// caches then move to the shared pool), and trimming gives it all back.
TEST(Memory, ManyThreadsCachesShareOneBudget) {
  constexpr int64_t kMB = 1 << 20;
  config::trim_memory();
  CacheLimit limit(64 * kMB);
  constexpr int kThreads = 6;
  std::barrier released(kThreads + 1), checked(kThreads + 1);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::vector<Buffer*> held;
      for (int round = 0; round < 3; ++round) {
        for (size_t bytes = 1000 + t; bytes <= (size_t{6} << 20); bytes = bytes * 3 / 2)
          held.push_back(buffer_allocate(bytes));
        for (Buffer* b : held) buffer_release(b);
        held.clear();
      }
      released.arrive_and_wait();
      checked.arrive_and_wait();
    });
  released.arrive_and_wait();
  const int64_t while_running = buffer_stats().cached_bytes;
  checked.arrive_and_wait();
  for (auto& th : threads) th.join();
  EXPECT_GT(while_running, 8 * kMB);
  EXPECT_LE(while_running, 64 * kMB);
  EXPECT_LE(buffer_stats().cached_bytes, 64 * kMB);
  EXPECT_EQ(buffer_stats().cached_bytes, while_running) << "an exiting thread's cache moves to the shared pool";
  config::trim_memory();
  EXPECT_EQ(buffer_stats().cached_bytes, 0);
}

// A large buffer (above the 64 MiB classes) released between calls is reused by the next
// call of about its size: no new system allocation, so no fresh pages for the kernel to zero.
// (Counted as differences: the thread pool's workers may hold small buffers from other tests.)
TEST(Memory, LargeBuffersAreReusedAcrossCalls) {
  constexpr int64_t kMB = 1 << 20;
  config::trim_memory();
  CacheLimit limit(512 * kMB);
  const int64_t base = buffer_stats().cached_bytes;
  buffer_release(buffer_allocate(100 * kMB));
  EXPECT_EQ(buffer_stats().cached_bytes - base, 100 * kMB);
  const auto before = buffer_stats().system_allocations;
  for (int64_t mb : {100, 99, 90, 82}) buffer_release(buffer_allocate(mb * kMB));  // within a quarter
  EXPECT_EQ(buffer_stats().system_allocations, before);
  buffer_release(buffer_allocate(70 * kMB));  // more than a quarter smaller: a buffer of its own
  EXPECT_EQ(buffer_stats().system_allocations, before + 1);
  EXPECT_EQ(buffer_stats().cached_bytes - base, 170 * kMB);
  config::trim_memory();
  EXPECT_LE(buffer_stats().cached_bytes, base);
}

// Past the limit, the oldest large buffers go back first; one larger than the limit is not kept.
TEST(Memory, LargeBufferCacheStaysWithinTheLimit) {
  constexpr int64_t kMB = 1 << 20;
  config::trim_memory();
  CacheLimit limit(300 * kMB);
  const int64_t base = buffer_stats().cached_bytes;
  std::vector<Buffer*> held;
  for (int64_t mb : {100, 120, 140}) held.push_back(buffer_allocate(mb * kMB));
  for (Buffer* b : held) buffer_release(b);  // 100 and 120 fit; 140 evicts the 100
  EXPECT_EQ(buffer_stats().cached_bytes - base, 260 * kMB);
  EXPECT_LE(buffer_stats().cached_bytes, 300 * kMB);
  buffer_release(buffer_allocate(400 * kMB));  // alone beyond the limit: freed, the others kept
  EXPECT_EQ(buffer_stats().cached_bytes - base, 260 * kMB);
  config::set_memory_cache_limit(200 * kMB);  // lowering it gives back the oldest (the 120) first
  EXPECT_EQ(buffer_stats().cached_bytes - base, 140 * kMB);
  config::trim_memory();
}

TEST(Memory, DefaultLimitIsAnEighthOfMemoryWithinBounds) {
  const int64_t limit = config::memory_stats().cache_limit_bytes;
  if (std::getenv("KILN_MEMORY_CACHE_BYTES")) GTEST_SKIP() << "set by the environment";
  EXPECT_GE(limit, int64_t{64} << 20);
  EXPECT_LE(limit, int64_t{1} << 30);
  const int64_t eighth = int64_t{sysconf(_SC_PHYS_PAGES)} * sysconf(_SC_PAGESIZE) / 8;
  EXPECT_EQ(limit, std::max(int64_t{64} << 20, std::min(eighth, int64_t{1} << 30)));
}

}  // namespace
