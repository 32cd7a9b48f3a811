// fuse_weight_update: a training step's weight gradient, MatMul(x, dy, transpose_a=true)
// over a short batch, feeding its variable's update (ResourceApplyGradientDescent,
// ResourceApplyKerasMomentum, or a Mul by a scalar then AssignSubVariableOp) becomes one
// KilnMatMulUpdate node: the update is applied to each tile of the product while it is in
// registers, so the gradient is never written out and the weights are walked once, during
// the product (XLA fuses the same update into its dot's output). The update node is
// rewritten in place, keeping its place among the stateful ops; the MatMul (and Mul) die.
// Bit for bit the ops it replaces: MatMul sends such products to the same kernel.
#include "kernels/gemm_short.h"
#include "ops/op_list.h"
#include "optimize/pass.h"

namespace kiln::optimize {
namespace {

const int kGdVar = ops::attr_index(ops::op::ResourceApplyGradientDescent(), "_resource");
const int kMomentumVar = ops::attr_index(ops::op::ResourceApplyKerasMomentum(), "_resource");
const int kMomentumAccum = ops::attr_index(ops::op::ResourceApplyKerasMomentum(), "_accum");
const int kMomentumNesterov = ops::attr_index(ops::op::ResourceApplyKerasMomentum(), "use_nesterov");
const int kAssignSubVar = ops::attr_index(ops::op::AssignSubVariableOp(), "_resource");

bool static_matrix(const Output& o) {
  const TensorShape& s = o.node->out_shapes[o.index];
  return o.node->out_dtypes[o.index] == DType::Float32 && s.rank() == 2 && s.is_fully_defined();
}
bool float_scalar(const Output& o) {
  return o.node->out_dtypes[o.index] == DType::Float32 && o.node->out_shapes[o.index] == TensorShape();
}

class FuseWeightUpdate : public Pass {
 public:
  const char* name() const override { return "fuse_weight_update"; }
  bool run(graph::Graph& g, const PassContext&) override {
    const int n = g.num_nodes();
    const UseCounts counts(g);
    // The weight-gradient product behind `o`, if the fused kernel takes it; null otherwise.
    auto product = [&](const Output& o) -> Node* {
      Node* mm = o.node;
      if (mm->op != &ops::op::MatMul() || !counts.used_once(*mm) || !mm->attrs.b(kMatMulTransposeA) ||
          mm->attrs.b(kMatMulTransposeB))
        return nullptr;
      if (!static_matrix(mm->inputs[0]) || !static_matrix(mm->inputs[1])) return nullptr;
      const auto& a = mm->inputs[0].node->out_shapes[mm->inputs[0].index].dims();
      const auto& b = mm->inputs[1].node->out_shapes[mm->inputs[1].index].dims();
      return kernels::short_inner_tn(true, false, a[1], b[1], a[0]) ? mm : nullptr;
    };
    bool changed = false;
    for (int id = 0; id < n; ++id) {
      Node& update = *g.node(id);
      Node* mm = nullptr;
      std::vector<Output> scalars;
      ops::Attrs attrs;
      if (update.op == &ops::op::ResourceApplyGradientDescent() && (mm = product(update.inputs[1]))) {
        scalars = {update.inputs[0]};
        attrs = ops::Attrs{update.attrs[kGdVar], ops::ResourceRef{}, std::string("gradient_descent"), false};
      } else if (update.op == &ops::op::ResourceApplyKerasMomentum() && (mm = product(update.inputs[1]))) {
        scalars = {update.inputs[0], update.inputs[2]};
        attrs = ops::Attrs{update.attrs[kMomentumVar], update.attrs[kMomentumAccum], std::string("keras_momentum"),
                           update.attrs[kMomentumNesterov]};
      } else if (update.op == &ops::op::AssignSubVariableOp()) {
        Node* mul = update.inputs[0].node;
        if (mul->op != &ops::op::Mul() || !counts.used_once(*mul)) continue;
        for (int side = 0; side < 2 && !mm; ++side)
          if (float_scalar(mul->inputs[side]) && (mm = product(mul->inputs[1 - side]))) scalars = {mul->inputs[side]};
        if (!mm) continue;
        attrs = ops::Attrs{update.attrs[kAssignSubVar], ops::ResourceRef{}, std::string("gradient_descent"), false};
      }
      if (!mm || !float_scalar(scalars[0]) || (scalars.size() > 1 && !float_scalar(scalars[1]))) continue;
      // In place: the node keeps its id, name and control edges among the stateful ops.
      std::vector<Output> inputs{mm->inputs[0], mm->inputs[1]};
      inputs.insert(inputs.end(), scalars.begin(), scalars.end());
      update.op = &ops::op::KilnMatMulUpdate();
      update.inputs = std::move(inputs);
      update.attrs = std::move(attrs);
      update.kernel_dtype = DType::Float32;
      changed = true;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_weight_update() { return std::make_unique<FuseWeightUpdate>(); }

}  // namespace kiln::optimize
