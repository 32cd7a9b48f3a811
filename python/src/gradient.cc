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

// `with _core.StopRecording():` every tape on this thread stops recording.
// `with _core.InitScope():` ops run eagerly, lifted out of the trace (tf.init_scope).
struct InitScopeHolder {
  std::unique_ptr<InitScope> active;
};
struct StopRecordingScope {
  std::unique_ptr<StopRecording> active;
};

// A Python gradient function kept by a tape: released with the GIL held, whichever thread
// drops the tape's last entry.
CustomGradient custom_gradient_of(nb::object fn) {
  std::shared_ptr<nb::object> held(new nb::object(std::move(fn)), [](nb::object* o) {
    nb::gil_scoped_acquire gil;
    delete o;
  });
  return [held](const std::vector<Tensor>& dy) {
    nb::gil_scoped_acquire gil;
    nb::list args;
    for (const Tensor& t : dy) args.append(nb::cast(t));
    nb::object result = (*held)(args);
    std::vector<Tensor> dx;
    for (nb::handle h : result) dx.push_back(h.is_none() ? Tensor() : nb::cast<Tensor>(h));
    return dx;
  };
}

}  // namespace

void bind_gradient(nb::module_& m) {
  nb::class_<StopRecordingScope>(m, "StopRecording")
      .def(nb::init<>())
      .def("__enter__",
           [](StopRecordingScope& s) {
             if (s.active) throw std::runtime_error("StopRecording is already active");
             s.active = std::make_unique<StopRecording>();
           })
      .def("__exit__", [](StopRecordingScope& s, nb::args) { s.active.reset(); });
  nb::class_<InitScopeHolder>(m, "InitScope")
      .def(nb::init<>())
      .def("__enter__",
           [](InitScopeHolder& s) {
             if (s.active) throw std::runtime_error("InitScope is already active");
             s.active = std::make_unique<InitScope>();
           })
      .def("__exit__", [](InitScopeHolder& s, nb::args) { s.active.reset(); });
  m.def(
      "record_custom_gradient",
      [](const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs, nb::object grad) {
        return record_custom_gradient(inputs, outputs, custom_gradient_of(std::move(grad)));
      },
      nb::arg("inputs"), nb::arg("outputs"), nb::arg("grad"));

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
