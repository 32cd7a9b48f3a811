// Copying a tensor's elements in another order (Transpose, Einsum's operands and product):
// a walk over the output's dims with the source's element stride for each, collapsed first so
// that the copy moves runs, not elements, wherever the order keeps memory adjacent.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

namespace kiln::ops {

// Dims of size 1 dropped and each dim merged into the next where the two are one run in the
// source: a walk that keeps the source's order is one dim of stride 1; a permutation that
// keeps the innermost dim ends in a dim of stride 1.
struct StridedWalk {
  std::vector<int64_t> sizes, strides;
  int64_t total = 1;
  bool contiguous() const { return total == 0 || sizes.empty() || (sizes.size() == 1 && strides[0] == 1); }
  bool unit_inner() const { return sizes.empty() || strides.back() == 1; }
  // A plain 2-D transpose of a [sizes[1], sizes[0]] source.
  bool is_matrix_transpose() const { return sizes.size() == 2 && strides[0] == 1 && strides[1] == sizes[0]; }
};

inline StridedWalk collapse_walk(const int64_t* sizes, const int64_t* strides, size_t rank) {
  StridedWalk w;
  for (size_t d = 0; d < rank; ++d) w.total *= sizes[d];
  for (size_t d = 0; d < rank; ++d) {
    if (sizes[d] == 1) continue;
    if (!w.sizes.empty() && w.strides.back() == strides[d] * sizes[d]) {
      w.sizes.back() *= sizes[d];
      w.strides.back() = strides[d];
      continue;
    }
    w.sizes.push_back(sizes[d]);
    w.strides.push_back(strides[d]);
  }
  return w;
}

// The walk's rows: runs of its innermost dim.
inline int64_t walk_rows(const StridedWalk& w) {
  return w.total == 0 || w.sizes.empty() ? 0 : w.total / w.sizes.back();
}

// Rows [first, end) of the walk (a part of strided_copy's output, which threads can share; not
// for a matrix transpose's blocks).
template <class T>
void strided_copy_rows(const T* src, const StridedWalk& w, T* dst, int64_t first, int64_t end) {
  if (first >= end) return;
  const size_t last = w.sizes.size() - 1;
  const int64_t inner = w.sizes[last], step = w.strides[last];
  std::vector<int64_t> idx(last, 0);
  int64_t off = 0;
  int64_t rest = first;
  for (size_t d = last; d-- > 0;) {  // row `first`'s index, innermost dim first
    idx[d] = rest % w.sizes[d];
    rest /= w.sizes[d];
    off += idx[d] * w.strides[d];
  }
  dst += first * inner;
  for (int64_t r = first; r < end; ++r, dst += inner) {
    if (step == 1) {
      std::copy_n(src + off, inner, dst);
    } else {
      for (int64_t j = 0; j < inner; ++j) dst[j] = src[off + j * step];
    }
    for (size_t d = last; d-- > 0;) {
      off += w.strides[d];
      if (++idx[d] < w.sizes[d]) break;
      off -= w.strides[d] * w.sizes[d];
      idx[d] = 0;
    }
  }
}

// dst[i] for i over the walk (row-major) = src at the sum of index * stride.
template <class T>
void strided_copy(const T* src, const StridedWalk& w, T* dst) {
  if (w.total == 0) return;
  if (w.sizes.empty()) {
    dst[0] = src[0];
    return;
  }
  if (w.is_matrix_transpose()) {  // in 32x32 blocks, so reads and writes both stay in cache
    constexpr int64_t kBlock = 32;
    const int64_t rows = w.sizes[1], cols = w.sizes[0];
    for (int64_t i0 = 0; i0 < rows; i0 += kBlock)
      for (int64_t j0 = 0; j0 < cols; j0 += kBlock)
        for (int64_t i = i0; i < std::min(rows, i0 + kBlock); ++i)
          for (int64_t j = j0; j < std::min(cols, j0 + kBlock); ++j) dst[j * rows + i] = src[i * cols + j];
    return;
  }
  strided_copy_rows(src, w, dst, 0, walk_rows(w));
}

}  // namespace kiln::ops
