// fuse_softmax_scale: Softmax(Mul(x, c)) with c a scalar — attention's scores scaled by
// 1/sqrt(key depth), as Keras's MultiHeadAttention writes them — becomes one
// KilnScaledSoftmax, which scales each row as it reads it: the scaled scores are not
// written out and read back (at batch 32, a [32, 4, 128, 128] float32 tensor: 8 MB each
// way). Each product rounds as the Mul's does, so results are bit for bit the two ops'.
// Float32 and float64; the Mul's value is read by the Softmax only.
#include "optimize/pass.h"

namespace kiln::optimize {
namespace {

class FuseSoftmaxScale : public Pass {
 public:
  const char* name() const override { return "fuse_softmax_scale"; }
  bool run(graph::Graph& g, const PassContext&) override {
    const UseCounts uses(g);
    Replacements repl;
    const int n = g.num_nodes();
    for (int id = 0; id < n; ++id) {
      Node& softmax = *g.node(id);
      if (softmax.op != &op::Softmax() || !softmax.control_inputs.empty()) continue;
      Node& mul = *softmax.inputs[0].node;
      const DType dtype = softmax.out_dtypes[0];
      const TensorShape& shape = softmax.out_shapes[0];
      if (mul.op != &op::Mul() || mul.stateful || !uses.used_once(mul) || shape.unknown_rank() || shape.rank() < 1 ||
          (dtype != DType::Float32 && dtype != DType::Float64))
        continue;
      // The scale is the second operand (Keras's order) or the first; the other keeps the
      // Mul's shape: the scale's rank is at most the output's.
      for (int k : {1, 0}) {
        if (!is_scalar_of(mul.inputs[k], dtype, shape.rank())) continue;
        const Output logits = mul.inputs[1 - k];
        const TensorShape& ls = logits.node->out_shapes[logits.index];
        if (ls.unknown_rank() || ls.rank() != shape.rank()) continue;
        Node* fused = g.add_node(op::KilnScaledSoftmax(), softmax.name + "/scaled", {logits, mul.inputs[k]}, {});
        repl[{&softmax, 0}] = Output{fused, 0};
        break;
      }
    }
    g.replace_uses(repl);
    return !repl.empty();
  }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_softmax_scale() { return std::make_unique<FuseSoftmaxScale>(); }

}  // namespace kiln::optimize
