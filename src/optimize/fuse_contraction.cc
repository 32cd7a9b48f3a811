// fuse_contraction: a convolution (Conv2D, DepthwiseConv2dNative) and the chain of
// per-channel ops after it become one fused node (KilnFusedConv2D,
// KilnFusedDepthwiseConv2dNative), so those ops apply to each block of the convolution's
// output while it is still in cache, instead of each in another pass over memory
// (TensorFlow's remapper makes _FusedConv2D the same way). The chain: BiasAdd, Mul, AddV2 or
// Sub by a vector of the output's channels, in any number up to the kernel's limit, then
// optionally Relu, Relu6 or a swish — Conv2D -> BiasAdd -> Relu, and Keras's
// BatchNormalization at inference, Conv2D -> [BiasAdd ->] Mul(scale) -> AddV2(shift) ->
// Relu. The swish is Keras's (tf.nn.silu, EfficientNet's activation), three ops: Mul(x, beta)
// -> Sigmoid -> Mul(x, .), the value x read twice (its custom gradient's IdentityN is gone:
// remove_identity). A residual
// connection's AddV2 of a float tensor of the output's shape joins too (ResNet's
// ... -> AddV2(shift) -> AddV2(shortcut) -> Relu), so the block's output is written once
// instead of being read and written again by the addition. The fused kernel does
// the same arithmetic in the same order (ops/conv_epilogue.h), so results are bit for bit
// those of the separate ops. A node joins only if its one user is the next step and nothing
// else (a graph output, a control edge) needs its value.
#include "ops/channel_vector.h"
#include "ops/conv_epilogue.h"
#include "ops/helpers.h"
#include "ops/op_list.h"
#include "optimize/pass.h"

