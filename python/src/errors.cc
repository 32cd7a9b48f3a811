// kiln's C++ errors become the Python exception classes of kiln.errors (TensorFlow's names),
// with the C++ message as their text.
#include "convert.h"

namespace kiln::python {

void bind_errors(nb::module_&) {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      // Stopped by Ctrl-C (interrupt.h): Python's handler has run, so this raises its
      // KeyboardInterrupt, as an interrupted Python loop would.
      if (e.code() == ErrorCode::Cancelled && PyErr_CheckSignals() != 0) return;
      nb::object classes = hooks().error_classes;
      nb::object key = nb::cast(static_cast<int>(e.code()));
      if (!classes.is_valid() || !nb::cast<nb::dict>(classes).contains(key)) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
        return;
      }
      // TensorFlow's OpError(node_def, op, message, ...). A message may quote bytes of a
      // hostile input that are not UTF-8: they show as \x escapes rather than fail here.
      const std::string_view what = e.what();
      nb::object message =
          nb::steal(PyUnicode_DecodeUTF8(what.data(), static_cast<Py_ssize_t>(what.size()), "backslashreplace"));
      nb::object error = classes[key](nb::none(), nb::none(), message);
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
    }
  });
}

}  // namespace kiln::python
