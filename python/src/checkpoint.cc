// kiln.train's checkpoint reader (tf.train.load_checkpoint) over kiln::CheckpointReader, and
// the writer (used by tests and kiln's savers).
#include <kiln/checkpoint.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "convert.h"

namespace kiln::python {

void bind_checkpoint(nb::module_& m) {
  nb::class_<CheckpointReader>(m, "CheckpointReaderCore")
      .def(nb::init<std::string>(), nb::arg("prefix"))
      .def("tensor_names", &CheckpointReader::tensor_names)
      .def("has_tensor", &CheckpointReader::has_tensor, nb::arg("name"))
      .def("dtype_name", &CheckpointReader::dtype_name, nb::arg("name"))
      .def("shape", &CheckpointReader::shape, nb::arg("name"))
      .def("get_tensor", &CheckpointReader::get_tensor, nb::arg("name"), nb::call_guard<nb::gil_scoped_release>())
      .def(
          "get_strings",
          [](const CheckpointReader& r, const std::string& name) {
            nb::list out;
            for (const std::string& s : r.get_strings(name)) out.append(nb::bytes(s.data(), s.size()));
            return out;
          },
          nb::arg("name"));
  m.def("write_checkpoint", &write_checkpoint, nb::arg("prefix"), nb::arg("tensors"),
        nb::call_guard<nb::gil_scoped_release>());
}

}  // namespace kiln::python
