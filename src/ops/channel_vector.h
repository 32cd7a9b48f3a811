// The per-channel vector rule the fused convolution and elementwise kernels share, so the
// passes that build them and the kernels that run them agree on one definition.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kiln/detail/small_vec.h"

namespace kiln::ops {

// `v` is [C] or [1, ..., 1, C]: it broadcasts along the last dimension of an output of rank
// `out_rank` with `channels` = C channels without changing the output's shape.
inline bool is_channel_vector(const Dims& v, int64_t channels, size_t out_rank) {
  if (v.empty() || v.size() > out_rank || v.back() != channels) return false;
  for (size_t k = 0; k + 1 < v.size(); ++k)
    if (v[k] != 1) return false;
  return true;
}

// `v` has the output's dims `out` but a last dimension of 1 ([B, T, 1] against [B, T, C],
// C > 1): each element broadcasts over one row of the output (a layer norm's mean and scale).
// Unknown dimensions (-1) match their like: the kernel checks the sizes at run time.
inline bool is_row_vector(const Dims& v, const Dims& out) {
  if (out.empty() || v.size() != out.size() || v.back() != 1 || out.back() <= 1) return false;
  for (size_t k = 0; k + 1 < v.size(); ++k)
    if (v[k] != out[k]) return false;
  return true;
}

// Fills `total_bytes` of `dst` with copies of the `row_bytes` at `row`, the last one cut short:
// a vector repeated to a chunk's length, so a kernel reads it as one long operand (the fused
// elementwise kernel's per-channel vectors, a binary op's repeated rows).
inline void repeat_row(void* dst, const void* row, int64_t row_bytes, int64_t total_bytes) {
  auto* out = static_cast<unsigned char*>(dst);
  for (int64_t k = 0; k < total_bytes; k += row_bytes)
    std::memcpy(out + k, row, static_cast<size_t>(std::min(row_bytes, total_bytes - k)));
}

}  // namespace kiln::ops
