#include "core/buffer.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "core/run_limits.h"
#include "core/tls.h"
#include "kiln/errors.h"

namespace kiln {
namespace {

// Size classes are powers of two from 64 B to 64 MiB. Each thread keeps a few buffers per
// class; overflow goes to a shared list. Larger buffers are rounded to 2 MiB and kept in a
// shared list of their own, reused by a request up to a quarter smaller, oldest given back
// first: a served model's activations at batch 32 are 50-150 MB each, and taking them fresh
// from the system on every call (mmap, then the kernel zeroing every page) cost MobileNetV2
// more than half its time. What all the caches keep together is bounded in bytes (the cache
// limit: config::set_memory_cache_limit, KILN_MEMORY_CACHE_BYTES, by default an eighth of
// the machine's memory, at most 1 GiB, at least 64 MiB): beyond it a released buffer goes
// back to the system, so memory freed by a program is not held for good.
constexpr int kMinClassLog2 = 6;
constexpr int kMaxClassLog2 = 26;
constexpr int kNumClasses = kMaxClassLog2 - kMinClassLog2 + 1;
constexpr size_t kThreadCacheBytes = size_t{8} << 20;  // per class, per thread
constexpr size_t kLargeGranule = size_t{2} << 20;
constexpr int64_t kMinCacheLimit = int64_t{64} << 20;

int64_t default_cache_limit() {
  if (const char* env = std::getenv("KILN_MEMORY_CACHE_BYTES"); env && *env) {
    char* end = nullptr;
    const long long v = std::strtoll(env, &end, 10);
    if (end && *end == '\0' && v >= 0) return v;
    std::fprintf(stderr, "kiln: KILN_MEMORY_CACHE_BYTES=%s is not a number of bytes; ignored\n", env);
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const int64_t eighth = pages > 0 && page > 0 ? int64_t{pages} * page / 8 : kMinCacheLimit;
  return std::max(kMinCacheLimit, std::min(eighth, int64_t{1} << 30));
}
std::atomic<int64_t> g_cache_limit{default_cache_limit()};
// A thread claims budget for its own cache in chunks of this size, so that recycling a
// buffer through it touches no shared counter (an atomic read-modify-write on a line every
// thread writes costs more than a small op's kernel).
constexpr int64_t kCreditChunk = int64_t{1} << 20;

std::atomic<int64_t> g_system_allocations{0};
// Budget claimed by all caches: the buffers they hold plus the threads' unused credit.
std::atomic<int64_t> g_reserved_bytes{0};

// Claims `bytes` of the budget if it allows.
bool reserve_budget(int64_t bytes) {
  int64_t cur = g_reserved_bytes.load(std::memory_order_relaxed);
  const int64_t limit = g_cache_limit.load(std::memory_order_relaxed);
  while (cur + bytes <= limit)
    if (g_reserved_bytes.compare_exchange_weak(cur, cur + bytes, std::memory_order_relaxed)) return true;
  return false;
}
void return_budget(int64_t bytes) { g_reserved_bytes.fetch_sub(bytes, std::memory_order_relaxed); }

void system_free(Buffer* b) {
  std::free(b->data);
  delete b;
}

using ClassLists = std::vector<Buffer*>[kNumClasses];

// Gives every buffer of the lists back to the system; returns their bytes.
int64_t free_all(ClassLists& lists) {
  int64_t bytes = 0;
  for (auto& l : lists) {
    for (Buffer* b : l) {
      bytes += static_cast<int64_t>(b->capacity);
      system_free(b);
    }
    l.clear();
  }
  return bytes;
}

struct SharedPool {
  std::mutex mu;
  ClassLists lists;
  std::deque<Buffer*> large;  // buffers above the classes, oldest released first
  int64_t bytes = 0;          // held in lists and large; each one's budget claimed on its own
  void drain() {              // mu held
    int64_t freed = free_all(lists);
    for (Buffer* b : large) {
      freed += static_cast<int64_t>(b->capacity);
      system_free(b);
    }
    large.clear();
    return_budget(freed);
    bytes = 0;
  }
  // The oldest large buffer goes back to the system (mu held); false when there is none.
  bool evict_oldest_large() {
    if (large.empty()) return false;
    Buffer* b = large.front();
    large.pop_front();
    bytes -= static_cast<int64_t>(b->capacity);
    return_budget(static_cast<int64_t>(b->capacity));
    system_free(b);
    return true;
  }
};
SharedPool& shared_pool() {
  static SharedPool* pool = new SharedPool();  // never destroyed: threads may outlive statics
  return *pool;
}

// False once this thread's cache is destroyed (a buffer released by a later static
// destructor then goes to the shared pool). A trivially destructible flag stays readable.
KILN_TLS thread_local int t_cache_state = 0;  // 0: not built yet, 1: alive, 2: destroyed
struct ThreadCache;
// This thread's cache while it is alive. The cache itself is on the heap: libkiln's
// thread-locals must stay small (core/tls.h).
KILN_TLS thread_local ThreadCache* t_cache_alive = nullptr;

// The live thread caches, for buffer_stats (which sums what they hold).
struct CacheRegistry {
  std::mutex mu;
  std::vector<const ThreadCache*> caches;
};
CacheRegistry& registry() {
  static CacheRegistry* r = new CacheRegistry();  // never destroyed, as the shared pool
  return *r;
}

struct ThreadCache {
  ClassLists lists;
  // Bytes in `lists`. Only this thread writes it (a plain store, no locked instruction);
  // buffer_stats reads it from any thread.
  std::atomic<int64_t> held{0};
  int64_t credit = 0;  // budget claimed for this cache and not used by a buffer yet

  ThreadCache() {
    t_cache_state = 1;
    t_cache_alive = this;
    CacheRegistry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.caches.push_back(this);
  }
  ~ThreadCache() {
    t_cache_state = 2;
    t_cache_alive = nullptr;
    {
      CacheRegistry& r = registry();
      std::lock_guard<std::mutex> lock(r.mu);
      std::erase(r.caches, this);
    }
    return_budget(credit);  // the buffers keep theirs: they move to the shared pool
    SharedPool& sp = shared_pool();
    std::lock_guard<std::mutex> lock(sp.mu);
    for (int c = 0; c < kNumClasses; ++c) sp.lists[c].insert(sp.lists[c].end(), lists[c].begin(), lists[c].end());
    sp.bytes += held.load(std::memory_order_relaxed);
  }
  void add_held(int64_t delta) { held.store(held.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed); }
  // Takes `bytes` of budget for a buffer entering the cache, from the credit when it has
  // enough, else claiming a fresh chunk (or just `bytes` when the budget is nearly spent).
  bool take_budget(int64_t bytes) {
    if (credit < bytes) {
      const int64_t need = bytes - credit;
      if (reserve_budget(need + kCreditChunk))
        credit += need + kCreditChunk;
      else if (reserve_budget(need))
        credit += need;
      else
        return false;
    }
    credit -= bytes;
    add_held(bytes);
    return true;
  }
  // A buffer leaves the cache: its budget becomes credit, and credit beyond two chunks is
  // given back so an idle thread does not sit on the budget.
  void give_budget(int64_t bytes) {
    add_held(-bytes);
    credit += bytes;
    if (credit > 2 * kCreditChunk) {
      return_budget(credit - kCreditChunk);
      credit = kCreditChunk;
    }
  }
  void drain() {
    return_budget(free_all(lists) + credit);
    credit = 0;
    held.store(0, std::memory_order_relaxed);
  }
};
// Destroys the thread's cache when the thread exits.
struct CacheOwner {
  ThreadCache* cache = nullptr;
  ~CacheOwner() { delete cache; }
};
KILN_TLS thread_local CacheOwner t_cache_owner;

// This thread's cache (made on first use), or null once it has been destroyed.
ThreadCache* thread_cache() {
  if (ThreadCache* c = t_cache_alive) return c;
  if (t_cache_state == 2) return nullptr;
  t_cache_owner.cache = new ThreadCache();  // its constructor sets t_cache_alive
  return t_cache_owner.cache;
}

int class_of(size_t bytes) {
  int log2 = kMinClassLog2;
  while ((size_t{1} << log2) < bytes) ++log2;
  return log2 - kMinClassLog2;
}

// The size_class of a buffer above the classes (the large list's); -1 is never pooled.
constexpr int kLargeClass = -2;

Buffer* system_allocate(size_t bytes, int size_class) {
  void* p = std::aligned_alloc(kBufferAlignment, bytes);
  if (!p) throw ResourceExhaustedError("OOM when allocating a buffer of " + std::to_string(bytes) + " bytes");
  g_system_allocations.fetch_add(1, std::memory_order_relaxed);
  Buffer* b = new Buffer();
  b->capacity = bytes;
  b->size_class = size_class;
  b->data = p;
  return b;
}

}  // namespace

namespace {
Buffer* take_buffer(size_t bytes);
}

// Charged to the memory budgets in force, if any (a TLS load when none is): before the
// memory is taken, so a request past a budget never reaches the system allocator.
Buffer* buffer_allocate(size_t bytes) {
  detail::ActiveLimits* limits = detail::active_limits();
  if (!limits || limits->num_budgets == 0) return take_buffer(bytes);
  if (bytes > kMaxBufferBytes)
    throw InvalidArgumentError("Cannot allocate a buffer of " + std::to_string(bytes) + " bytes");
  detail::reserve_budgets(*limits, static_cast<int64_t>(bytes));
  Buffer* b = nullptr;
  try {
    b = take_buffer(bytes);
  } catch (...) {
    detail::unreserve_budgets(*limits, static_cast<int64_t>(bytes));
    throw;
  }
  detail::attach_budgets(b, *limits, static_cast<int64_t>(bytes));
  return b;
}

namespace {
Buffer* take_buffer(size_t bytes) {
  if (bytes > kMaxBufferBytes)
    throw InvalidArgumentError("Cannot allocate a buffer of " + std::to_string(bytes) + " bytes");
  if (bytes == 0) bytes = 1;
  if (bytes > (size_t{1} << kMaxClassLog2)) {
    const size_t rounded = (bytes + kLargeGranule - 1) / kLargeGranule * kLargeGranule;
    {
      // The smallest cached one that fits, if it is at most a quarter larger.
      SharedPool& sp = shared_pool();
      std::lock_guard<std::mutex> lock(sp.mu);
      auto best = sp.large.end();
      for (auto it = sp.large.begin(); it != sp.large.end(); ++it)
        if ((*it)->capacity >= rounded && (*it)->capacity <= rounded + rounded / 4 &&
            (best == sp.large.end() || (*it)->capacity < (*best)->capacity))
          best = it;
      if (best != sp.large.end()) {
        Buffer* b = *best;
        sp.large.erase(best);
        sp.bytes -= static_cast<int64_t>(b->capacity);
        return_budget(static_cast<int64_t>(b->capacity));
        b->refs.store(1, std::memory_order_relaxed);
        return b;
      }
    }
    return system_allocate(rounded, kLargeClass);
  }
  const int c = class_of(bytes);
  ThreadCache* tc = thread_cache();
  if (tc && !tc->lists[c].empty()) {
    auto& list = tc->lists[c];
    Buffer* b = list.back();
    list.pop_back();
    tc->give_budget(static_cast<int64_t>(b->capacity));
    b->refs.store(1, std::memory_order_relaxed);
    return b;
  }
  {
    SharedPool& sp = shared_pool();
    std::lock_guard<std::mutex> lock(sp.mu);
    if (!sp.lists[c].empty()) {
      Buffer* b = sp.lists[c].back();
      sp.lists[c].pop_back();
      sp.bytes -= static_cast<int64_t>(b->capacity);
      return_budget(static_cast<int64_t>(b->capacity));
      b->refs.store(1, std::memory_order_relaxed);
      return b;
    }
  }
  return system_allocate(size_t{1} << (c + kMinClassLog2), c);
}
}  // namespace

Buffer* buffer_adopt(void* data, size_t bytes, ExternalRelease release, void* context) {
  auto* b = new Buffer;
  b->capacity = bytes;
  b->data = data;
  b->external_release = release;
  b->external_context = context;
  return b;
}

void buffer_release(Buffer* b) noexcept {
  // A sole owner skips the atomic decrement: no other thread holds a reference to change it.
  if (b->refs.load(std::memory_order_acquire) != 1 && b->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (b->budgets[0]) detail::credit_buffer(b);
  if (b->external_release) {
    b->external_release(b->external_context);
    delete b;
    return;
  }
  if (b->size_class < 0 && b->size_class != kLargeClass) return system_free(b);
  const auto bytes = static_cast<int64_t>(b->capacity);
  if (b->size_class == kLargeClass) {
    // Kept unless it alone exceeds the limit; older large buffers make room for it.
    if (bytes > g_cache_limit.load(std::memory_order_relaxed)) return system_free(b);
    SharedPool& sp = shared_pool();
    std::lock_guard<std::mutex> lock(sp.mu);
    while (!reserve_budget(bytes))
      if (!sp.evict_oldest_large()) return system_free(b);
    sp.large.push_back(b);
    sp.bytes += bytes;
    return;
  }
  if (ThreadCache* tc = thread_cache()) {
    auto& list = tc->lists[b->size_class];
    if (((list.size() + 1) * b->capacity <= kThreadCacheBytes || list.empty()) && tc->take_budget(bytes)) {
      list.push_back(b);
      return;
    }
  }
  if (reserve_budget(bytes)) {
    SharedPool& sp = shared_pool();
    std::lock_guard<std::mutex> lock(sp.mu);
    sp.lists[b->size_class].push_back(b);
    sp.bytes += bytes;
    return;
  }
  system_free(b);
}

void buffer_trim() {
  if (ThreadCache* tc = thread_cache()) tc->drain();
  {
    SharedPool& sp = shared_pool();
    std::lock_guard<std::mutex> lock(sp.mu);
    sp.drain();
  }
  malloc_trim(0);  // what malloc keeps in its arenas goes back to the system too
}

void fail_mul_overflow(int64_t a, int64_t b, const char* what) {
  throw InvalidArgumentError(std::string("Encountered overflow when multiplying ") + std::to_string(a) + " with " +
                             std::to_string(b) + " computing " + what);
}

void buffer_set_cache_limit(int64_t bytes) {
  g_cache_limit.store(std::max<int64_t>(bytes, 0), std::memory_order_relaxed);
  // Buffers held beyond the new limit go back now (the large ones first, then everything).
  SharedPool& sp = shared_pool();
  std::lock_guard<std::mutex> lock(sp.mu);
  while (g_reserved_bytes.load(std::memory_order_relaxed) > bytes && sp.evict_oldest_large()) {
  }
  if (g_reserved_bytes.load(std::memory_order_relaxed) > bytes) sp.drain();
}

int64_t buffer_cache_limit() { return g_cache_limit.load(std::memory_order_relaxed); }

BufferStats buffer_stats() {
  int64_t cached = 0;
  {
    CacheRegistry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    for (const ThreadCache* tc : r.caches) cached += tc->held.load(std::memory_order_relaxed);
  }
  {
    SharedPool& sp = shared_pool();
    std::lock_guard<std::mutex> lock(sp.mu);
    cached += sp.bytes;
  }
  return BufferStats{.system_allocations = g_system_allocations.load(), .cached_bytes = cached};
}

}  // namespace kiln
