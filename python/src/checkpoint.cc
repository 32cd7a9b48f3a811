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
  // Object graphs cross as [(children [(name, node)], values [(name, full_name, key)])].
  m.def(
      "write_object_checkpoint",
      [](const std::string& prefix, nb::list objects, const std::vector<std::pair<std::string, Tensor>>& tensors) {
        std::vector<CheckpointObject> graph;
        for (nb::handle o : objects) {
          CheckpointObject obj;
          for (nb::handle c : o[0])
            obj.children.push_back({.node = nb::cast<int>(c[1]), .name = nb::cast<std::string>(c[0])});
          for (nb::handle v : o[1])
            obj.values.push_back({.name = nb::cast<std::string>(v[0]),
                                  .full_name = nb::cast<std::string>(v[1]),
                                  .checkpoint_key = nb::cast<std::string>(v[2])});
          graph.push_back(std::move(obj));
        }
        nb::gil_scoped_release release;
        write_object_checkpoint(prefix, graph, tensors);
      },
      nb::arg("prefix"), nb::arg("objects"), nb::arg("tensors"));
  m.def(
      "read_object_graph",
      [](const CheckpointReader& reader) {
        nb::list out;
        for (const CheckpointObject& o : read_object_graph(reader)) {
          nb::list children, values;
          for (const auto& c : o.children) children.append(nb::make_tuple(c.name, c.node));
          for (const auto& v : o.values) values.append(nb::make_tuple(v.name, v.full_name, v.checkpoint_key));
          out.append(nb::make_tuple(children, values));
        }
        return out;
      },
      nb::arg("reader"));
  m.def("write_checkpoint", &write_checkpoint, nb::arg("prefix"), nb::arg("tensors"),
        nb::call_guard<nb::gil_scoped_release>());
}

}  // namespace kiln::python
