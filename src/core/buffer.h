// Aligned, refcounted byte buffers, recycled through a size-class pool so that small
// eager ops do not call malloc each time.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace kiln {

inline constexpr size_t kBufferAlignment = 64;
inline constexpr int kMaxBufferBudgets = 2;  // detail::ActiveLimits::kMaxBudgets

namespace detail {
struct BudgetState;
}

// Gives foreign memory back to its owner (a numpy array, a DLPack producer).
using ExternalRelease = void (*)(void* context) noexcept;

struct Buffer {
  std::atomic<int32_t> refs{1};
  size_t capacity = 0;  // bytes usable at data
  int size_class = -1;  // -1: not pooled
  void* data = nullptr;
  // Set for memory kiln does not own: kiln never writes to it, and the last release calls
  // this instead of freeing.
  ExternalRelease external_release = nullptr;
  void* external_context = nullptr;
  // The memory budgets it is charged to (core/run_limits.h), credited on its release.
  detail::BudgetState* budgets[kMaxBufferBudgets] = {};
};

// A buffer of at least `bytes` bytes (64-byte aligned). Throws InvalidArgumentError if the
// request is absurd (beyond kMaxBufferBytes), ResourceExhaustedError if the system refuses
// or a memory budget in force (core/run_limits.h) would be exceeded.
Buffer* buffer_allocate(size_t bytes);
inline void buffer_retain(Buffer* b) { b->refs.fetch_add(1, std::memory_order_relaxed); }
void buffer_release(Buffer* b) noexcept;
// A buffer over foreign memory; `release(context)` runs once, on the last release.
Buffer* buffer_adopt(void* data, size_t bytes, ExternalRelease release, void* context);

// Requests over this size are refused outright (protects against corrupt shapes).
inline constexpr size_t kMaxBufferBytes = size_t{1} << 40;

// Multiply two non-negative sizes; throws InvalidArgumentError naming `what` on overflow.
[[noreturn]] void fail_mul_overflow(int64_t a, int64_t b, const char* what);
inline int64_t checked_mul(int64_t a, int64_t b, const char* what) {  // inline: every allocation asks
  int64_t r;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r)) fail_mul_overflow(a, b, what);
  return r;
}

// Counters for tests: allocations that reached the system allocator.
struct BufferStats {
  int64_t system_allocations;
  int64_t cached_bytes;  // held by the caches for reuse (at most the cache limit)
};
BufferStats buffer_stats();

// What the caches may hold together (buffer.cc says the default); lowering it gives back
// what the shared caches hold beyond it (threads' own caches shrink as they recycle).
void buffer_set_cache_limit(int64_t bytes);
int64_t buffer_cache_limit();

// Gives this thread's and the shared cache's buffers back to the system, and asks malloc to
// return its free memory (kiln::config::trim_memory).
void buffer_trim();

}  // namespace kiln
