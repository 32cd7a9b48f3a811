// A vector that keeps up to N elements of any type inline and more on the heap: a graph
// node's output shapes (one output for almost every op), so making or copying a node
// does not allocate for them. kiln::SmallVec is the same for trivially copyable types.
#pragma once
#include <cstddef>
#include <initializer_list>
#include <new>
#include <utility>
#include <vector>

namespace kiln {

template <class T, size_t N>
class InlineVec {
 public:
  InlineVec() noexcept {}  // NOLINT: the slots stay raw memory until filled
  InlineVec(std::initializer_list<T> values) { append_or_clear(values.begin(), values.end()); }
  InlineVec(std::vector<T>&& v) {  // NOLINT: implicit, as a std::vector converts to it
    if (v.size() > N) {
      heap_ = std::move(v);
      on_heap_ = true;
    } else {
      for (T& x : v) emplace(std::move(x));
    }
  }
  InlineVec(const std::vector<T>& v) { append_or_clear(v.begin(), v.end()); }  // NOLINT
  InlineVec(const InlineVec& o) { append_or_clear(o.begin(), o.end()); }
  InlineVec(InlineVec&& o) noexcept { take(o); }
  InlineVec& operator=(const InlineVec& o) {
    if (this != &o) {
      clear();
      append(o.begin(), o.end());
    }
    return *this;
  }
  InlineVec& operator=(InlineVec&& o) noexcept {
    if (this != &o) {
      clear();
      take(o);
    }
    return *this;
  }
  ~InlineVec() { clear(); }

  size_t size() const { return on_heap_ ? heap_.size() : count_; }
  bool empty() const { return size() == 0; }
  T* data() { return on_heap_ ? heap_.data() : slots(); }
  const T* data() const { return on_heap_ ? heap_.data() : slots(); }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T* begin() { return data(); }
  T* end() { return data() + size(); }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size(); }
  void push_back(T v) {
    if (!on_heap_ && count_ < N) {
      emplace(std::move(v));
      return;
    }
    if (!on_heap_) spill();
    heap_.push_back(std::move(v));
  }
  void clear() noexcept {
    for (size_t k = count_; k > 0; --k) slots()[k - 1].~T();
    count_ = 0;
    heap_.clear();
    on_heap_ = false;
  }

 private:
  T* slots() { return std::launder(reinterpret_cast<T*>(storage_)); }
  const T* slots() const { return std::launder(reinterpret_cast<const T*>(storage_)); }
  void emplace(T&& v) {  // count_ < N, not on the heap
    new (slots() + count_) T(std::move(v));
    ++count_;
  }
  template <class It>
  void append(It b, It e) {
    for (; b != e; ++b) push_back(*b);
  }
  // For constructors, which are never destroyed when they throw: a copy that throws first
  // destroys the elements made.
  template <class It>
  void append_or_clear(It b, It e) {
    try {
      append(b, e);
    } catch (...) {
      clear();
      throw;
    }
  }
  // The inline elements move to the heap (before one more than N is added).
  void spill() {
    std::vector<T> h;
    h.reserve(2 * N + 1);
    for (size_t k = 0; k < count_; ++k) h.push_back(std::move(slots()[k]));
    clear();
    heap_ = std::move(h);
    on_heap_ = true;
  }
  void take(InlineVec& o) noexcept {
    if (o.on_heap_) {
      heap_ = std::move(o.heap_);
      on_heap_ = true;
    } else {
      for (size_t k = 0; k < o.count_; ++k) emplace(std::move(o.slots()[k]));
    }
    o.clear();
  }

  alignas(T) unsigned char storage_[N * sizeof(T)];
  size_t count_ = 0;  // elements in storage_ (0 while on the heap)
  std::vector<T> heap_;
  bool on_heap_ = false;
};

}  // namespace kiln
