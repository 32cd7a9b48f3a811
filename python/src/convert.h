// Conversions shared by the binding's files: Python objects to tensors, dtype objects, and the
// hooks the pure-Python layer registers at import (kiln/_hooks.py).
#pragma once
#include <nanobind/nanobind.h>

#include "kiln/kiln.h"

namespace kiln::python {

namespace nb = nanobind;

// Objects the Python layer hands over once, at import.
struct Hooks {
  nb::object dtypes;          // tuple: kiln.DType object per kiln::DType value
  nb::object convert;         // convert_to_tensor(value, dtype_hint) -> Tensor
  nb::object binary_operand;  // binary_operand(value, like: Tensor, op_name, reflected) -> Tensor
  nb::object make_shape;      // TensorShape(dims or None)
  nb::object error_classes;   // dict: ErrorCode value -> exception class
};
Hooks& hooks();

// A kiln::DType from a kiln.DType object, a numpy dtype or a name; TypeError otherwise.
DType dtype_from(nb::handle obj);
nb::object dtype_object(DType d);

// The other operand of a binary operator, by TensorFlow's rules: a tensor as is, a Python
// number in `like`'s dtype when it converts exactly, anything else through the Python layer's
// binary_operand (which knows which operators convert leniently). `reflected`: the operand is
// on the left (`1.5 + x`), where TensorFlow always converts strictly.
Tensor operand(nb::handle obj, const Tensor& like, const char* op, bool reflected = false);
// Any value as a tensor (tf.convert_to_tensor without a dtype).
Tensor to_tensor(nb::handle obj);

}  // namespace kiln::python
