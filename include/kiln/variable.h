// kiln::Variable: mutable state. Eagerly it holds a value; inside a traced function it is
// captured by reference (reads and writes are ops that run on every call, in program order).
#pragma once
#include <memory>
#include <string>

#include "kiln/ops.h"

namespace kiln {

struct Resource;
namespace detail {
struct VariableHandle;
}

class Variable {
 public:
  // Copies the value. Inside a traced function, allowed on the first trace only
  // (FailedPreconditionError later), and the initial value must not depend on the inputs.
  explicit Variable(Tensor initial_value, std::string name = "");
  // Another handle on the variable `handle` holds (what a tape's watched_variables returns).
  explicit Variable(std::shared_ptr<detail::VariableHandle> handle) : handle_(std::move(handle)) {}

  Tensor read() const;                        // a snapshot: later assignments do not change it
  operator Tensor() const { return read(); }  // use a Variable where a Tensor is expected

  void assign(const Tensor& value);
  void assign_add(const Tensor& delta);
  void assign_sub(const Tensor& delta);
  template <Number N>
  void assign(N v) {
    assign(detail::number_as(read_for_dtype(), v, "AssignVariableOp"));
  }
  template <Number N>
  void assign_add(N v) {
    assign_add(detail::number_as(read_for_dtype(), v, "AssignAddVariableOp"));
  }
  template <Number N>
  void assign_sub(N v) {
    assign_sub(detail::number_as(read_for_dtype(), v, "AssignSubVariableOp"));
  }

  DType dtype() const;
  TensorShape shape() const;
  std::string name() const;
  // Trainable (the default) variables are watched by a GradientTape when read; others only
  // through an explicit watch (TensorFlow's tf.Variable(trainable=False)).
  bool trainable() const;
  void set_trainable(bool trainable);
  const std::shared_ptr<detail::VariableHandle>& handle() const { return handle_; }
  // The variable's identity: equal for every handle on the same variable.
  const void* identity() const;
  // The resource its ops name: what a traced function reads and writes (a Python function
  // traced with one variable argument is rebound to another's).
  std::shared_ptr<Resource> resource() const;

 private:
  Tensor read_for_dtype() const;  // a concrete tensor of the variable's dtype (for numbers)
  std::shared_ptr<detail::VariableHandle> handle_;
};

// Raises InvalidArgumentError("assertion failed: " + message) when cond has a false element.
// A runtime op: inside a function it runs on every call.
void assert_that(const Tensor& cond, std::string message);

// Dropout as tf.nn.dropout: zeroes each element with probability `rate` and scales the rest
// by 1 / (1 - rate). Random on every call unless seeded.
Tensor dropout(const Tensor& x, double rate, std::optional<uint64_t> seed = {});

}  // namespace kiln
