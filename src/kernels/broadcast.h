// Strided iteration for broadcasting elementwise kernels. Dims where every operand has the
// same broadcast pattern are collapsed so inner loops stay long.
#pragma once
#include <array>
#include <cstdint>

#include "kiln/detail/small_vec.h"

namespace kiln::kernels {

// Plans a walk over `out` for up to 3 operands whose dims broadcast to it (right-aligned).
template <int K>
struct BroadcastPlan {
  Dims dims;                    // collapsed output dims
  std::array<Dims, K> strides;  // per operand, 0 where broadcast

  BroadcastPlan(const Dims& out, const std::array<const Dims*, K>& in) {
    const size_t r = out.size();
    std::array<Dims, K> full;
    for (int k = 0; k < K; ++k) {
      const Dims& d = *in[k];
      full[k].resize(r, 0);
      int64_t s = 1;
      for (int i = static_cast<int>(r) - 1; i >= 0; --i) {
        const int j = i - static_cast<int>(r - d.size());
        const int64_t dim = j >= 0 ? d[j] : 1;
        full[k][i] = (dim == 1 && out[i] != 1) ? 0 : s;
        s *= (j >= 0 ? d[j] : 1);
      }
    }
    // Collapse i into i+1 when contiguous for every operand.
    for (size_t i = 0; i < r; ++i) {
      if (out[i] == 1) continue;  // size-1 dims carry nothing
      if (!dims.empty()) {
        bool merge = true;
        for (int k = 0; k < K; ++k) {
          const int64_t prev = strides[k].back();
          const int64_t cur = full[k][i];
          if (!((prev == 0 && cur == 0) || (cur != 0 && prev == cur * out[i]))) merge = false;
        }
        if (merge) {
          dims.back() *= out[i];
          for (int k = 0; k < K; ++k) strides[k].back() = full[k][i];
          continue;
        }
      }
      dims.push_back(out[i]);
      for (int k = 0; k < K; ++k) strides[k].push_back(full[k][i]);
    }
  }

  // Calls f(offsets, inner_count, inner_strides) for each run of the innermost dim.
  // An empty output has no runs: not even the first (a zero-sized dim outside the innermost
  // once let one run write past a zero-sized output).
  template <class F>
  void for_each_run(F&& f) const {
    for (const int64_t d : dims)
      if (d == 0) return;
    const size_t r = dims.size();
    if (r == 0) {
      std::array<int64_t, K> off{}, st{};
      f(off, int64_t{1}, st);
      return;
    }
    std::array<int64_t, K> inner{};
    for (int k = 0; k < K; ++k) inner[k] = strides[k][r - 1];
    const int64_t n = dims[r - 1];
    Dims idx(r, 0);
    std::array<int64_t, K> off{};
    while (true) {
      f(off, n, inner);
      int i = static_cast<int>(r) - 2;
      for (; i >= 0; --i) {
        ++idx[i];
        for (int k = 0; k < K; ++k) off[k] += strides[k][i];
        if (idx[i] < dims[i]) break;
        for (int k = 0; k < K; ++k) off[k] -= strides[k][i] * dims[i];
        idx[i] = 0;
      }
      if (i < 0) return;
    }
  }
};

}  // namespace kiln::kernels
