// The state behind a kiln::Variable: a resource that variable ops read and write.
#pragma once
#include <cstring>
#include <mutex>
#include <string>

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
  // Read-modify-write of one or more variables, so concurrent updates never lose one: calls
  // f(TensorImpl&...) with writable values of `vars` (distinct variables), all locked at once
  // (std::scoped_lock: no lock-order deadlock with another update of the same set).
  // A value nobody else holds (no snapshot or alias is alive, and none can be taken while
  // the locks are held) is written in place; otherwise the variable first gets a copy, so
  // snapshots keep what they saw. The copy never shares memory with any other tensor.
  template <class F, class... V>
  static void update_in_place(F&& f, V&... vars) {
    std::scoped_lock lock(vars.mu_...);
    f(vars.writable()...);
  }

 private:
  detail::TensorImpl& writable() {
    detail::TensorImpl& o = *value_.impl();
    const bool unique = o.refs.load(std::memory_order_acquire) == 1 &&
                        (!o.buffer || o.buffer->refs.load(std::memory_order_acquire) == 1);
    if (unique) return o;
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
