// fuse_contraction: Conv2D -> BiasAdd (-> Relu | Relu6) becomes one KilnFusedConv2D node, so
// the bias and the activation are applied to each block of the convolution's output while it
// is still in cache, instead of in two more passes over memory (TensorFlow's remapper makes
// _FusedConv2D the same way). The fused kernel does the same arithmetic in the same order, so
// results are bit for bit those of the three ops. A node joins only if its one user is the
// next step and nothing else (a graph output, a control edge) needs its value.
#include "ops/op_list.h"
#include "optimize/pass.h"

namespace kiln::optimize {
namespace {

using graph::Node;
using graph::Output;

// Conv2D's attrs in KilnFusedConv2D's order: strides, padding, explicit_paddings,
// data_format, dilations (use_cudnn_on_gpu is dropped), then the activation.
constexpr int kConvAttrsKept = 5;

class FuseContraction : public Pass {
 public:
  const char* name() const override { return "fuse_contraction"; }
  bool run(graph::Graph& g, const PassContext&) override {
    const int n = g.num_nodes();
    std::vector<std::vector<Node*>> users(n);
    std::vector<char> pinned(n, 0);  // a graph output or a control input: its value is needed
    for (const auto& node : g.nodes()) {
      for (const Output& in : node->inputs) users[in.node->id].push_back(node.get());
      for (const Node* c : node->control_inputs) pinned[c->id] = 1;
    }
    for (const Output& o : g.outputs) pinned[o.node->id] = 1;
    auto only_user = [&](const Node& p) -> Node* {
      if (pinned[p.id] || users[p.id].size() != 1) return nullptr;
      return users[p.id][0];
    };
    Replacements repl;
    for (int id = 0; id < n; ++id) {
      Node& conv = *g.node(id);
      if (conv.op != &ops::op::Conv2D() || !conv.control_inputs.empty()) continue;
      Node* bias_add = only_user(conv);
      if (!bias_add || bias_add->op != &ops::op::BiasAdd() || bias_add->inputs[0].node != &conv ||
          !bias_add->control_inputs.empty())
        continue;
      const Output& bias = bias_add->inputs[1];
      if (bias.node == &conv || bias.node->out_dtypes[bias.index] != conv.out_dtypes[0]) continue;
      Node* last = bias_add;
      std::string activation;
      if (Node* act = only_user(*bias_add);
          act && act->control_inputs.empty() && (act->op == &ops::op::Relu() || act->op == &ops::op::Relu6())) {
        activation = act->op->name;
        last = act;
      }
      ops::Attrs attrs;
      for (int k = 0; k < kConvAttrsKept; ++k) attrs.push(conv.attrs[k]);
      attrs.push(activation);
      Node* fused = g.add_node(ops::op::KilnFusedConv2D(), last->name + "/fused",
                               {conv.inputs[0], conv.inputs[1], bias}, std::move(attrs));
      repl[{last, 0}] = Output{fused, 0};
    }
    g.replace_uses(repl);
    return !repl.empty();
  }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_contraction() { return std::make_unique<FuseContraction>(); }

}  // namespace kiln::optimize
