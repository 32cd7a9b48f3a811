// kiln._core: the extension module. Each file binds one part of the C++ API.
#include "convert.h"
#include "interrupt.h"

namespace kiln::python {
void bind_errors(nb::module_& m);
void bind_tensor(nb::module_& m);
void bind_ops(nb::module_& m);
void bind_function(nb::module_& m);
void bind_control_flow(nb::module_& m);
void bind_variable(nb::module_& m);
void bind_gradient(nb::module_& m);
void bind_config(nb::module_& m);
void bind_checkpoint(nb::module_& m);
void bind_saved_model(nb::module_& m);
void bind_distribute(nb::module_& m);
void bind_data(nb::module_& m);
}  // namespace kiln::python

NB_MODULE(_core, m) {
  namespace py = kiln::python;
  m.doc() = "kiln's C++ core (internal: use the kiln package)";
  py::bind_errors(m);
  py::install_interrupt_handler();
  py::bind_tensor(m);
  py::bind_ops(m);
  py::bind_function(m);
  py::bind_control_flow(m);
  py::bind_variable(m);
  py::bind_gradient(m);
  py::bind_config(m);
  py::bind_checkpoint(m);
  py::bind_saved_model(m);
  py::bind_distribute(m);
  py::bind_data(m);
  m.def("_set_hooks", [](py::nb::object dtypes, py::nb::object convert, py::nb::object binary_operand,
                         py::nb::object make_shape, py::nb::object error_classes) {
    py::hooks() = py::Hooks{.dtypes = dtypes,
                            .convert = convert,
                            .binary_operand = binary_operand,
                            .make_shape = make_shape,
                            .error_classes = error_classes};
  });
}
