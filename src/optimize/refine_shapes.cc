// refine_shapes: the shapes a graph's own shape arithmetic spells out, beyond what shape
// inference found when the graph was built. Keras's Dense on a sequence (Tensordot) reshapes
// its product by Shape(x), a GatherV2 of its free dimensions and a ConcatV2 with the units;
// TensorFlow's shape inference (and so Graph::add_node) does not evaluate the GatherV2 and
// says [?, ?, units]. Grappler's shape refinement does, and so does this pass
// (graph/shape_tensor.h, ShapeRules::kOptimizer): each Reshape (any OpDef::shape_input) fed by such a shape gets the
// dimensions it knows, and the nodes after it are inferred again (keeping what they knew: a
// shape only gets more specific). Fusions then see the Dense output's channels: its BiasAdd
// joins the activation after it (fuse_elementwise).
#include "eager/execute.h"
#include "graph/shape_tensor.h"
#include "ops/helpers.h"
#include "ops/op_list.h"
#include "optimize/pass.h"

namespace kiln::optimize {
namespace {

class RefineShapes : public Pass {
 public:
  const char* name() const override { return "refine_shapes"; }
  bool run(graph::Graph& g, const PassContext&) override {
    const int n = g.num_nodes();
    std::vector<char> refined(n, 0);
    bool any = false;
    for (int id = 0; id < n; ++id) {  // ids are a topological order
      Node& node = *g.node(id);
      bool input_refined = false;
      for (const Output& in : node.inputs) input_refined |= in.node->id < n && refined[in.node->id];
      if (const int si = node.op->shape_input; si >= 0 && si < static_cast<int>(node.inputs.size()) &&
                                               node.num_outputs() > 0 && !node.out_shapes[0].is_fully_defined() &&
                                               !node.inputs[si].node->const_value()) {
        if (const auto known = graph::shape_from_shape_tensor(node.inputs[si], graph::ShapeRules::kOptimizer))
          refined[id] |= graph::refine_shape(node.out_shapes[0], *known);
      }
      if (input_refined && !node.stateful) refined[id] |= infer_again(node);
      any |= refined[id] != 0;
    }
    return any;
  }

 private:
  // The node's shape function with its inputs' refined shapes; false (nothing learned) if it
  // fails or knows no more.
  static bool infer_again(Node& node) {
    std::vector<ops::InputInfo> infos;
    for (const Output& in : node.inputs) infos.push_back(graph::input_info(in));
    ops::InferContext ctx{*node.op, infos.data(), static_cast<int>(infos.size()), node.attrs};
    try {
      eager::infer_concrete(ctx);
    } catch (const std::exception&) {
      return false;
    }
    bool changed = false;
    for (int i = 0; i < ctx.num_outputs && i < node.num_outputs(); ++i)
      if (ctx.out(i).dtype == node.out_dtypes[i]) changed |= graph::refine_shape(node.out_shapes[i], ctx.out(i).shape);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_refine_shapes() { return std::make_unique<RefineShapes>(); }

}  // namespace kiln::optimize
