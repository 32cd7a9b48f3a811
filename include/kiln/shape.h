// kiln: partial shapes, as TensorFlow's TensorShape. The one shape type: the public API,
// shape inference, graph nodes, loop invariants and call signatures all use it.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "kiln/detail/small_vec.h"
#include "kiln/dtype.h"

namespace kiln {

class TensorShape {
 public:
  TensorShape() = default;  // scalar
  TensorShape(std::initializer_list<int64_t> dims) : dims_(dims) { validate(); }
  TensorShape(const std::vector<int64_t>& dims) : dims_(dims) { validate(); }
  explicit TensorShape(Dims dims) : dims_(std::move(dims)) { validate(); }
  static TensorShape unknown();               // unknown rank
  static TensorShape unknown_dims(int rank);  // known rank, every dim unknown

  int rank() const { return unknown_rank_ ? -1 : static_cast<int>(dims_.size()); }
  bool unknown_rank() const { return unknown_rank_; }
  // -1 for an unknown dim; empty when the rank is unknown. Converts to std::vector.
  const Dims& dims() const { return dims_; }
  int64_t dim(int i) const { return dims_[static_cast<size_t>(i)]; }
  bool is_fully_defined() const;
  // Product of the dims; -1 if not fully defined; InvalidArgumentError if it overflows int64.
  int64_t num_elements() const;
  // "(2, None)", "(3,)", "()", "<unknown>".
  std::string str() const;
  // True if the two may describe the same shape (TensorFlow's symmetric question).
  bool is_compatible_with(const TensorShape& other) const;
  // The most specific shape both agree on: equal dims kept, others None, ranks differ: unknown.
  TensorShape most_specific_common(const TensorShape& other) const;

  bool operator==(const TensorShape& o) const { return unknown_rank_ == o.unknown_rank_ && dims_ == o.dims_; }
  bool operator!=(const TensorShape& o) const { return !(*this == o); }

 private:
  void validate() const;
  Dims dims_;
  bool unknown_rank_ = false;
};

struct TensorSpec {
  TensorShape shape;
  DType dtype = DType::Float32;
  std::string name = "";
};

}  // namespace kiln
