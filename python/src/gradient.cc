// kiln.GradientTape's C++ half: kiln::GradientTape records while it lives (eagerly, or into
// the graph being traced); kiln/_tape.py makes it a context manager over nested sources.
#include "kiln/gradient.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <vector>

#include "convert.h"

namespace kiln::python {
namespace {

nb::list as_python(const std::vector<Tensor>& grads) {
  nb::list out;
  for (const Tensor& g : grads) out.append(g.defined() ? nb::cast(g) : nb::none());
  return out;
}

UnconnectedGradients unconnected_of(bool zero) {
  return zero ? UnconnectedGradients::kZero : UnconnectedGradients::kNone;
}

}  // namespace

void bind_gradient(nb::module_& m) {
  nb::class_<GradientTape>(m, "TapeCore")
      .def(nb::init<bool, bool>(), nb::arg("persistent"), nb::arg("watch_accessed_variables"))
      .def("watch", [](GradientTape& tape, const Tensor& t) { tape.watch(t); })
      .def("watch_variable", [](GradientTape& tape, const Variable& v) { tape.watch(v); })
      .def("set_recording", &GradientTape::set_recording)
      .def("reset", &GradientTape::reset)
      .def("watched_variables", &GradientTape::watched_variables)
      .def(
          "gradient_mixed",
          [](GradientTape& tape, const Tensor& target, nb::list sources, std::optional<Tensor> upstream, bool zero) {
            std::vector<GradientSource> s;
            for (nb::handle h : sources) {
              if (nb::isinstance<Variable>(h))
                s.push_back(GradientSource{.tensor = Tensor(), .variable = nb::cast<Variable*>(h)});
              else
                s.push_back(GradientSource{.tensor = nb::cast<Tensor>(h), .variable = nullptr});
            }
            return as_python(tape.gradient(target, s, upstream ? *upstream : Tensor(), unconnected_of(zero)));
          },
          nb::arg("target"), nb::arg("sources"), nb::arg("output_gradient").none(), nb::arg("zero"))
      .def(
          "gradient_tensors",
          [](GradientTape& tape, const Tensor& target, const std::vector<Tensor>& sources, bool zero) {
            return as_python(tape.gradient(target, sources, unconnected_of(zero)));
          },
          nb::arg("target"), nb::arg("sources"), nb::arg("zero"))
      .def(
          "gradient_tensors_with",
          [](GradientTape& tape, const Tensor& target, const std::vector<Tensor>& sources, const Tensor& upstream,
             bool zero) { return as_python(tape.gradient(target, sources, upstream, unconnected_of(zero))); },
          nb::arg("target"), nb::arg("sources"), nb::arg("output_gradient"), nb::arg("zero"))
      .def(
          "gradient_variables",
          [](GradientTape& tape, const Tensor& target, std::vector<Variable*> sources, bool zero) {
            return as_python(tape.gradient(target, sources, unconnected_of(zero)));
          },
          nb::arg("target"), nb::arg("sources"), nb::arg("zero"));
}

}  // namespace kiln::python
