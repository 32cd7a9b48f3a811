// The static memory plan. Intermediates with static shapes that only pure kernels read live
// in a per-call Frame: one arena, offsets assigned at compile time by liveness (a block is
// reused once its value is dead), with the tensor headers built once. A steady-state call
// takes a Frame from the plan's pool, so its intermediates cost no allocation and no
// reference counting. Results, feeds, constants and anything a stateful or control-flow op
// receives stay ordinary refcounted tensors (they may outlive the call).
#pragma once
#include <memory>
#include <mutex>
#include <vector>

#include "core/tensor_impl.h"

namespace kiln::exec {

struct FrameEntry {
  DType dtype;
  Dims dims;
  int64_t num_elements;
  size_t offset;  // into the arena
};

class Frame {
 public:
  explicit Frame(const std::vector<FrameEntry>& entries, size_t arena_bytes);
  ~Frame();
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;
  detail::TensorImpl* impl(int i) { return &impls_[i]; }

 private:
  Buffer* arena_ = nullptr;
  std::unique_ptr<detail::TensorImpl[]> impls_;
};

class MemoryPlan {
 public:
  // Assigns arena offsets. `def_step[k]` and `last_step[k]` bound entry k's lifetime.
  // With reuse off (steps may run concurrently) every entry gets a block of its own.
  void plan(std::vector<FrameEntry> entries, const std::vector<int>& def_step, const std::vector<int>& last_step,
            bool reuse = true);
  bool empty() const { return entries_.empty(); }
  // The frame's tensor header that entry k uses (Frame::impl); entries may share one.
  int header_of(int k) const { return header_of_[k]; }
  size_t arena_bytes() const { return arena_bytes_; }
  size_t num_headers() const { return headers_.size(); }

  // A frame for one call (from the pool when one is free); give it back with release().
  std::unique_ptr<Frame> acquire() const;
  void release(std::unique_ptr<Frame> f) const;

 private:
  std::vector<FrameEntry> entries_;
  std::vector<FrameEntry> headers_;  // one per distinct (offset, dtype, dims)
  std::vector<int> header_of_;       // entry -> header
  size_t arena_bytes_ = 0;
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<Frame>> pool_;
};

}  // namespace kiln::exec
