#include "kiln/threading.h"

#include <atomic>

#include "core/parallel.h"

namespace kiln::config {
namespace {
std::atomic<int> g_requested{0}, g_inter_requested{0};
}

void set_intra_op_parallelism_threads(int n) {
  g_requested.store(n, std::memory_order_relaxed);
  set_intra_op_threads(n > 0 ? n : default_intra_op_threads());
}

int get_intra_op_parallelism_threads() { return g_requested.load(std::memory_order_relaxed); }

void set_inter_op_parallelism_threads(int n) {
  g_inter_requested.store(n, std::memory_order_relaxed);
  set_inter_op_threads(n > 0 ? n : 0);
}

int get_inter_op_parallelism_threads() { return g_inter_requested.load(std::memory_order_relaxed); }

}  // namespace kiln::config
