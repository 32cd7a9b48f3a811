// kiln.saved_model's C++ half: save (a SavedModel TensorFlow loads) and a loaded model (written
// by kiln or TensorFlow) with its signatures' names, specs and call.
#include <kiln/saved_model.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "convert.h"
#include "interrupt.h"

namespace kiln::python {

namespace {
// (name, dtype, shape tuple with None for unknown dims, or None for unknown rank) per spec.
nb::list spec_list(const std::vector<TensorSpec>& specs) {
  nb::list out;
  for (const TensorSpec& s : specs) {
    nb::object shape = nb::none();
    if (s.shape.rank() >= 0) {
      nb::list dims;
      for (int64_t d : s.shape.dims()) dims.append(d < 0 ? nb::none() : nb::cast(d));
      shape = nb::tuple(dims);
    }
    out.append(nb::make_tuple(s.name, dtype_object(s.dtype), shape));
  }
  return out;
}
}  // namespace

void bind_saved_model(nb::module_& m) {
  nb::class_<LoadedModel>(m, "LoadedModelCore")
      .def("signatures", &LoadedModel::signatures)
      .def("input_specs",
           [](const LoadedModel& lm, const std::string& s) { return spec_list(lm.signature(s).input_specs()); })
      .def("output_specs",
           [](const LoadedModel& lm, const std::string& s) { return spec_list(lm.signature(s).output_specs()); })
      .def("signature", &LoadedModel::signature, nb::arg("name"))
      .def(
          "call",
          [](const LoadedModel& lm, const std::string& signature, std::vector<Tensor> inputs) {
            InterruptibleCall interruptible;  // with the GIL held, as it needs
            nb::gil_scoped_release unlocked;
            return lm.call(signature, std::move(inputs));
          },
          nb::arg("signature"), nb::arg("inputs"))
      .def("variables", &LoadedModel::variables)
      .def("objects", &LoadedModel::objects)
      .def("function", &LoadedModel::function, nb::arg("name"))
      .def("variable", &LoadedModel::variable, nb::arg("name"));
  m.def(
      "save_saved_model",
      [](const std::string& dir, std::map<std::string, ConcreteFunction> signatures,
         std::map<std::string, std::vector<std::string>> output_names) { save(dir, signatures, output_names); },
      nb::arg("export_dir"), nb::arg("signatures"), nb::arg("output_names"), nb::call_guard<nb::gil_scoped_release>());
  m.def(
      "save_saved_model_objects",
      [](const std::string& dir, std::map<std::string, ConcreteFunction> signatures,
         std::map<std::string, std::vector<std::string>> output_names, std::string graph,
         std::vector<Variable> variables, std::vector<ConcreteFunction> functions) {
        save(dir, signatures, output_names,
             SavedObjects{
                 .graph = std::move(graph), .variables = std::move(variables), .functions = std::move(functions)});
      },
      nb::arg("export_dir"), nb::arg("signatures"), nb::arg("output_names"), nb::arg("graph"), nb::arg("variables"),
      nb::arg("functions"), nb::call_guard<nb::gil_scoped_release>());
  m.def(
      "load_saved_model", [](const std::string& dir) { return load(dir); }, nb::arg("export_dir"),
      nb::call_guard<nb::gil_scoped_release>());
}

}  // namespace kiln::python
