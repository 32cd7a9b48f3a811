// kiln.cond, kiln.while_loop and kiln.switch_case inside a trace: the C++ builders of If,
// While and Case nodes, with branches and loop bodies that are Python callables over flat
// lists of tensors (kiln/_control_flow.py flattens and rebuilds the structures).
#include "kiln/control_flow.h"

#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <vector>

#include "convert.h"

namespace kiln::python {
namespace {

std::vector<Tensor> tensors_of(nb::handle result) { return nb::cast<std::vector<Tensor>>(result); }

}  // namespace

void bind_control_flow(nb::module_& m) {
  m.def(
      "build_cond",
      [](const Tensor& pred, nb::object then_fn, nb::object else_fn) {
        return detail::build_cond(
            pred, [&] { return tensors_of(then_fn()); }, [&] { return tensors_of(else_fn()); });
      },
      nb::arg("pred"), nb::arg("then_fn"), nb::arg("else_fn"));
  m.def(
      "build_case",
      [](const Tensor& index, std::vector<nb::object> branch_fns) {
        std::vector<detail::Branch> branches;
        for (nb::object& f : branch_fns) branches.push_back([&f] { return tensors_of(f()); });
        return detail::build_case(index, branches);
      },
      nb::arg("index"), nb::arg("branches"));
  m.def(
      "build_while",
      [](nb::object cond_fn, nb::object body_fn, std::vector<Tensor> vars, std::optional<int64_t> maximum_iterations,
         std::optional<std::vector<std::optional<std::vector<int64_t>>>> shape_invariants) {
        WhileOptions options{.maximum_iterations = maximum_iterations};
        if (shape_invariants)
          for (const auto& dims : *shape_invariants)
            options.shape_invariants.push_back(dims ? TensorShape(*dims) : TensorShape::unknown());
        return detail::build_while([&](const std::vector<Tensor>& v) { return nb::cast<Tensor>(cond_fn(v)); },
                                   [&](const std::vector<Tensor>& v) { return tensors_of(body_fn(v)); }, vars, options);
      },
      nb::arg("cond_fn"), nb::arg("body_fn"), nb::arg("vars"), nb::arg("maximum_iterations").none(),
      nb::arg("shape_invariants").none());
}

}  // namespace kiln::python
