// The one "does this shape fit" rule: a shape fits a partial shape when the partial one's
// rank is unknown, or the ranks agree and every known dim of it (>= 0) is equal. Feeds
// against a plan's inputs, call arguments against a ConcreteFunction's specs and loop
// variables against their invariants all ask this. (TensorShape::is_compatible_with is
// TensorFlow's other, symmetric question.)
#pragma once
#include <cstddef>
#include <cstdint>

#include "kiln/shape.h"

namespace kiln::detail {

// A rank of -1 means unknown; `dims` is then ignored.
inline bool fits_within(const int64_t* dims, int rank, const int64_t* outer, int outer_rank) {
  if (outer_rank < 0) return true;
  if (rank != outer_rank) return false;
  for (int i = 0; i < rank; ++i)
    if (outer[i] >= 0 && dims[i] != outer[i]) return false;
  return true;
}

inline bool fits_within(const TensorShape& inner, const TensorShape& outer) {
  return fits_within(inner.dims().data(), inner.rank(), outer.dims().data(), outer.rank());
}

}  // namespace kiln::detail
