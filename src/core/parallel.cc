#include "core/parallel.h"

#define EIGEN_USE_THREADS
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <unsupported/Eigen/CXX11/ThreadPool>
#include <utility>

#include "core/run_limits.h"
#include "core/tls.h"

#if defined(__linux__)
#include <sched.h>
#endif
#include <pthread.h>

#include <new>

namespace kiln {
namespace {

// The CPUs this process may run on (taskset, cgroups' cpusets), as TensorFlow counts them;
// hardware_concurrency() counts the machine's and would oversubscribe a pinned process.
int default_threads() {
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  const unsigned hc = std::thread::hardware_concurrency();
  return hc == 0 ? 1 : static_cast<int>(hc);
}

std::atomic<int> g_threads{default_threads()};

// Never destroyed: kernels may run during static destruction of user objects. Made at first
// use, and again in a forked child (after_fork_in_child), which has none of the parent's
// threads: the parent's pool would take its work and never run it.
std::atomic<Eigen::ThreadPool*> g_pool{nullptr};
std::mutex g_pool_mu;

Eigen::ThreadPool& pool() {
  if (Eigen::ThreadPool* p = g_pool.load(std::memory_order_acquire)) return *p;
  std::lock_guard<std::mutex> lock(g_pool_mu);
  if (Eigen::ThreadPool* p = g_pool.load(std::memory_order_relaxed)) return *p;
  auto* p = new Eigen::ThreadPool(std::max(1, default_threads() - 1));
  g_pool.store(p, std::memory_order_release);
  return *p;
}

KILN_TLS thread_local bool t_serial_kernels = false;  // inside an inter-op plan or a parallel chunk

// One parallel_for call: the caller and helpers from the pool claim chunk indices until none
// are left. The caller waits for every chunk to be done, not for every helper to run: the
// function and the caller's limits are touched only under a claimed chunk, so a helper the pool
// starts late finds nothing left and touches nothing of the caller's, and the caller, having
// taken that helper's chunks itself, returns without waiting for its wake-up (waiting for
// every helper, a batch-1 LSTM step's 1x128 by 128x512 product split over two threads took
// 8.5-59 us on average against 5.6 on one thread, a futex round trip each time). The wait spins a little before it
// sleeps: a small kernel's chunk on a helper ends within microseconds. A chunk that throws
// makes the chunks after it skip their work; the first exception is kept for the caller (a
// helper never lets one escape: that would terminate). A chunk runs with intra-op parallelism
// off: a kernel that calls another parallel kernel per chunk (Conv3D's GEMMs) would otherwise
// schedule helpers onto a pool whose workers all wait for it, and never finish.
struct Job {
  const std::function<void(int64_t, int64_t)>* fn;
  int64_t n, chunks;
  std::atomic<int64_t> next{0}, done{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::condition_variable all_done;
  std::exception_ptr error;
  detail::ActiveLimits* limits = nullptr;  // the caller's, which waits for every chunk
  // Returns how many chunks this thread ran.
  int64_t work() {
    const bool outer_serial = std::exchange(t_serial_kernels, true);
    int64_t ran = 0;
    for (int64_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < chunks; ++ran) {
      if (!failed.load(std::memory_order_relaxed)) {
        const int64_t begin = n * c / chunks, end = n * (c + 1) / chunks;
        try {
          detail::LimitsAdoption adopt(limits);
          if (limits) limits->check();  // between chunks of a kernel's work
          (*fn)(begin, end);
        } catch (...) {
          failed.store(true, std::memory_order_relaxed);
          std::lock_guard<std::mutex> lock(mu);
          if (!error) error = std::current_exception();
        }
      }
      // The chunk's writes happen before the caller's return (release here, acquire in wait).
      if (done.fetch_add(1, std::memory_order_acq_rel) + 1 == chunks) {
        std::lock_guard<std::mutex> lock(mu);
        all_done.notify_all();
      }
    }
    t_serial_kernels = outer_serial;
    return ran;
  }
  // Spins up to kSpin for the helpers' last chunks before it sleeps: on a VM, a thread put to
  // sleep took hundreds of microseconds to wake, longer than most kernels.
  void wait() {
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (int spin = 0;; ++spin) {
      if (done.load(std::memory_order_acquire) == chunks) return;
      pause();
      if (spin % 64 == 63 && std::chrono::steady_clock::now() > until) break;
    }
    std::unique_lock<std::mutex> lock(mu);
    all_done.wait(lock, [&] { return done.load(std::memory_order_acquire) == chunks; });
  }
  static constexpr auto kSpin = std::chrono::microseconds(300);
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
};

// Helpers linger. A pool thread that has done its share of a job polls for the next one for a
// while before it goes back to the pool's queue, and joins it at once: on a VM, a helper put
// to sleep between two kernels took longer to wake than a 500 us kernel ran, so back-to-back
// calls after any pause ran on one thread (the chunks, above, let a late helper join; this
// keeps it from being late again at the next call). The newest job is published for it; a
// task scheduled on the pool (an inter-op plan's) ends the lingering, so that it does not
// wait behind the poll.
std::mutex g_newest_mu;
// Under g_newest_mu. Never destroyed, as the pool: a helper may still be lingering while the
// process runs its static destructors.
std::shared_ptr<Job>& newest() {
  static auto* job = new std::shared_ptr<Job>();
  return *job;
}
std::atomic<uint64_t> g_newest_count{0};   // jobs published so far
std::atomic<int> g_pool_tasks_waiting{0};  // schedule_on_pool's tasks not yet started
std::atomic<int64_t> g_lingering_joins{0};
std::atomic<int64_t> g_linger_us{std::chrono::microseconds(Job::kSpin).count()};

void publish(const std::shared_ptr<Job>& job) {
  {
    std::lock_guard<std::mutex> lock(g_newest_mu);
    newest() = job;
  }
  g_newest_count.fetch_add(1, std::memory_order_release);
}

// On a pool thread, after its job: joins the jobs published within the lingering time of the
// last one.
void linger(uint64_t seen) {
  auto last = std::chrono::steady_clock::now();  // the last job's end
  for (int polls = 0;; ++polls) {
    if (g_pool_tasks_waiting.load(std::memory_order_relaxed) > 0) return;
    if (const uint64_t count = g_newest_count.load(std::memory_order_acquire); count != seen) {
      seen = count;
      std::shared_ptr<Job> job;
      {
        std::lock_guard<std::mutex> lock(g_newest_mu);
        job = newest();
      }
      if (job && job->work() > 0) g_lingering_joins.fetch_add(1, std::memory_order_relaxed);
      last = std::chrono::steady_clock::now();
      continue;
    }
    Job::pause();
    if (polls % 64 == 63 && std::chrono::steady_clock::now() - last >
                                std::chrono::microseconds(g_linger_us.load(std::memory_order_relaxed)))
      return;
  }
}
}  // namespace

int64_t lingering_joins() { return g_lingering_joins.load(std::memory_order_relaxed); }
void set_helper_linger(std::chrono::microseconds t) { g_linger_us.store(t.count(), std::memory_order_relaxed); }

int configured_threads() { return std::max(1, g_threads.load(std::memory_order_relaxed)); }
int intra_op_threads() { return t_serial_kernels ? 1 : configured_threads(); }
SerialKernelsScope::SerialKernelsScope() : previous_(t_serial_kernels) { t_serial_kernels = true; }
SerialKernelsScope::~SerialKernelsScope() { t_serial_kernels = previous_; }

void schedule_on_pool(std::function<void()> fn) {
  g_pool_tasks_waiting.fetch_add(1, std::memory_order_relaxed);
  pool().Schedule([fn = std::move(fn)] {
    g_pool_tasks_waiting.fetch_sub(1, std::memory_order_relaxed);
    fn();
  });
}
int default_intra_op_threads() { return default_threads(); }
void set_intra_op_threads(int n) { g_threads.store(std::max(1, std::min(n, default_threads()))); }
namespace {
std::atomic<int> g_inter_op{0};
}
void set_inter_op_threads(int n) { g_inter_op.store(std::max(0, n), std::memory_order_relaxed); }
int inter_op_threads() { return g_inter_op.load(std::memory_order_relaxed); }

namespace {
std::atomic<TeamRunner> g_team{nullptr};

// A forked child has only the thread that forked. The parent's pool is left behind (its
// destructor would wait for threads that do not exist here) and a new one is made at first
// use; a team runner's library (libgomp) cannot start a team after fork, so kiln's pool serves.
// The lock is made anew: another of the parent's threads may have held it at the fork.
void after_fork_in_child() {
  g_pool.store(nullptr, std::memory_order_relaxed);
  new (&g_pool_mu) std::mutex;
  new (&g_newest_mu) std::mutex;
  g_team.store(nullptr, std::memory_order_relaxed);
}
[[maybe_unused]] const int g_fork_handler = pthread_atfork(nullptr, nullptr, &after_fork_in_child);
}  // namespace
void set_team_runner(TeamRunner runner) { g_team.store(runner, std::memory_order_release); }
TeamRunner team_runner() { return g_team.load(std::memory_order_acquire); }

// A few chunks per thread, not one: a helper whose wake-up comes late still finds work. On a
// VM whose other vCPU the host had let idle, a wake-up took longer than half of a 500 us
// kernel, so with one chunk per thread the caller had taken both before the helper ran, every
// call after a pause ran on one thread (a 1M-element chain 500-550 us a call for 60 calls
// after 0.3 s idle, against 220 us when the helper was awake), and the helper, asleep again
// by the next call, stayed late.
constexpr int64_t kChunksPerThread = 4;

void parallel_for_split(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  const int threads = intra_op_threads();
  auto job = std::make_shared<Job>();
  job->fn = &fn;
  job->n = n;
  job->chunks = std::min<int64_t>(int64_t{threads} * kChunksPerThread, n);
  job->limits = detail::active_limits();
  const int team_size = static_cast<int>(std::min<int64_t>(threads, job->chunks));
  if (const TeamRunner team = g_team.load(std::memory_order_acquire)) {
    team([](void* j) { static_cast<Job*>(j)->work(); }, job.get(), team_size);
    if (job->error) std::rethrow_exception(job->error);
    return;
  }
  const int helpers = team_size - 1;
  publish(job);
  const uint64_t published = g_newest_count.load(std::memory_order_relaxed);
  for (int i = 0; i < helpers; ++i)
    pool().Schedule([job, published] {
      // Only a helper that had work lingers: a task that comes late (a lingering helper took
      // its job, or the caller did) returns at once, so late tasks do not queue up lingering.
      if (job->work() > 0) linger(published);
    });
  job->work();
  job->wait();  // every chunk done; a helper that has not run yet will find none
  // Take the error out of the job: a helper may drop the job's last reference while this
  // thread is still handling the exception, and must not destroy it then.
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(job->mu);
    error = std::move(job->error);
    job->error = nullptr;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace kiln
