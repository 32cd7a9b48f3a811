// The state behind a kiln::Variable: a resource that variable ops read and write.
#pragma once
#include <mutex>
#include <string>

#include "core/resource.h"
#include "kiln/tensor.h"

namespace kiln::ops {

class VariableState : public Resource {
 public:
  VariableState(Tensor value, std::string name) : value_(std::move(value)), name_(std::move(name)) {
    dtype_ = value_.dtype();
    shape_ = value_.shape();
  }
  std::string resource_name() const override { return name_; }
  DType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  // Values are immutable tensors: a read is a snapshot that later assignments do not change.
  Tensor read() const {
    std::lock_guard<std::mutex> lock(mu_);
    return value_;
  }
  // Replaces the value; checks dtype and shape (TensorFlow's rule).
  void write(const Tensor& v, const char* op);
  // Read-modify-write under the lock, so concurrent assign_add calls never lose updates.
  template <class F> void update(F&& f) {
    std::lock_guard<std::mutex> lock(mu_);
    value_ = f(value_);
  }

 private:
  mutable std::mutex mu_;
  Tensor value_;
  DType dtype_;
  TensorShape shape_;
  std::string name_;
};

}  // namespace kiln::ops
