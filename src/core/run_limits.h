// The limits in force on this thread (kiln/limits.h): what plans, loops, split kernels and
// the buffer allocator check. Nothing is in force unless a RunLimitsScope is alive, and
// then a check is a few loads; the clock is read on every eighth check.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <limits>

#include "core/buffer.h"
#include "core/tls.h"
#include "kiln/limits.h"

namespace kiln::detail {

// A memory budget's count. Buffers charged to it hold a reference, so it outlives the
// scopes and models that made it while their tensors live.
struct BudgetState {
  int64_t limit = 0;
  std::atomic<int64_t> used{0};
  std::atomic<int64_t> refs{1};
};
void budget_ref(BudgetState* b);
static_assert(kMaxBufferBudgets == ActiveLimits::kMaxBudgets, "a buffer holds every budget in force");
void budget_unref(BudgetState* b) noexcept;

// This thread's limits, or null. Worker threads that run a caller's work adopt its limits
// for the duration (LimitsAdoption). Inline: plans and the allocator read it per call.
KILN_TLS extern thread_local ActiveLimits* t_active_limits;
inline ActiveLimits* active_limits() { return t_active_limits; }
inline void set_active_limits(ActiveLimits* limits) { t_active_limits = limits; }

inline void check_limits() {
  if (ActiveLimits* l = active_limits()) l->check();
}

class LimitsAdoption {
 public:
  explicit LimitsAdoption(ActiveLimits* limits) : previous_(active_limits()) { set_active_limits(limits); }
  ~LimitsAdoption() { set_active_limits(previous_); }
  LimitsAdoption(const LimitsAdoption&) = delete;
  LimitsAdoption& operator=(const LimitsAdoption&) = delete;

 private:
  ActiveLimits* previous_;
};

// Interrupts (SIGINT) seen by a front end's handler: calls that watch interrupts stop when
// the count moves past the one they started with. Signal-safe to bump.
std::atomic<uint64_t>& interrupt_count();

// A buffer's charge: reserve_budgets takes `bytes` from every budget in force before the
// memory is allocated (ResourceExhaustedError, nothing taken, when one would be exceeded);
// attach_budgets then settles the charge at the buffer's capacity and records the budgets
// in it; credit_buffer gives its capacity back when it is released.
void reserve_budgets(const ActiveLimits& limits, int64_t bytes);
void unreserve_budgets(const ActiveLimits& limits, int64_t bytes) noexcept;
void attach_budgets(Buffer* b, const ActiveLimits& limits, int64_t reserved) noexcept;
void credit_buffer(Buffer* b) noexcept;

}  // namespace kiln::detail
