// The per-channel vector rule the fused convolution and elementwise kernels share, so the
// passes that build them and the kernels that run them agree on one definition.
#pragma once
#include <cstddef>
#include <cstdint>

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

}  // namespace kiln::ops
