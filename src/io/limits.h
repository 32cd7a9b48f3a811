// Bounds on what the loader accepts from a file, so a hostile file cannot ask for a huge
// allocation, a deep recursion or a long loop before it is rejected.
#pragma once
#include <cstddef>
#include <cstdint>

namespace kiln::io {

inline constexpr size_t kMaxRank = 32;
inline constexpr uint64_t kMaxElements = uint64_t{1} << 32;  // per tensor
inline constexpr size_t kMaxFileBytes = size_t{1} << 34;     // any one file
inline constexpr int kMaxFunctionNesting = 32;               // control flow inside control flow
inline constexpr int64_t kMaxFilledConstElements = 1 << 24;  // a Const filled from one value

}  // namespace kiln::io
