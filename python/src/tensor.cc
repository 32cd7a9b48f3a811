// kiln.Tensor: the C++ handle, its numpy/DLPack exchange (no copies) and its operators.
// The operators are here, not in Python, because `a + b` on scalars is dominated by call
// overhead: one C++ call from Python, no Python frame.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <vector>

#include "convert.h"

namespace kiln::python {
namespace {

using Array = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

nb::dlpack::dtype dlpack_dtype(DType d) {
  switch (d) {
    case DType::Bool:
      return nb::dtype<bool>();
    case DType::Int32:
      return nb::dtype<int32_t>();
    case DType::Int64:
      return nb::dtype<int64_t>();
    case DType::Float32:
      return nb::dtype<float>();
    case DType::Float64:
      return nb::dtype<double>();
    case DType::UInt8:
      return nb::dtype<uint8_t>();
    case DType::Int8:
      return nb::dtype<int8_t>();
    case DType::Int16:
      return nb::dtype<int16_t>();
    case DType::UInt16:
      return nb::dtype<uint16_t>();
    case DType::UInt32:
      return nb::dtype<uint32_t>();
    case DType::UInt64:
      return nb::dtype<uint64_t>();
    case DType::Float16:
      return {static_cast<uint8_t>(nb::dlpack::dtype_code::Float), 16, 1};
    case DType::BFloat16:
      return {static_cast<uint8_t>(nb::dlpack::dtype_code::Bfloat), 16, 1};
    case DType::Complex64:
      return {static_cast<uint8_t>(nb::dlpack::dtype_code::Complex), 64, 1};
    case DType::Complex128:
      return {static_cast<uint8_t>(nb::dlpack::dtype_code::Complex), 128, 1};
    case DType::Variant:
    case DType::String:
      break;
  }
  throw InvalidArgumentError("Cannot convert a Tensor of dtype " + std::string(dtype_name(d)) + " to a NumPy array.");
}

DType dtype_of_array(const Array& a) {
  const nb::dlpack::dtype t = a.dtype();
  using Code = nb::dlpack::dtype_code;
  if (t.lanes == 1) {
    if (t.code == static_cast<uint8_t>(Code::Float) && t.bits == 32) return DType::Float32;
    if (t.code == static_cast<uint8_t>(Code::Float) && t.bits == 64) return DType::Float64;
    if (t.code == static_cast<uint8_t>(Code::Float) && t.bits == 16) return DType::Float16;
    if (t.code == static_cast<uint8_t>(Code::Bfloat) && t.bits == 16) return DType::BFloat16;
    if (t.code == static_cast<uint8_t>(Code::Int) && t.bits == 32) return DType::Int32;
    if (t.code == static_cast<uint8_t>(Code::Int) && t.bits == 64) return DType::Int64;
    if (t.code == static_cast<uint8_t>(Code::Int) && t.bits == 8) return DType::Int8;
    if (t.code == static_cast<uint8_t>(Code::Int) && t.bits == 16) return DType::Int16;
    if (t.code == static_cast<uint8_t>(Code::UInt) && t.bits == 8) return DType::UInt8;
    if (t.code == static_cast<uint8_t>(Code::UInt) && t.bits == 16) return DType::UInt16;
    if (t.code == static_cast<uint8_t>(Code::UInt) && t.bits == 32) return DType::UInt32;
    if (t.code == static_cast<uint8_t>(Code::UInt) && t.bits == 64) return DType::UInt64;
    if (t.code == static_cast<uint8_t>(Code::Bool) && t.bits == 8) return DType::Bool;
    if (t.code == static_cast<uint8_t>(Code::Complex) && t.bits == 64) return DType::Complex64;
    if (t.code == static_cast<uint8_t>(Code::Complex) && t.bits == 128) return DType::Complex128;
  }
  throw nb::type_error(
      ("kiln has no tensor type for arrays of this element type (DLPack code " + std::to_string(t.code) + ", " +
       std::to_string(t.bits) +
       " bits); kiln has bool, the signed and unsigned integers, float16, bfloat16, float32, float64, complex64 "
       "and complex128")
          .c_str());
}

// The array object stays referenced until kiln drops the last tensor over its memory; that
// may happen on a kiln worker thread, which must take the GIL to let it go.
void release_array(void* context) noexcept {
  auto* array = static_cast<Array*>(context);
  if (!Py_IsInitialized()) return;  // the interpreter is gone: nothing can be released safely
  if (PyGILState_Check()) {
    delete array;
    return;
  }
  PyGILState_STATE state = PyGILState_Ensure();
  delete array;
  PyGILState_Release(state);
}

// `bfloat16_bits`: the array is ml_dtypes' bfloat16 seen as uint16 (numpy exports no bfloat16).
Tensor from_array(const Array& a, bool bfloat16_bits) {
  DType dtype = dtype_of_array(a);
  if (bfloat16_bits) {
    if (dtype != DType::UInt16) throw nb::type_error("bfloat16 bits must come as a uint16 array");
    dtype = DType::BFloat16;
  }
  std::vector<int64_t> shape(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i) shape[i] = static_cast<int64_t>(a.shape(i));
  return adopt_external(dtype, std::move(shape), a.data(), release_array, new Array(a));
}

// A read-only view of the tensor's memory that keeps the tensor alive; `as` overrides the
// element type it declares (numpy has no bfloat16: its bits go out as uint16).
nb::ndarray<nb::ro> view_of(const Tensor& t, DType as) {
  if (t.is_symbolic())
    throw nb::type_error(("Cannot convert a symbolic tensor (" + t.name() +
                          ") to a numpy array: its value exists only when the traced function runs.")
                             .c_str());
  const TensorShape shape = t.shape();
  std::vector<size_t> dims(shape.dims().begin(), shape.dims().end());
  nb::capsule owner(new Tensor(t), [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  return nb::ndarray<nb::ro>(t.data(), dims.size(), dims.data(), owner, nullptr, dlpack_dtype(as),
                             nb::device::cpu::value, 0);
}
nb::ndarray<nb::ro> view_of(const Tensor& t) { return view_of(t, t.is_symbolic() ? DType::Float32 : t.dtype()); }

// A string tensor's elements as a numpy array of Python bytes (dtype object, as TensorFlow's).
nb::object string_array(const Tensor& t) {
  const std::vector<std::string> strings = t.to_vector<std::string>();
  nb::list items;
  for (const std::string& s : strings) items.append(nb::bytes(s.data(), s.size()));
  static nb::object np = nb::module_::import_("numpy");
  nb::object flat = np.attr("empty")(strings.size(), nb::arg("dtype") = np.attr("object_"));
  flat.attr("__setitem__")(nb::slice(nb::none(), nb::none(), nb::none()), items);
  nb::list dims;
  const TensorShape shape = t.shape();
  for (int64_t d : shape.dims()) dims.append(d);
  return flat.attr("reshape")(nb::tuple(dims));
}

// A string tensor from a flat sequence of bytes and its shape.
Tensor from_strings(nb::sequence values, const std::vector<int64_t>& shape) {
  std::vector<std::string> strings;
  for (nb::handle v : values) {
    char* data = nullptr;
    Py_ssize_t size = 0;
    if (PyBytes_AsStringAndSize(v.ptr(), &data, &size) != 0) throw nb::python_error();
    strings.emplace_back(data, static_cast<size_t>(size));
  }
  return constant(std::move(strings), shape);
}

// The value as a numpy array, a scalar as a 0-d array (what __array__ must give).
nb::object numpy_array_of(const Tensor& t) {
  if (!t.is_symbolic() && t.dtype() == DType::String) return string_array(t);
  nb::object a;
  if (!t.is_symbolic() && t.dtype() == DType::BFloat16) {  // ml_dtypes' bfloat16, as TensorFlow's arrays
    nb::object bits = nb::cast(nb::ndarray<nb::numpy, nb::ro>(view_of(t, DType::UInt16)));
    static nb::object bfloat16_type = nb::module_::import_("ml_dtypes").attr("bfloat16");
    a = bits.attr("view")(bfloat16_type);
  } else {
    a = nb::cast(nb::ndarray<nb::numpy, nb::ro>(view_of(t)));
    if (t.dtype() == DType::Int64) {
      // DLPack's int64 becomes numpy's "long long"; numpy's own int64 ("long" here) prints
      // without a dtype, as TensorFlow's arrays do.
      static nb::object int64_type = nb::module_::import_("numpy").attr("int64");
      a = a.attr("view")(int64_type);
    }
  }
  return a;
}

// .numpy(): a scalar is a numpy scalar (np.float32(3.0); bytes for a string), as
// TensorFlow's .numpy() gives.
nb::object numpy_of(const Tensor& t) {
  // A graph tensor has no numpy(): TensorFlow's SymbolicTensor lacks the method, so code
  // written for TensorFlow catches AttributeError (the tf.function guide does).
  if (t.is_symbolic()) throw nb::attribute_error("'SymbolicTensor' object has no attribute 'numpy'");
  nb::object a = numpy_array_of(t);
  if (t.is_symbolic() || t.rank() != 0) return a;
  return t.dtype() == DType::String ? a.attr("item")() : a.attr("__getitem__")(nb::tuple());
}

nb::object shape_tuple(const Tensor& t) {
  const TensorShape s = t.shape();
  if (s.rank() < 0) return nb::none();
  nb::list dims;
  for (int64_t d : s.dims()) dims.append(d < 0 ? nb::none() : nb::cast(d));
  return nb::tuple(dims);
}

template <class T>
T scalar_as(const Tensor& t, const char* what) {
  if (t.is_symbolic())
    throw nb::type_error((std::string("Cannot convert a symbolic tensor to a Python ") + what).c_str());
  if (t.num_elements() != 1 || t.rank() != 0)
    throw nb::type_error("only 0-dimensional arrays can be converted to Python scalars");
  switch (t.dtype()) {
    case DType::Bool:
      return static_cast<T>(t.item<bool>());
    case DType::Int32:
      return static_cast<T>(t.item<int32_t>());
    case DType::Int64:
      return static_cast<T>(t.item<int64_t>());
    case DType::Float32:
      return static_cast<T>(t.item<float>());
    case DType::Float64:
      return static_cast<T>(t.item<double>());
    case DType::UInt8:
      return static_cast<T>(t.item<uint8_t>());
    case DType::Int8:
      return static_cast<T>(t.item<int8_t>());
    case DType::Int16:
      return static_cast<T>(t.item<int16_t>());
    case DType::UInt16:
      return static_cast<T>(t.item<uint16_t>());
    case DType::UInt32:
      return static_cast<T>(t.item<uint32_t>());
    case DType::UInt64:
      return static_cast<T>(t.item<uint64_t>());
    case DType::Float16:
      return static_cast<T>(static_cast<float>(t.item<float16>()));
    case DType::BFloat16:
      return static_cast<T>(static_cast<float>(t.item<bfloat16>()));
    case DType::Complex64:
    case DType::Complex128:  // Python's float(1j) is a TypeError too
      throw nb::type_error(("Cannot convert a complex tensor to a Python " + std::string(what)).c_str());
    case DType::Variant:
    case DType::String:
      break;
  }
  throw InvalidArgumentError("Cannot convert a Tensor of dtype " + std::string(dtype_name(t.dtype())) +
                             " to a Python number.");
}

// A binary operator and its reflection; Python numbers and other values go through operand().
template <Tensor (*Fn)(const Tensor&, const Tensor&)>
void bind_binary(nb::class_<Tensor>& cls, const char* name, const char* rname, const char* op) {
  // .none(): `x + None` is TensorFlow's ValueError from the conversion, not Python's TypeError.
  cls.def(
      name, [op](const Tensor& a, nb::handle b) { return Fn(a, operand(b, a, op)); }, nb::is_operator(),
      nb::arg("other").none());
  cls.def(
      rname, [op](const Tensor& b, nb::handle a) { return Fn(operand(a, b, op, /*reflected=*/true), b); },
      nb::is_operator(), nb::arg("other").none());
}

Tensor floordiv_fn(const Tensor& a, const Tensor& b) { return floordiv(a, b); }
// TensorFlow's `/` refuses, with a TypeError of its own, what the other operators leave to the op.
Tensor truediv_fn(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype())
    throw nb::type_error((std::string("`x` and `y` must have the same dtype, got ") +
                          nb::repr(dtype_object(a.dtype())).c_str() +
                          " != " + nb::repr(dtype_object(b.dtype())).c_str() + ".")
                             .c_str());
  if (a.dtype() == DType::Bool)
    throw nb::type_error("Invalid dtype kiln.bool in __truediv__. Expected an integer or floating dtype.");
  return div(a, b);
}
Tensor matmul_fn(const Tensor& a, const Tensor& b) { return matmul(a, b); }
// & | ^ ~ are the logical ops for bool tensors and the bitwise ops for the others, as
// TensorFlow's (whose bitwise ops refuse floats).
Tensor bitwise(const char* op, const Tensor& a, const Tensor& b) { return execute_op(op, {a, b})[0]; }
Tensor and_fn(const Tensor& a, const Tensor& b) {
  return a.dtype() == DType::Bool ? logical_and(a, b) : bitwise("BitwiseAnd", a, b);
}
Tensor or_fn(const Tensor& a, const Tensor& b) {
  return a.dtype() == DType::Bool ? logical_or(a, b) : bitwise("BitwiseOr", a, b);
}
Tensor xor_fn(const Tensor& a, const Tensor& b) {
  if (a.dtype() != DType::Bool) return bitwise("BitwiseXor", a, b);
  return logical_and(logical_or(a, b), logical_not(logical_and(a, b)));
}

}  // namespace

void bind_tensor(nb::module_& m) {
  // dynamic_attr: libraries hang attributes on tensors (Keras: _keras_mask, _keras_logits), as
  // TensorFlow's tensors allow; the dict is made only for a tensor that gets one.
  nb::class_<Tensor> cls(m, "Tensor", nb::dynamic_attr());
  cls.def_prop_ro("dtype", [](const Tensor& t) { return dtype_object(t.dtype()); })
      .def_prop_ro("_dtype_enum", [](const Tensor& t) { return static_cast<int>(t.dtype()); })
      .def_prop_ro("shape", [](const Tensor& t) { return hooks().make_shape(shape_tuple(t)); })
      .def("_shape_tuple", &shape_tuple)
      .def_prop_ro("ndim",
                   [](const Tensor& t) -> nb::object {
                     const int r = t.rank();
                     return r < 0 ? nb::none() : nb::cast(r);
                   })
      .def("__len__",
           [](const Tensor& t) {
             if (t.rank() == 0) throw nb::type_error("Scalar tensor has no `len()`");
             const TensorShape s = t.shape();
             if (s.rank() < 0 || s.dims()[0] < 0)
               throw nb::type_error("Cannot take the length of a tensor whose first dimension is unknown");
             return s.dims()[0];
           })
      .def_prop_ro("is_symbolic", &Tensor::is_symbolic)
      .def_prop_ro("name",
                   [](const Tensor& t) -> nb::object {
                     if (!t.is_symbolic())
                       throw nb::attribute_error("Tensor.name is undefined when eager execution is enabled.");
                     return nb::cast(t.name());
                   })
      .def("numpy", &numpy_of, "The value as a numpy array: a read-only view of the tensor's memory (no copy).")
      .def(
          "__array__",
          [](const Tensor& t, nb::handle dtype, nb::handle copy) {
            nb::object a = numpy_array_of(t);
            if (!dtype.is_none() || (copy.is_valid() && !copy.is_none() && nb::cast<bool>(copy)))
              return nb::module_::import_("numpy").attr("array")(a, dtype, nb::arg("copy") = true);
            return a;
          },
          nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none())
      .def(
          // A framework-less nanobind array casts to a DLPack capsule ("dltensor"), which
          // consumers accept whatever max_version they ask for.
          "__dlpack__", [](const Tensor& t, nb::kwargs) { return nb::cast(view_of(t)); }, nb::arg("kwargs"))
      .def("__dlpack_device__", [](const Tensor&) { return nb::make_tuple(1, 0); })  // kDLCPU, device 0
      .def("__float__", [](const Tensor& t) { return scalar_as<double>(t, "float"); })
      .def("__int__", [](const Tensor& t) { return scalar_as<int64_t>(t, "int"); })
      .def("__index__",
           [](const Tensor& t) {
             if (t.dtype() != DType::Int32 && t.dtype() != DType::Int64)
               throw nb::type_error("Only integer scalar tensors can be used as an index");
             return scalar_as<int64_t>(t, "int");
           })
      .def("__bool__",
           [](const Tensor& t) {
             if (t.is_symbolic())
               throw OperatorNotAllowedInGraphError(
                   "Using a symbolic `kiln.Tensor` as a Python `bool` is not allowed: its value exists only when "
                   "the traced function runs. With AutoGraph (kiln.function's default), `if` and `while` on a "
                   "tensor become kiln.cond and kiln.while_loop; without it, write those calls yourself.");
             if (!t.is_symbolic() && t.num_elements() != 1)
               throw nb::value_error(
                   "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()");
             return static_cast<bool>(t);
           })
      .def("_str", &Tensor::str)
      .def("__neg__", [](const Tensor& t) { return neg(t); })
      .def("__abs__", [](const Tensor& t) { return abs(t); })
      .def("__invert__",
           [](const Tensor& t) { return t.dtype() == DType::Bool ? logical_not(t) : execute_op("Invert", {t})[0]; })
      .def("__hash__",
           [](const Tensor&) -> Py_ssize_t {
             throw nb::type_error("Tensor is unhashable. Instead, use tensor.ref() as the key.");
           })
      .def_static("_from_array", &from_array, nb::arg("array"), nb::arg("bfloat16_bits") = false)
      .def_static("_from_strings", &from_strings, nb::arg("values"), nb::arg("shape"));
  // Tensors win over numpy arrays in mixed expressions (numpy calls our reflected operators).
  cls.attr("__array_priority__") = 100;

  bind_binary<add>(cls, "__add__", "__radd__", "AddV2");
  bind_binary<sub>(cls, "__sub__", "__rsub__", "Sub");
  bind_binary<mul>(cls, "__mul__", "__rmul__", "Mul");
  bind_binary<truediv_fn>(cls, "__truediv__", "__rtruediv__", "RealDiv");
  bind_binary<floordiv_fn>(cls, "__floordiv__", "__rfloordiv__", "FloorDiv");
  bind_binary<floormod>(cls, "__mod__", "__rmod__", "FloorMod");
  bind_binary<pow>(cls, "__pow__", "__rpow__", "Pow");
  bind_binary<matmul_fn>(cls, "__matmul__", "__rmatmul__", "MatMul");
  bind_binary<and_fn>(cls, "__and__", "__rand__", "LogicalAnd");
  bind_binary<or_fn>(cls, "__or__", "__ror__", "LogicalOr");
  bind_binary<xor_fn>(cls, "__xor__", "__rxor__", "LogicalXor");
  // Comparisons have no reflection of their own: Python swaps < and > itself.
  cls.def(
         "__lt__", [](const Tensor& a, nb::handle b) { return less(a, operand(b, a, "Less")); }, nb::is_operator(),
         nb::arg("other").none())
      .def(
          "__le__", [](const Tensor& a, nb::handle b) { return less_equal(a, operand(b, a, "LessEqual")); },
          nb::is_operator(), nb::arg("other").none())
      .def(
          "__gt__", [](const Tensor& a, nb::handle b) { return greater(a, operand(b, a, "Greater")); },
          nb::is_operator(), nb::arg("other").none())
      .def(
          "__ge__", [](const Tensor& a, nb::handle b) { return greater_equal(a, operand(b, a, "GreaterEqual")); },
          nb::is_operator(), nb::arg("other").none());
}

}  // namespace kiln::python
