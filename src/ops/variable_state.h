// The state behind a kiln::Variable: a resource that variable ops read and write.
#pragma once
#include <cstring>
#include <mutex>
#include <string>

#include "core/object_value.h"
#include "core/resource.h"
#include "core/tensor_impl.h"
#include "kiln/tensor.h"

namespace kiln::ops {

class VariableState : public Resource {
 public:
  VariableState(Tensor value, std::string name) : value_(std::move(value)), name_(std::move(name)) {
    dtype_ = value_.dtype();
    shape_ = value_.shape();
  }
  // A variable without a value yet: one created inside a traced function from the function's
  // inputs, which its first call initializes (kiln::Variable). Until then it cannot be read.
  VariableState(DType dtype, TensorShape shape, std::string name)
      : dtype_(dtype), shape_(std::move(shape)), name_(std::move(name)) {}
  std::string resource_name() const override { return name_; }
  DType dtype() const override { return dtype_; }
  const TensorShape& shape() const override { return shape_; }
  Tensor snapshot() const override { return read(); }
  // Values are immutable tensors: a read is a snapshot that later assignments do not change.
  Tensor read() const {
    std::lock_guard<std::mutex> lock(mu_);
    if (!value_.defined()) throw_uninitialized();
    return value_;
  }
  bool initialized() const {
    std::lock_guard<std::mutex> lock(mu_);
    return value_.defined();
  }
  // Replaces the value; checks dtype and shape (TensorFlow's rule).
  void write(const Tensor& v, const char* op);
  // Read-modify-write of one or more variables, so concurrent updates never lose one: calls
  // f(TensorImpl&...) with writable values of `vars` (distinct variables), all locked at once
  // (std::scoped_lock: no lock-order deadlock with another update of the same set).
  // A value nobody else holds (no snapshot or alias is alive, and none can be taken while
  // the locks are held) is written in place; otherwise the variable first gets a copy, so
  // snapshots keep what they saw. The copy never shares memory with any other tensor.
  template <class F, class... V>
  static void update_in_place(F&& f, V&... vars) {
    std::scoped_lock lock(vars.mu_...);
    (vars.check_initialized(), ...);
    f(vars.writable()...);
  }

 private:
  [[noreturn]] void throw_uninitialized() const {
    throw FailedPreconditionError("Could not find variable " + name_ +
                                  ". This could mean that the variable has been deleted or is not initialized yet "
                                  "(a variable created inside a kiln::function from its inputs is initialized by "
                                  "the function's first call).");
  }
  void check_initialized() const {  // mu_ held
    if (!value_.defined()) throw_uninitialized();
  }
  detail::TensorImpl& writable() {
    detail::TensorImpl& o = *value_.impl();
    if (detail::exclusively_owned(o)) return o;
    if (detail::holds_objects(o.dtype)) {  // a copy of the pointers, each retained
      value_ = Tensor(detail::make_alias(&o, o.dims));
      return *value_.impl();
    }
    detail::TensorImpl* copy = detail::make_concrete(o.dtype, o.dims);
    std::memcpy(copy->data, o.data, o.nbytes());
    value_ = Tensor(copy);
    return *copy;
  }

  mutable std::mutex mu_;
  Tensor value_;
  DType dtype_;
  TensorShape shape_;
  std::string name_;
};

}  // namespace kiln::ops
