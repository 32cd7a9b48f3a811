// kiln.Variable's C++ half: the handle of kiln::Variable. Eagerly it holds a value; inside a
// trace reads and writes are ops on the captured handle (kiln/_variable.py adds the rest).
#include <nanobind/stl/string.h>

#include <cstdint>

#include "convert.h"

namespace kiln::python {

void bind_variable(nb::module_& m) {
  nb::class_<Variable>(m, "VariableCore")
      .def(nb::init<Tensor, std::string>(), nb::arg("initial_value"), nb::arg("name"))
      .def("read", &Variable::read)
      .def("assign", [](Variable& v, const Tensor& t) { v.assign(t); })
      .def("assign_add", [](Variable& v, const Tensor& t) { v.assign_add(t); })
      .def("assign_sub", [](Variable& v, const Tensor& t) { v.assign_sub(t); })
      .def_prop_ro("dtype", [](const Variable& v) { return dtype_object(v.dtype()); })
      .def_prop_ro("_dtype_enum", [](const Variable& v) { return static_cast<int>(v.dtype()); })
      .def("_shape_tuple",
           [](const Variable& v) -> nb::object {
             const TensorShape s = v.shape();
             if (s.rank() < 0) return nb::none();
             nb::list dims;
             for (int64_t d : s.dims()) dims.append(d < 0 ? nb::none() : nb::cast(d));
             return nb::tuple(dims);
           })
      .def_prop_ro("name", &Variable::name)
      .def_prop_rw("trainable", &Variable::trainable, &Variable::set_trainable)
      // The variable's identity (two handles on one variable agree): how kiln.Variable finds
      // the Python object of a handle the C++ side returns.
      .def("_id", [](const Variable& v) { return reinterpret_cast<uintptr_t>(v.identity()); });
}

}  // namespace kiln::python
