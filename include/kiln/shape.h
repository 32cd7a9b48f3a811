// kiln: partial shapes, as TensorFlow's TensorShape.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "kiln/dtype.h"

namespace kiln {

class TensorShape {
 public:
  TensorShape() = default;  // scalar
  TensorShape(std::initializer_list<int64_t> dims) : dims_(dims) { validate(); }
  TensorShape(std::vector<int64_t> dims) : dims_(std::move(dims)) { validate(); }
  static TensorShape unknown();

  int rank() const { return unknown_rank_ ? -1 : static_cast<int>(dims_.size()); }
  const std::vector<int64_t>& dims() const { return dims_; }
  bool is_fully_defined() const;
  // Product of the dims; -1 if not fully defined; InvalidArgumentError if it overflows int64.
  int64_t num_elements() const;
  // "(2, None)", "(3,)", "()", "<unknown>".
  std::string str() const;
  // True if a concrete shape `other` fits this partial shape.
  bool is_compatible_with(const TensorShape& other) const;
  // The most specific shape both agree on: equal dims kept, others None, ranks differ: unknown.
  TensorShape most_specific_common(const TensorShape& other) const;

  bool operator==(const TensorShape& o) const { return unknown_rank_ == o.unknown_rank_ && dims_ == o.dims_; }
  bool operator!=(const TensorShape& o) const { return !(*this == o); }

 private:
  void validate() const;
  std::vector<int64_t> dims_;
  bool unknown_rank_ = false;
};

struct TensorSpec {
  TensorShape shape;
  DType dtype = DType::Float32;
  std::string name = "";
};

}  // namespace kiln
