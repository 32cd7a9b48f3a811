#include "core/run_limits.h"

#include <time.h>

#include <string>

#include "core/tls.h"
#include "kiln/errors.h"

namespace kiln::detail {
namespace {

KILN_TLS thread_local uint32_t t_checks = 0;  // the clock is read on every eighth check

int64_t steady_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

KILN_TLS thread_local ActiveLimits* t_active_limits = nullptr;

std::atomic<uint64_t>& interrupt_count() {
  static std::atomic<uint64_t> count{0};
  static_assert(std::atomic<uint64_t>::is_always_lock_free, "bumped from a signal handler");
  return count;
}

void ActiveLimits::check() const {
  for (int i = 0; i < num_cancel_flags; ++i)
    if (cancel_flags[i]->load(std::memory_order_relaxed)) throw CancelledError("The call was cancelled");
  if (watch_interrupts && interrupt_count().load(std::memory_order_relaxed) != interrupts_at_start)
    throw CancelledError("The call was interrupted (SIGINT)");
  if (deadline_ns != INT64_MAX && (t_checks++ & 7) == 0 && steady_now_ns() > deadline_ns)
    throw DeadlineExceededError("The call passed its deadline");
}

void budget_ref(BudgetState* b) { b->refs.fetch_add(1, std::memory_order_relaxed); }
void budget_unref(BudgetState* b) noexcept {
  if (b->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete b;
}

void reserve_budgets(const ActiveLimits& limits, int64_t bytes) {
  for (int i = 0; i < limits.num_budgets; ++i) {
    BudgetState* budget = limits.budgets[i];
    const int64_t used = budget->used.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    if (used > budget->limit) {
      budget->used.fetch_sub(bytes, std::memory_order_relaxed);
      for (int j = 0; j < i; ++j) limits.budgets[j]->used.fetch_sub(bytes, std::memory_order_relaxed);
      throw ResourceExhaustedError("OOM when allocating a buffer of " + std::to_string(bytes) +
                                   " bytes: the memory budget of " + std::to_string(budget->limit) + " bytes has " +
                                   std::to_string(budget->limit - (used - bytes)) + " left");
    }
  }
}

void unreserve_budgets(const ActiveLimits& limits, int64_t bytes) noexcept {
  for (int i = 0; i < limits.num_budgets; ++i) limits.budgets[i]->used.fetch_sub(bytes, std::memory_order_relaxed);
}

void attach_budgets(Buffer* b, const ActiveLimits& limits, int64_t reserved) noexcept {
  // The pool rounds requests up to a size class: the charge is what the buffer holds.
  const int64_t extra = static_cast<int64_t>(b->capacity) - reserved;
  for (int i = 0; i < limits.num_budgets; ++i) {
    BudgetState* budget = limits.budgets[i];
    budget->used.fetch_add(extra, std::memory_order_relaxed);
    budget_ref(budget);
    b->budgets[i] = budget;
  }
}

void credit_buffer(Buffer* b) noexcept {
  for (BudgetState*& budget : b->budgets) {
    if (!budget) break;
    budget->used.fetch_sub(static_cast<int64_t>(b->capacity), std::memory_order_relaxed);
    budget_unref(budget);
    budget = nullptr;
  }
}

}  // namespace kiln::detail

namespace kiln {
void note_interrupt() noexcept { detail::interrupt_count().fetch_add(1, std::memory_order_relaxed); }
}  // namespace kiln
