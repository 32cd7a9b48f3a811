#include "convert.h"

#include <limits>
#include <string>

namespace kiln::python {

Hooks& hooks() {
  static Hooks* h = new Hooks();  // never destroyed: Python objects must not die after the interpreter
  return *h;
}

nb::object dtype_object(DType d) { return hooks().dtypes[static_cast<int>(d)]; }

DType dtype_from(nb::handle obj) {
  nb::object enum_value = nb::getattr(obj, "_enum", nb::none());
  if (enum_value.is_none()) {
    // A numpy dtype, a numpy scalar type or a name: the Python layer knows them all.
    nb::object resolved = nb::module_::import_("kiln._dtypes").attr("as_dtype")(obj);
    enum_value = resolved.attr("_enum");
  }
  const int v = nb::cast<int>(enum_value);
  if (v < 0 || v >= kNumDTypes) throw nb::type_error("not a kiln dtype");
  return static_cast<DType>(v);
}

namespace {
bool fits_int32(int64_t v) {
  return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
}
Tensor through_python(nb::handle obj, const Tensor& like, const char* op, bool reflected) {
  return nb::cast<Tensor>(hooks().binary_operand(obj, nb::cast(like), op, reflected));
}
}  // namespace

Tensor operand(nb::handle obj, const Tensor& like, const char* op, bool reflected) {
  if (nb::isinstance<Tensor>(obj)) return nb::cast<Tensor>(obj);
  if (!like.defined()) return to_tensor(obj);
  const DType d = like.dtype();
  PyObject* p = obj.ptr();
  if (PyBool_Check(p)) {
    if (d == DType::Bool) return detail::number_as(like, p == Py_True, op);
    return detail::number_as(like, int64_t{p == Py_True}, op);
  }
  if (PyLong_CheckExact(p) && d != DType::Bool) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
    if (!overflow && (d != DType::Int32 || fits_int32(v))) return detail::number_as(like, int64_t{v}, op);
    return through_python(obj, like, op, reflected);
  }
  if (PyFloat_CheckExact(p) && is_floating(d)) return detail::number_as(like, PyFloat_AS_DOUBLE(p), op);
  return through_python(obj, like, op, reflected);
}

Tensor to_tensor(nb::handle obj) {
  if (nb::isinstance<Tensor>(obj)) return nb::cast<Tensor>(obj);
  return nb::cast<Tensor>(hooks().convert(obj, nb::none()));
}

}  // namespace kiln::python
