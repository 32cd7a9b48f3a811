#include "kiln/shape.h"

#include <string>

#include "kiln/errors.h"

namespace kiln {

void TensorShape::validate() const {
  for (int64_t d : dims_)
    if (d < -1) throw InvalidArgumentError("Dimension " + std::to_string(d) + " must be >= -1");
}

TensorShape TensorShape::unknown() {
  TensorShape s;
  s.unknown_rank_ = true;
  return s;
}

TensorShape TensorShape::unknown_dims(int rank) {
  if (rank < 0) return unknown();
  TensorShape s;
  s.dims_.resize(static_cast<size_t>(rank), -1);
  return s;
}

bool TensorShape::is_fully_defined() const {
  if (unknown_rank_) return false;
  for (int64_t d : dims_)
    if (d < 0) return false;
  return true;
}

int64_t TensorShape::num_elements() const {
  if (!is_fully_defined()) return -1;
  int64_t n = 1;
  for (int64_t d : dims_)
    if (__builtin_mul_overflow(n, d, &n))
      throw InvalidArgumentError("The number of elements of shape " + str() + " overflows int64");
  return n;
}

std::string TensorShape::str() const {
  if (unknown_rank_) return "<unknown>";
  std::string s = "(";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ", ";
    s += dims_[i] < 0 ? "None" : std::to_string(dims_[i]);
  }
  if (dims_.size() == 1) s += ",";
  return s + ")";
}

bool TensorShape::is_compatible_with(const TensorShape& other) const {
  if (unknown_rank_ || other.unknown_rank_) return true;
  if (dims_.size() != other.dims_.size()) return false;
  for (size_t i = 0; i < dims_.size(); ++i)
    if (dims_[i] >= 0 && other.dims_[i] >= 0 && dims_[i] != other.dims_[i]) return false;
  return true;
}

TensorShape TensorShape::most_specific_common(const TensorShape& other) const {
  if (unknown_rank_ || other.unknown_rank_ || dims_.size() != other.dims_.size()) return unknown();
  TensorShape common = *this;
  for (size_t i = 0; i < dims_.size(); ++i)
    if (dims_[i] != other.dims_[i]) common.dims_[i] = -1;
  return common;
}

}  // namespace kiln
