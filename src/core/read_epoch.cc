#include "core/read_epoch.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "core/tls.h"

namespace kiln::detail {
namespace {

// The epoch a writer stamps with; readers record it on entry. 0 means "not reading".
std::atomic<uint64_t> g_epoch{1};

// Whether writers fence for readers (membarrier registered), decided before any reader
// enters: a reader reads it after its own registration, which runs the decision once.
std::atomic<bool> g_asymmetric{false};
std::once_flag g_decided;
void decide_fencing() {
  const long supported = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0);
  if (supported < 0 || !(supported & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED)) return;
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) != 0) return;
  g_asymmetric.store(true, std::memory_order_relaxed);
}

// One per thread that ever read; on its own cache line so readers do not share one.
struct alignas(64) Reader {
  std::atomic<uint64_t> entered{0};
  int depth = 0;  // nesting, touched by the owning thread only
};

struct Registry {
  std::mutex mu;
  std::vector<Reader*> readers;
};
Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: threads may exit after static teardown
  return *r;
}

// Registers on a thread's first read section; unregisters when the thread exits.
struct LocalReader {
  Reader* reader = new Reader;
  LocalReader() {
    std::call_once(g_decided, decide_fencing);
    std::lock_guard lock(registry().mu);
    registry().readers.push_back(reader);
  }
  ~LocalReader() {
    {
      std::lock_guard lock(registry().mu);
      auto& v = registry().readers;
      v.erase(std::find(v.begin(), v.end(), reader));
    }
    delete reader;
  }
};

Reader& local_reader() {
  KILN_TLS thread_local LocalReader local;
  return *local.reader;
}

}  // namespace

ReadSection::ReadSection() {
  Reader& r = local_reader();
  if (r.depth++ == 0) {
    // The store must be ordered before the section's loads (a writer that does not see it
    // published its change first, so this reader sees the new structure): by the writer's
    // membarrier, or else by an exchange. The acquire load makes a writer's unlink visible
    // once its stamp is.
    const uint64_t epoch = g_epoch.load(std::memory_order_acquire);
    if (g_asymmetric.load(std::memory_order_relaxed)) {
      r.entered.store(epoch, std::memory_order_relaxed);
      std::atomic_signal_fence(std::memory_order_seq_cst);  // the compiler keeps the order
    } else {
      r.entered.exchange(epoch, std::memory_order_seq_cst);
    }
  }
}

ReadSection::~ReadSection() {
  Reader& r = local_reader();
  if (--r.depth == 0) r.entered.store(0, std::memory_order_release);
}

uint64_t retire_stamp() { return g_epoch.fetch_add(1, std::memory_order_seq_cst); }

uint64_t oldest_reader_epoch() {
  // Without membarrier, the readers' exchange, their load of what they read, the writer's
  // unlinking exchange and these loads are all seq_cst: one total order, so a writer that
  // misses a reader's entry has been seen by it. (No standalone fence: TSan cannot model one.)
  if (g_asymmetric.load(std::memory_order_relaxed)) syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0);
  std::lock_guard lock(registry().mu);
  // A reader that entered at an epoch after a stamp read the result of the store it follows.
  uint64_t oldest = UINT64_MAX;
  for (const Reader* r : registry().readers) {
    const uint64_t e = r->entered.load(std::memory_order_seq_cst);
    if (e != 0) oldest = std::min(oldest, e);
  }
  return oldest;
}

}  // namespace kiln::detail
