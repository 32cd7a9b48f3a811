#include "trace/function_config.h"

#include <atomic>
#include <mutex>

namespace kiln::detail {
namespace {
std::atomic<bool> g_run_eagerly{false};
std::mutex g_optimizer_mu;
OptimizerOptions g_optimizer_options;
}  // namespace

void set_functions_run_eagerly(bool enabled) { g_run_eagerly.store(enabled); }
bool functions_run_eagerly() { return g_run_eagerly.load(std::memory_order_relaxed); }

void set_default_optimizer_options(const OptimizerOptions& options) {
  std::lock_guard<std::mutex> lock(g_optimizer_mu);
  g_optimizer_options = options;
}
OptimizerOptions default_optimizer_options() {
  std::lock_guard<std::mutex> lock(g_optimizer_mu);
  return g_optimizer_options;
}

}  // namespace kiln::detail
