// Bounds on what the loader accepts from a file, so a hostile file cannot ask for a huge
// allocation, a deep recursion or a long loop before it is rejected.
#pragma once
#include <cstddef>
#include <cstdint>

namespace kiln::io {

inline constexpr size_t kMaxRank = 32;
inline constexpr uint64_t kMaxElements = uint64_t{1} << 32;  // per tensor
inline constexpr size_t kMaxFileBytes = size_t{1} << 34;     // any one file
// A protobuf message cannot exceed 2 GiB (its parser's own limit), so a larger
// saved_model.pb is refused by its size, before a byte is read.
inline constexpr size_t kMaxProtoBytes = (size_t{1} << 31) - 1;
// A checkpoint index key is a tensor's name (TensorFlow's are a few hundred bytes); keys
// share prefixes in the file, so the keys a small index spells out must be bounded apart
// from its size.
inline constexpr size_t kMaxTableKeyBytes = size_t{1} << 16;
inline constexpr size_t kMaxTableKeyTotalBytes = size_t{1} << 28;
inline constexpr int kMaxFunctionNesting = 32;               // control flow inside control flow
inline constexpr int64_t kMaxFilledConstElements = 1 << 24;  // a Const filled from one value

}  // namespace kiln::io
