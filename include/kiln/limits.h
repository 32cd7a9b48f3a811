// kiln: limits on a call, for servers. A scope sets them for every call its thread makes
// (kiln::Function and ConcreteFunction calls, loaded signatures, eager ops): loops check
// them between iterations, plans between steps and split kernels between chunks, and
// every tensor buffer is charged to the memory budgets in force.
//
//   kiln::CancellationToken stop;                    // stop.cancel() from any thread
//   kiln::RunLimitsScope limits({.timeout = std::chrono::milliseconds(200),
//                                .cancellation = stop,
//                                .memory_limit_bytes = 64 << 20});
//   auto out = model.call("serving_default", {x});   // DeadlineExceededError,
//                                                     // CancelledError, ResourceExhaustedError
//
// A call stopped by a limit throws; kiln and the process are unharmed, and the call's
// tensors are freed. Scopes nest: the inner one adds its limits to the outer's.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

namespace kiln {

namespace detail {
struct BudgetState;
// The limits in force on a thread, as the executors read them (core/run_limits.h).
struct ActiveLimits {
  static constexpr int kMaxFlags = 4;
  static constexpr int kMaxBudgets = 2;  // a scope's own memory limit and a shared budget
  int64_t deadline_ns = INT64_MAX;       // steady clock
  const std::atomic<bool>* cancel_flags[kMaxFlags] = {};
  int num_cancel_flags = 0;
  BudgetState* budgets[kMaxBudgets] = {};
  int num_budgets = 0;
  bool watch_interrupts = false;  // stop on an interrupt (note_interrupt)
  uint64_t interrupts_at_start = 0;

  // Throws CancelledError or DeadlineExceededError when a limit is reached.
  void check() const;
};
}  // namespace detail

// A flag that cancels the calls it is given to. Copies share the flag; cancel() may be
// called from any thread, and stays in force.
class CancellationToken {
 public:
  CancellationToken();
  void cancel() const;
  bool cancelled() const;
  const std::atomic<bool>* flag() const { return flag_.get(); }

 private:
  std::shared_ptr<std::atomic<bool>> flag_;
};

// Bytes of tensor memory that calls made under it may hold at once (copies share the
// count): a served model's budget across all its concurrent calls. A tensor made under it
// counts until it is freed, even after the call returns.
class MemoryBudget {
 public:
  explicit MemoryBudget(int64_t limit_bytes);
  int64_t limit_bytes() const;
  int64_t used_bytes() const;
  detail::BudgetState* state() const { return state_.get(); }

 private:
  std::shared_ptr<detail::BudgetState> state_;
};

struct RunLimits {
  // From the scope's start; DeadlineExceededError past it.
  std::optional<std::chrono::steady_clock::duration> timeout = std::nullopt;
  std::optional<CancellationToken> cancellation = std::nullopt;  // CancelledError
  // Bytes of tensor memory allocated within the scope and alive at once (0: no limit);
  // ResourceExhaustedError past it.
  int64_t memory_limit_bytes = 0;
  // A budget shared with other scopes (a loaded model's), charged as well.
  std::optional<MemoryBudget> shared_memory = std::nullopt;
  // Stop with CancelledError when an interrupt is noted (note_interrupt) during the scope:
  // how Python's Ctrl-C stops a long graph.
  bool stop_on_interrupt = false;
};

// Counts an interrupt (SIGINT): async-signal-safe, for a front end's signal handler.
void note_interrupt() noexcept;

// Puts `limits` in force on this thread until it is destroyed.
class RunLimitsScope {
 public:
  explicit RunLimitsScope(const RunLimits& limits);
  ~RunLimitsScope();
  RunLimitsScope(const RunLimitsScope&) = delete;
  RunLimitsScope& operator=(const RunLimitsScope&) = delete;

 private:
  detail::ActiveLimits active_;  // inline: a scope per call allocates nothing without budgets
  detail::ActiveLimits* previous_;
  std::optional<MemoryBudget> own_budget_, shared_budget_;  // alive while in force
};

}  // namespace kiln
