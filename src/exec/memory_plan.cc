#include "exec/memory_plan.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace kiln::exec {

Frame::Frame(const std::vector<FrameEntry>& entries, size_t arena_bytes) {
  if (arena_bytes > 0) arena_ = buffer_allocate(arena_bytes);
  impls_ = std::make_unique<detail::TensorImpl[]>(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    detail::TensorImpl& t = impls_[i];
    t.dtype = entries[i].dtype;
    t.dims = entries[i].dims;
    t.num_elements = entries[i].num_elements;
    t.data = static_cast<char*>(arena_ ? arena_->data : nullptr) + entries[i].offset;
  }
}

Frame::~Frame() {
  if (arena_) buffer_release(arena_);
}

void MemoryPlan::plan(std::vector<FrameEntry> entries, const std::vector<int>& def_step,
                      const std::vector<int>& last_step_in, bool reuse) {
  std::vector<int> last_step = last_step_in;
  if (!reuse) {
    int end_step = 0;
    for (int s : last_step) end_step = std::max(end_step, s);
    for (int s : def_step) end_step = std::max(end_step, s);
    for (int& s : last_step) s = end_step;  // nothing dies before the end: no block is shared
  }
  entries_ = std::move(entries);
  // Walk the steps in order: a step's outputs are placed before its dead inputs are freed
  // (kernels read inputs while writing outputs). Free blocks: offset -> size, first fit.
  std::map<size_t, size_t> free_blocks;
  size_t end = 0;
  int max_step = 0;
  for (int s : last_step) max_step = std::max(max_step, s);
  for (int s : def_step) max_step = std::max(max_step, s);
  std::vector<std::vector<int>> defined_at(max_step + 1), dying_at(max_step + 1);
  for (size_t k = 0; k < entries_.size(); ++k) {
    defined_at[def_step[k]].push_back(static_cast<int>(k));
    dying_at[std::max(last_step[k], def_step[k])].push_back(static_cast<int>(k));
  }
  std::vector<size_t> sizes(entries_.size());
  for (int step = 0; step <= max_step; ++step) {
    for (int k : defined_at[step]) {
      const size_t bytes = static_cast<size_t>(entries_[k].num_elements) * dtype_size(entries_[k].dtype);
      const size_t size = std::max<size_t>(64, (bytes + 63) / 64 * 64);
      sizes[k] = size;
      auto fit = std::find_if(free_blocks.begin(), free_blocks.end(), [&](const auto& b) { return b.second >= size; });
      if (fit != free_blocks.end()) {
        entries_[k].offset = fit->first;
        const size_t rest = fit->second - size, at = fit->first + size;
        free_blocks.erase(fit);
        if (rest > 0) free_blocks[at] = rest;
      } else {
        entries_[k].offset = end;
        end += size;
      }
    }
    for (int k : dying_at[step]) {
      size_t off = entries_[k].offset, size = sizes[k];
      // Coalesce with neighbours.
      auto next = free_blocks.lower_bound(off);
      if (next != free_blocks.end() && off + size == next->first) {
        size += next->second;
        next = free_blocks.erase(next);
      }
      if (next != free_blocks.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second == off) {
          off = prev->first;
          size += prev->second;
          free_blocks.erase(prev);
        }
      }
      free_blocks[off] = size;
    }
  }
  arena_bytes_ = end;
  // Entries at one offset never live at the same time (a block is reused only once its
  // value is dead), so those that also share dtype and dims share one tensor header: a
  // 10,000-step chain needs two headers, not 10,000 (its frame stays in cache).
  std::map<std::tuple<size_t, DType, std::vector<int64_t>>, int> header_at;
  headers_.clear();
  header_of_.assign(entries_.size(), -1);
  for (size_t k = 0; k < entries_.size(); ++k) {
    const FrameEntry& e = entries_[k];
    auto [it, added] = header_at.try_emplace({e.offset, e.dtype, std::vector<int64_t>(e.dims.begin(), e.dims.end())},
                                             static_cast<int>(headers_.size()));
    if (added) headers_.push_back(e);
    header_of_[k] = it->second;
  }
}

std::unique_ptr<Frame> MemoryPlan::acquire() const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!pool_.empty()) {
      auto f = std::move(pool_.back());
      pool_.pop_back();
      return f;
    }
  }
  return std::make_unique<Frame>(headers_, arena_bytes_);
}

void MemoryPlan::release(std::unique_ptr<Frame> f) const {
  constexpr size_t kMaxPooled = 16;  // frames kept for concurrent callers
  std::lock_guard<std::mutex> lock(mu_);
  if (pool_.size() < kMaxPooled) pool_.push_back(std::move(f));
}

}  // namespace kiln::exec
