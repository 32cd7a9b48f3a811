// A vector of trivially copyable values with inline storage for the common small case,
// so shapes and attr lists of eager ops do not touch the heap. Public because TensorShape
// keeps its dims in one (kiln::Dims); it converts to std::vector for code that wants one.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <type_traits>
#include <vector>

namespace kiln {

template <class T, size_t N>
class SmallVec {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  using value_type = T;
  SmallVec() = default;
  explicit SmallVec(size_t n, T v = T()) { resize(n, v); }
  SmallVec(std::initializer_list<T> il) { assign(il.begin(), il.end()); }
  template <class It>
  requires(!std::is_integral_v<It>) SmallVec(It b, It e) { assign(b, e); }
  SmallVec(const std::vector<T>& v) { assign(v.begin(), v.end()); }
  SmallVec(const SmallVec& o) { assign(o.begin(), o.end()); }
  SmallVec(SmallVec&& o) noexcept { take(o); }
  SmallVec& operator=(SmallVec&& o) noexcept {
    if (this != &o) take(o);
    return *this;
  }
  SmallVec& operator=(const SmallVec& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }

  template <class It>
  void assign(It b, It e) {
    size_ = 0;
    reserve(static_cast<size_t>(std::distance(b, e)));
    for (; b != e; ++b) data()[size_++] = static_cast<T>(*b);
  }
  void reserve(size_t n) {
    if (n <= cap_) return;
    auto h = std::make_unique<T[]>(n);
    if (size_) std::memcpy(h.get(), data(), size_ * sizeof(T));
    heap_ = std::move(h);
    cap_ = n;
  }
  void resize(size_t n, T v = T()) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data()[i] = v;
    size_ = n;
  }
  void push_back(T v) {
    if (size_ == cap_) reserve(cap_ * 2);
    data()[size_++] = v;
  }
  void insert_at(size_t pos, T v) {
    push_back(v);
    for (size_t i = size_ - 1; i > pos; --i) data()[i] = data()[i - 1];
    data()[pos] = v;
  }
  void erase_at(size_t pos) {
    for (size_t i = pos; i + 1 < size_; ++i) data()[i] = data()[i + 1];
    --size_;
  }
  void clear() { size_ = 0; }

  T* data() { return heap_ ? heap_.get() : inline_; }
  const T* data() const { return heap_ ? heap_.get() : inline_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }
  operator std::vector<T>() const { return to_vector(); }  // NOLINT: implicit on purpose

  bool operator==(const SmallVec& o) const { return size_ == o.size_ && std::equal(begin(), end(), o.begin()); }
  bool operator!=(const SmallVec& o) const { return !(*this == o); }

 private:
  // Moves o's elements here, stealing its heap block if it has one; o is left empty.
  void take(SmallVec& o) noexcept {
    if (o.heap_) {
      heap_ = std::move(o.heap_);
      cap_ = o.cap_;
    } else {
      heap_.reset();
      cap_ = N;
      std::memcpy(inline_, o.inline_, o.size_ * sizeof(T));
    }
    size_ = o.size_;
    o.size_ = 0;
    o.cap_ = N;
  }

  T inline_[N];  // only the first size_ elements are ever read
  std::unique_ptr<T[]> heap_;
  size_t size_ = 0;
  size_t cap_ = N;
};

using Dims = SmallVec<int64_t, 6>;

}  // namespace kiln
