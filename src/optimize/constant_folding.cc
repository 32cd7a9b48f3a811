// constant_folding: a pure op whose inputs are all constants runs once, now, with its own
// kernel, and becomes a Const. Shape, Size and Rank of statically known shapes fold too.
// Folding never materializes constants above a size cap, and an op that would fail is left
// in place, so it fails at run time exactly as the op reports it (or never, if pruned).
#include "core/dtype_table.h"
#include "eager/execute.h"
#include "optimize/pass.h"

namespace kiln::optimize {
namespace {

bool foldable(const graph::Node& n, int64_t cap) {
  if (n.stateful || n.op->has(ops::kNoKernel) || n.op->has(ops::kControlFlow) || n.op->has(ops::kConstValue))
    return false;
  if (n.num_outputs() == 0 || !n.control_inputs.empty()) return false;
  for (DType d : n.out_dtypes)  // a variant (a TensorList) is an object made by running, not a constant
    if (!detail::has_values(d)) return false;
  for (const auto& s : n.out_shapes) {
    if (!s.is_fully_defined()) return false;
    int64_t count = 1;
    for (int64_t d : s.dims()) count *= d;
    if (count > cap) return false;
  }
  return true;
}

class ConstantFolding : public Pass {
 public:
  const char* name() const override { return "constant_folding"; }
  bool run(graph::Graph& g, const PassContext& ctx) override {
    Replacements repl;
    const int n = g.num_nodes();  // nodes added below are Consts: nothing more to fold
    for (int id = 0; id < n; ++id) {
      graph::Node& node = *g.node(id);
      if (!foldable(node, ctx.options.max_folded_elements)) continue;
      std::vector<const ops::TensorImpl*> inputs;
      // Shape-only ops read only dims: a dataless stand-in is enough.
      std::vector<std::unique_ptr<detail::TensorImpl>> standins;
      bool ok = true;
      for (const graph::Output& in : node.inputs) {
        if (const ops::TensorImpl* v = in.node->const_value()) {
          inputs.push_back(v);
          continue;
        }
        const TensorShape& s = in.node->out_shapes[in.index];
        if (node.op->has(ops::kShapeOnly) && s.is_fully_defined()) {
          auto t = std::make_unique<detail::TensorImpl>();
          t->dtype = in.node->out_dtypes[in.index];
          t->dims = s.dims();
          t->num_elements = detail::checked_num_elements(s.dims().data(), s.dims().size());
          inputs.push_back(t.get());
          standins.push_back(std::move(t));
          continue;
        }
        ok = false;
        break;
      }
      if (!ok) continue;
      std::vector<Tensor> values;
      try {
        values = eager::execute(*node.op, inputs.data(), static_cast<int>(inputs.size()), node.attrs);
      } catch (const Error& e) {
        // An op that rejects its inputs is left for run time, where it reports the error in
        // its own words (and only if it runs). A bug in kiln is not hidden that way.
        if (e.code() == ErrorCode::Internal) throw;
        continue;
      }
      for (int i = 0; i < node.num_outputs(); ++i)
        repl[{&node, i}] = graph::Output{g.add_const(values[i], node.name + "/folded"), 0};
    }
    g.replace_uses(repl);
    return !repl.empty();
  }
};
}  // namespace

std::unique_ptr<Pass> make_constant_folding() { return std::make_unique<ConstantFolding>(); }

}  // namespace kiln::optimize
