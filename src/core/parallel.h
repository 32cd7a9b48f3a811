// Intra-op parallelism: split a large kernel's index range over the process thread pool.
// Small ranges run inline on the calling thread; the caller always works too, so a call
// never waits on a busy pool for work it could do itself.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>

namespace kiln {

// Threads that share big kernels (the calling thread included); at least 1. Returns 1
// while this thread runs steps of an inter-op parallel plan (the plan uses the threads).
int intra_op_threads();
// Threads available at all (the configured count, ignoring the scope below).
int configured_threads();
// While alive, kernels on this thread run single-threaded.
class SerialKernelsScope {
 public:
  SerialKernelsScope();
  ~SerialKernelsScope();
  SerialKernelsScope(const SerialKernelsScope&) = delete;
  SerialKernelsScope& operator=(const SerialKernelsScope&) = delete;

 private:
  bool previous_;
};
// Overrides the count (1 disables intra-op parallelism), capped to the default.
void set_intra_op_threads(int n);
// The default count: the CPUs this process may run on.
int default_intra_op_threads();
// How many steps of a plan may run side by side (tf.config.threading's inter-op setting):
// 1 never, n > 1 at most n, 0 (the default) as many as the intra-op threads.
void set_inter_op_threads(int n);
int inter_op_threads();

// Runs fn on a pool thread (fire and forget; fn must own what it touches).
void schedule_on_pool(std::function<void()> fn);

// Where another library's thread team serves the kernels' splits better than kiln's pool
// (oneDNN's OpenMP threads, which spin after its convolutions: kernels/onednn.cc), it runs
// fn(arg) on each of `threads` members, the caller among them, and returns when all have.
using TeamRunner = void (*)(void (*fn)(void*), void* arg, int threads);
void set_team_runner(TeamRunner runner);
TeamRunner team_runner();  // the one set, or nullptr (benchmarks compare the two)
// Splits fn over the pool (see parallel_for).
void parallel_for_split(int64_t n, const std::function<void(int64_t, int64_t)>& fn);
// How many jobs a pool thread joined while lingering after an earlier one, and how long it
// lingers (300 us; tests make it long enough that no host's scheduling can miss it).
int64_t lingering_joins();
void set_helper_linger(std::chrono::microseconds t);

// Runs fn(begin, end) over [0, n) in contiguous chunks. Splits only when n >= min_parallel
// (the caller's estimate of where threads pay off) and more than one thread is allowed;
// otherwise calls fn(0, n) directly (no std::function on the small-tensor path).
template <class F>
void parallel_for(int64_t n, int64_t min_parallel, F&& fn) {
  if (n < min_parallel || n < 2 || intra_op_threads() <= 1) {
    if (n > 0) fn(int64_t{0}, n);
    return;
  }
  parallel_for_split(n, std::function<void(int64_t, int64_t)>(std::forward<F>(fn)));
}

}  // namespace kiln
