#include "core/buffer.h"

#include <malloc.h>

#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "kiln/errors.h"

namespace kiln {
namespace {

// Size classes are powers of two from 64 B to 64 MiB; larger buffers go straight to the
// system. Each thread keeps a few buffers per class; overflow goes to a shared list. What
// all the caches keep together is bounded in bytes (kMaxCachedBytes): beyond it a released
// buffer goes back to the system, so memory freed by a program is not held for good.
constexpr int kMinClassLog2 = 6;
constexpr int kMaxClassLog2 = 26;
constexpr int kNumClasses = kMaxClassLog2 - kMinClassLog2 + 1;
constexpr size_t kThreadCacheBytes = size_t{8} << 20;   // per class, per thread
constexpr int64_t kMaxCachedBytes = int64_t{64} << 20;  // every cache of the process together

std::atomic<int64_t> g_system_allocations{0};
std::atomic<int64_t> g_pool_hits{0};
std::atomic<int64_t> g_cached_bytes{0};

// Accounts `bytes` more in the caches if the budget allows.
bool reserve_cached(size_t bytes) {
  int64_t cur = g_cached_bytes.load(std::memory_order_relaxed);
  while (cur + static_cast<int64_t>(bytes) <= kMaxCachedBytes)
    if (g_cached_bytes.compare_exchange_weak(cur, cur + static_cast<int64_t>(bytes), std::memory_order_relaxed))
      return true;
  return false;
}
void unreserve_cached(size_t bytes) {
  g_cached_bytes.fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
}

void system_free(Buffer* b) {
  std::free(b->data);
  delete b;
}

using ClassLists = std::vector<Buffer*>[kNumClasses];

// Gives every buffer of the lists back to the system.
void free_all(ClassLists& lists) {
  for (auto& l : lists) {
    for (Buffer* b : l) {
      unreserve_cached(b->capacity);
      system_free(b);
    }
    l.clear();
  }
}

struct SharedPool {
  std::mutex mu;
  ClassLists lists;
  void drain() { free_all(lists); }  // mu held
};
SharedPool& shared_pool() {
  static SharedPool* pool = new SharedPool();  // never destroyed: threads may outlive statics
  return *pool;
}

// False once this thread's cache is destroyed (a buffer released by a later static
// destructor then goes to the shared pool). A trivially destructible flag stays readable.
thread_local int t_cache_state = 0;  // 0: not built yet, 1: alive, 2: destroyed

struct ThreadCache {
  ClassLists lists;
  ThreadCache() { t_cache_state = 1; }
  ~ThreadCache() {
    t_cache_state = 2;
    SharedPool& sp = shared_pool();
    std::lock_guard<std::mutex> lock(sp.mu);
    for (int c = 0; c < kNumClasses; ++c) sp.lists[c].insert(sp.lists[c].end(), lists[c].begin(), lists[c].end());
  }
  void drain() { free_all(lists); }
};
thread_local ThreadCache t_cache;

// This thread's cache, or null once it has been destroyed.
ThreadCache* thread_cache() {
  if (t_cache_state == 2) return nullptr;
  return &t_cache;
}

int class_of(size_t bytes) {
  int log2 = kMinClassLog2;
  while ((size_t{1} << log2) < bytes) ++log2;
  return log2 - kMinClassLog2;
}

Buffer* system_allocate(size_t bytes, int size_class) {
  void* p = std::aligned_alloc(kBufferAlignment, bytes);
  if (!p) throw InternalError("OOM when allocating a buffer of " + std::to_string(bytes) + " bytes");
  g_system_allocations.fetch_add(1, std::memory_order_relaxed);
  Buffer* b = new Buffer();
  b->capacity = bytes;
  b->size_class = size_class;
  b->data = p;
  return b;
}

}  // namespace

Buffer* buffer_allocate(size_t bytes) {
  if (bytes > kMaxBufferBytes)
    throw InvalidArgumentError("Cannot allocate a buffer of " + std::to_string(bytes) + " bytes");
  if (bytes == 0) bytes = 1;
  if (bytes > (size_t{1} << kMaxClassLog2)) {
    size_t rounded = (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
    return system_allocate(rounded, -1);
  }
  const int c = class_of(bytes);
  ThreadCache* tc = thread_cache();
  if (tc && !tc->lists[c].empty()) {
    auto& list = tc->lists[c];
    Buffer* b = list.back();
    list.pop_back();
    unreserve_cached(b->capacity);
    b->refs.store(1, std::memory_order_relaxed);
    g_pool_hits.fetch_add(1, std::memory_order_relaxed);
    return b;
  }
  {
    SharedPool& sp = shared_pool();
    std::lock_guard<std::mutex> lock(sp.mu);
    if (!sp.lists[c].empty()) {
      Buffer* b = sp.lists[c].back();
      sp.lists[c].pop_back();
      unreserve_cached(b->capacity);
      b->refs.store(1, std::memory_order_relaxed);
      g_pool_hits.fetch_add(1, std::memory_order_relaxed);
      return b;
    }
  }
  return system_allocate(size_t{1} << (c + kMinClassLog2), c);
}

Buffer* buffer_adopt(void* data, size_t bytes, ExternalRelease release, void* context) {
  auto* b = new Buffer;
  b->capacity = bytes;
  b->data = data;
  b->external_release = release;
  b->external_context = context;
  return b;
}

void buffer_release(Buffer* b) noexcept {
  if (b->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (b->external_release) {
    b->external_release(b->external_context);
    delete b;
    return;
  }
  if (b->size_class >= 0 && reserve_cached(b->capacity)) {
    if (ThreadCache* tc = thread_cache()) {
      auto& list = tc->lists[b->size_class];
      if ((list.size() + 1) * b->capacity <= kThreadCacheBytes || list.empty()) {
        list.push_back(b);
        return;
      }
    }
    SharedPool& sp = shared_pool();
    std::lock_guard<std::mutex> lock(sp.mu);
    sp.lists[b->size_class].push_back(b);
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

int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r))
    throw InvalidArgumentError(std::string("Encountered overflow when multiplying ") + std::to_string(a) + " with " +
                               std::to_string(b) + " computing " + what);
  return r;
}

BufferStats buffer_stats() { return {g_system_allocations.load(), g_pool_hits.load(), g_cached_bytes.load()}; }

}  // namespace kiln
