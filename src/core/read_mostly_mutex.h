// A reader-writer lock for maps read on every call and written rarely (the call cache): a
// reader takes it with one atomic add and no call into the C library. A writer announces
// itself first, so new readers wait and a stream of readers cannot starve it. Writers must
// hold it briefly (never across user code).
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>

namespace kiln {

class ReadMostlyMutex {
 public:
  void lock_shared() {
    for (;;) {
      if (state_.fetch_add(1, std::memory_order_acquire) < kWriter) return;  // no writer
      state_.fetch_sub(1, std::memory_order_relaxed);
      while (state_.load(std::memory_order_relaxed) >= kWriter) std::this_thread::yield();
    }
  }
  void unlock_shared() { state_.fetch_sub(1, std::memory_order_release); }
  void lock() {
    writers_.lock();
    state_.fetch_add(kWriter, std::memory_order_acquire);
    while (state_.load(std::memory_order_acquire) != kWriter) std::this_thread::yield();  // readers drain
  }
  void unlock() {
    state_.fetch_sub(kWriter, std::memory_order_release);
    writers_.unlock();
  }

 private:
  static constexpr int64_t kWriter = int64_t{1} << 40;  // readers count below it
  std::atomic<int64_t> state_{0};
  std::mutex writers_;
};

}  // namespace kiln