namespace kiln::optimize {
namespace {

using ops::conv::EpilogueOp;

// The convolution's attrs in the fused row's order: strides, padding, explicit_paddings,
// data_format, dilations (Conv2D's use_cudnn_on_gpu is dropped), then fused_ops.
constexpr int kConvAttrsKept = 5;

// `v` is a per-channel vector of the rank-4 output's dtype.
bool per_channel(const Output& v, int64_t channels, DType dtype) {
  const TensorShape& s = v.node->out_shapes[v.index];
  return v.node->out_dtypes[v.index] == dtype && !s.unknown_rank() && ops::is_channel_vector(s.dims(), channels, 4);
}

// `v` is a float32 or float64 tensor of `out`'s shape, as far as the graph knows: every size
// known and equal but the batch, which may be unknown on both sides (a served model's). At
// run time the kernel refuses batches that differ (the AddV2 would have broadcast them), which
// a graph whose two operands come from one input never has. 16-bit floats stay separate: the
// fused steps would round once, in float32, where the ops round at each step.
bool output_sized(const Output& v, const TensorShape& out, DType dtype) {
  const TensorShape& s = v.node->out_shapes[v.index];
  if (v.node->out_dtypes[v.index] != dtype || (dtype != DType::Float32 && dtype != DType::Float64) ||
      s.unknown_rank() || s.dims().size() != out.dims().size())
    return false;
  for (size_t k = 0; k < s.dims().size(); ++k)
    if (s.dims()[k] != out.dims()[k] || (k > 0 && s.dims()[k] < 0)) return false;
  return true;
}

// The epilogue step `next` is, when `prev` is its data operand: which op, and its vector (or
// for Add, its tensor of the output's shape `out`).
bool as_epilogue_step(const Node& next, const Node& prev, const TensorShape& out, DType dtype, EpilogueOp& op,
                      Output& vector) {
  const int64_t channels = out.dims().back();
  if (!next.control_inputs.empty() || next.inputs.empty()) return false;
  if (next.op == &ops::op::Relu() || next.op == &ops::op::Relu6()) {
    op = next.op == &ops::op::Relu() ? EpilogueOp::kRelu : EpilogueOp::kRelu6;
    return next.inputs[0].node == &prev;
  }
  if (next.inputs.size() != 2) return false;
  const bool commutes = next.op == &ops::op::Mul() || next.op == &ops::op::AddV2();
  const bool left = next.inputs[0].node == &prev;
  if (!left && !(commutes && next.inputs[1].node == &prev)) return false;
  vector = next.inputs[left ? 1 : 0];
  if (vector.node == &prev) return false;
  if (next.op == &ops::op::AddV2() && output_sized(vector, out, dtype) && next.out_shapes[0] == out) {
    op = EpilogueOp::kAdd;
    return true;
  }
  if (!per_channel(vector, channels, dtype)) return false;
  if (next.op == &ops::op::BiasAdd()) {
    const std::string& format = next.attrs.s(0);  // data_format: the channels are last only in NHWC
    op = EpilogueOp::kBiasAdd;
    return left && (format.empty() || format == "NHWC");
  }
  if (next.op == &ops::op::Sub()) {
    op = EpilogueOp::kSub;
    return left;
  }
  if (!commutes) return false;
  op = next.op == &ops::op::Mul() ? EpilogueOp::kMul : EpilogueOp::kAddV2;
  return true;
}

// `n` is a binary op waiting on nothing with `x` as exactly one of its operands: the other.
bool other_operand(const Node& n, const Node& x, Output& other) {
  if (n.inputs.size() != 2 || !n.control_inputs.empty()) return false;
  const bool left = n.inputs[0].node == &x, right = n.inputs[1].node == &x;
  if (left == right) return false;
  other = n.inputs[left ? 1 : 0];
  return true;
}

// The swish on the chain's value `x`, x * sigmoid(beta * x): x's two users are a Mul by a
// scalar beta, whose one user is a Sigmoid, whose one user is the other, Mul(x, sigmoid);
// or, without beta, Sigmoid(x) and Mul(x, sigmoid) (`beta` is then left empty). Float32 and
// float64 only: a 16-bit convolution's fused steps would round once, in float32. Returns the
// three nodes (the first Mul null without beta), or false.
struct Swish {
  Node *scale = nullptr, *sigmoid = nullptr, *product = nullptr;
  Output beta;
};
template <class OnlyUser>
bool as_swish(const Node& x, std::span<Node* const> users, DType dtype, OnlyUser only_user, Swish& out) {
  if ((dtype != DType::Float32 && dtype != DType::Float64) || users.size() != 2 || users[0] == users[1]) return false;
  for (int k = 0; k < 2; ++k) {
    Swish w{.product = users[1 - k], .beta = {}};
    Node* head = users[k];
    if (head->op == &ops::op::Sigmoid()) {
      w.sigmoid = head;
    } else if (head->op == &ops::op::Mul() && other_operand(*head, x, w.beta) && is_scalar_of(w.beta, dtype, 4)) {
      w.scale = head;
      w.sigmoid = only_user(*head);
    }
    if (!w.sigmoid || w.sigmoid->op != &ops::op::Sigmoid() || !w.sigmoid->control_inputs.empty() ||
        w.sigmoid->inputs[0].node != (w.scale ? w.scale : &x) || only_user(*w.sigmoid) != w.product)
      continue;
    Output s;
    if (w.product->op != &ops::op::Mul() || !other_operand(*w.product, x, s) || s.node != w.sigmoid) continue;
    out = w;
    return true;
  }
  return false;
}

// A scalar 1 of `dtype` (float32 or float64): the beta of a swish written without one.
Tensor one_of(DType dtype) {
  Tensor one(detail::make_concrete(dtype, {}));
  if (dtype == DType::Float64)
    *one.impl()->as<double>() = 1.0;
  else
    *one.impl()->as<float>() = 1.0f;
  return one;
}

class FuseContraction : public Pass {
 public:
  const char* name() const override { return "fuse_contraction"; }
  bool run(graph::Graph& g, const PassContext&) override {
    const int n = g.num_nodes();
    const Users users(g);
    std::vector<char> pinned(n, 0);  // a graph output or a control input: its value is needed
    for (const auto& node : g.nodes())
      for (const Node* c : node->control_inputs) pinned[c->id] = 1;
    for (const Output& o : g.outputs) pinned[o.node->id] = 1;
    // Nodes a chain took: a residual AddV2 of two convolutions' outputs (a ResNet block whose
    // shortcut is a convolution too) joins the first one's chain only, and the second's ends
    // before it.
    std::vector<char> taken(n, 0);
    auto only_user = [&](const Node& p) -> Node* {
      if (pinned[p.id] || users.of(p).size() != 1) return nullptr;
      return users.of(p)[0];
    };
    Replacements repl;
    for (int id = 0; id < n; ++id) {
      Node& conv = *g.node(id);
      const bool depthwise = conv.op == &ops::op::DepthwiseConv2dNative();
      if ((conv.op != &ops::op::Conv2D() && !depthwise) || !conv.control_inputs.empty()) continue;
      const TensorShape& out = conv.out_shapes[0];
      if (out.unknown_rank() || out.dims().size() != 4 || out.dims().back() < 0) continue;
      Node* last = &conv;
      std::string fused_ops;
      std::vector<Output> inputs = {conv.inputs[0], conv.inputs[1]};
      for (int steps = 0; steps < ops::conv::kMaxEpilogueSteps; ++steps) {
        Swish swish;
        if (!pinned[last->id] && as_swish(*last, users.of(*last), conv.out_dtypes[0], only_user, swish) &&
            !taken[swish.product->id] && !(swish.scale && taken[swish.scale->id]) && !taken[swish.sigmoid->id]) {
          for (Node* p : {swish.scale, swish.sigmoid, swish.product})
            if (p) taken[p->id] = 1;
          fused_ops += (fused_ops.empty() ? "" : ",") + std::string("Swish");
          inputs.push_back(swish.scale ? swish.beta
                                       : Output{g.add_const(one_of(conv.out_dtypes[0]), last->name + "/beta"), 0});
          last = swish.product;
          break;  // an activation ends the chain
        }
        Node* next = only_user(*last);
        EpilogueOp op;
        Output vector;
        if (!next || taken[next->id] || !as_epilogue_step(*next, *last, out, conv.out_dtypes[0], op, vector)) break;
        taken[next->id] = 1;
        fused_ops += (fused_ops.empty() ? "" : ",") + std::string(ops::conv::epilogue_op_name(op));
        if (ops::conv::takes_input(op)) inputs.push_back(vector);
        last = next;
        if (ops::conv::ends_chain(op)) break;  // an activation ends the chain
      }
      if (last == &conv) continue;
      ops::Attrs attrs;
      for (int k = 0; k < kConvAttrsKept; ++k) attrs.push(conv.attrs[k]);
      attrs.push(fused_ops);
      Node* fused = g.add_node(depthwise ? ops::op::KilnFusedDepthwiseConv2dNative() : ops::op::KilnFusedConv2D(),
                               last->name + "/fused", std::move(inputs), std::move(attrs));
      repl[{last, 0}] = Output{fused, 0};
    }
    g.replace_uses(repl);
    return !repl.empty();
  }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_contraction() { return std::make_unique<FuseContraction>(); }

}  // namespace kiln::optimize
