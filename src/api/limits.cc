// kiln/limits.h: cancellation tokens, memory budgets and the scope that puts them in force
// (core/run_limits.h holds what the executors check).
#include "kiln/limits.h"

#include <algorithm>

#include "core/run_limits.h"
#include "kiln/errors.h"

namespace kiln {

CancellationToken::CancellationToken() : flag_(std::make_shared<std::atomic<bool>>(false)) {}
void CancellationToken::cancel() const { flag_->store(true, std::memory_order_relaxed); }
bool CancellationToken::cancelled() const { return flag_->load(std::memory_order_relaxed); }

MemoryBudget::MemoryBudget(int64_t limit_bytes) {
  if (limit_bytes <= 0)
    throw InvalidArgumentError("a memory budget must be positive, got " + std::to_string(limit_bytes));
  auto* state = new detail::BudgetState();
  state->limit = limit_bytes;
  state_ = std::shared_ptr<detail::BudgetState>(state, [](detail::BudgetState* s) { detail::budget_unref(s); });
}
int64_t MemoryBudget::limit_bytes() const { return state_->limit; }
int64_t MemoryBudget::used_bytes() const { return state_->used.load(std::memory_order_relaxed); }

RunLimitsScope::RunLimitsScope(const RunLimits& limits) : previous_(detail::active_limits()) {
  detail::ActiveLimits& a = active_;
  if (previous_) a = *previous_;  // nested: the outer limits stay in force
  if (limits.timeout) {
    const auto deadline = std::chrono::steady_clock::now() + *limits.timeout;
    const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count();
    a.deadline_ns = std::min(a.deadline_ns, ns);
  }
  if (limits.cancellation) {
    if (a.num_cancel_flags == detail::ActiveLimits::kMaxFlags)
      throw InvalidArgumentError("at most " + std::to_string(detail::ActiveLimits::kMaxFlags) +
                                 " cancellation tokens can be in force at once");
    a.cancel_flags[a.num_cancel_flags++] = limits.cancellation->flag();
  }
  auto add_budget = [&](const MemoryBudget& b) {
    if (a.num_budgets == detail::ActiveLimits::kMaxBudgets)
      throw InvalidArgumentError("at most " + std::to_string(detail::ActiveLimits::kMaxBudgets) +
                                 " memory budgets can be in force at once");
    a.budgets[a.num_budgets++] = b.state();
  };
  if (limits.memory_limit_bytes > 0) {
    own_budget_.emplace(limits.memory_limit_bytes);
    add_budget(*own_budget_);
  }
  if (limits.shared_memory) {
    shared_budget_ = limits.shared_memory;
    add_budget(*shared_budget_);
  }
  if (limits.stop_on_interrupt && !a.watch_interrupts) {
    a.watch_interrupts = true;
    a.interrupts_at_start = detail::interrupt_count().load(std::memory_order_relaxed);
  }
  detail::set_active_limits(&active_);
}

RunLimitsScope::~RunLimitsScope() { detail::set_active_limits(previous_); }

}  // namespace kiln
