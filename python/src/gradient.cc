// kiln.GradientTape's C++ half: kiln::GradientTape records while it lives (eagerly, or into
// the graph being traced); kiln/_tape.py makes it a context manager over nested sources.
#include "kiln/gradient.h"

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
      .def(nb::init<bool>(), nb::arg("persistent"))
      .def("watch", &GradientTape::watch)
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
