// Control flow nodes: If / StatelessIf, While / StatelessWhile, Case / StatelessCase. Their
// branches and loop parts are functions of the graph's library; kiln::cond, while_loop and
// switch_case build them (eager mode runs the C++ branch directly and never makes these).
#include <string>

#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

// Outputs come from the branches, set by the builder; a shape function is never asked.
void infer_built_by_kiln(InferContext& c) {
  c.fail(std::string(c.op.name) + " nodes are built by kiln::cond, kiln::while_loop or kiln::switch_case");
}

// If(cond, args...): attrs then_branch, else_branch.
void run_if(const Attrs&, const std::vector<Tensor>& in, SubgraphRunner& r, std::vector<Tensor>& out) {
  const std::vector<Tensor> args(in.begin() + 1, in.end());
  r.run(condition_truth(in[0]) ? 0 : 1, args, out);
}

// While(vars...): attrs cond, body. Loops until cond(vars) is false (maximum_iterations is
// a loop variable the builder adds, as TensorFlow does). The executor runs it (kLoop), so
// the loop variables stay in the parts' slots across iterations (exec/plan.cc).

// Case(branch_index, args...): attr branches. An out-of-range index runs the last branch.
void run_case(const Attrs&, const std::vector<Tensor>& in, SubgraphRunner& r, std::vector<Tensor>& out) {
  int64_t i = in[0].item<int32_t>();
  const int n = r.num_bodies();
  if (i < 0 || i >= n) i = n - 1;
  const std::vector<Tensor> args(in.begin() + 1, in.end());
  r.run(static_cast<int>(i), args, out);
}

// If/Case: the gradient is a node of the same kind whose branches differentiate the
// forward branches (the builder traces them).
void branch_grad(GradContext& c) { c.b.branch_gradient(c); }
// A While node keeps no per-iteration values, so it is not differentiated as a node: while
// a tape records, the trace unrolls loops whose trip count is known or bounded
// (trace/control_flow.cc). A While that still reaches a gradient is one it could not unroll.
void while_grad(GradContext& c) {
  throw UnimplementedError(std::string("Gradient of a ") + c.op.name + " node: a while_loop inside a traced " +
                           "function is differentiable when its trip count is known while tracing or bounded by " +
                           "WhileOptions::maximum_iterations (at most 1000 unrolled iterations), and the " +
                           "GradientTape exists before the loop is built.");
}

#define KILN_CONTROL_FLOW_OP(Name, Args, Traits, attrs, runner, Grad) \
  const OpDef& op::Name() {                                           \
    static const OpDef def = {.name = #Name,                          \
                              .num_inputs = -1,                       \
                              .num_outputs = -1,                      \
                              .input_args = Args,                     \
                              .traits = Traits | kControlFlow,        \
                              .attr_specs = attrs,                    \
                              .infer = infer_built_by_kiln,           \
                              .type_attr = nullptr,                   \
                              .control_flow = runner,                 \
                              .grad = Grad};                          \
    return def;                                                       \
  }
}  // namespace

bool condition_truth(const Tensor& t) {
  const TensorImpl& c = detail::concrete(t);
  if (c.num_elements != 1) return c.num_elements > 0;
  return static_cast<bool>(t);  // throws for a symbolic tensor
}

bool condition_truth(const TensorImpl& c) {  // a value the executor computed: concrete
  if (c.num_elements != 1) return c.num_elements > 0;
  return visit_dtype(c.dtype, [&](auto v) { return c.as<decltype(v)>()[0] != decltype(v)(0); });
}

KILN_CONTROL_FLOW_OP(If, (std::vector<ArgSpec>{"cond", list_arg("input")}), kStateful | kTfjs,
                     (std::vector<AttrSpec>{func_attr("then_branch"), func_attr("else_branch")}), run_if, &branch_grad)
KILN_CONTROL_FLOW_OP(StatelessIf, (std::vector<ArgSpec>{"cond", list_arg("input")}), kPure | kTfjs,
                     (std::vector<AttrSpec>{func_attr("then_branch"), func_attr("else_branch")}), run_if, &branch_grad)
KILN_CONTROL_FLOW_OP(While, {list_arg("input")}, kStateful | kLoop | kTfjs,
                     (std::vector<AttrSpec>{func_attr("cond"), func_attr("body")}), nullptr, &while_grad)
KILN_CONTROL_FLOW_OP(StatelessWhile, {list_arg("input")}, kPure | kLoop | kTfjs,
                     (std::vector<AttrSpec>{func_attr("cond"), func_attr("body")}), nullptr, &while_grad)
KILN_CONTROL_FLOW_OP(Case, (std::vector<ArgSpec>{"branch_index", list_arg("input")}), kStateful,
                     (std::vector<AttrSpec>{func_list_attr("branches")}), run_case, &branch_grad)
KILN_CONTROL_FLOW_OP(StatelessCase, (std::vector<ArgSpec>{"branch_index", list_arg("input")}), kPure,
                     (std::vector<AttrSpec>{func_list_attr("branches")}), run_case, &branch_grad)

}  // namespace kiln::ops
