// refine_shapes: the shapes a graph's own shape arithmetic spells out. Keras's Dense on a
// sequence (Tensordot) reshapes its product by a shape built at run time — Shape(x), a
// GatherV2 of its free dimensions, a ConcatV2 with the units — so the Reshape's inferred
// shape is [?, ?, ?] although all but the batch are fixed. TensorFlow's shape inference
// evaluates such shape tensors partially; this pass does the same for Const, Shape, Cast,
// Identity, Pack, ConcatV2 and GatherV2, gives each Reshape fed by one the dimensions it
// knows, and infers the nodes after it again (keeping what they knew: a shape only gets more
// specific). Fusions then see the Dense output's channels: its BiasAdd joins the activation
// after it (fuse_elementwise).
#include <map>
#include <optional>
#include <utility>

#include "eager/execute.h"
#include "ops/helpers.h"
#include "ops/op_list.h"
#include "optimize/pass.h"

namespace kiln::optimize {
namespace {

using graph::Node;
using graph::Output;

// An int32/int64 scalar or vector whose elements are known where >= 0 (-1: unknown).
struct Partial {
  Dims v;
  bool scalar = false;
};

constexpr int kMaxDepth = 16;  // shape arithmetic is shallow; deeper chains stay unknown

std::optional<std::vector<int64_t>> const_ints(const Output& o) {
  const ops::TensorImpl* t = o.node->const_value();
  if (!t || (t->dtype != DType::Int32 && t->dtype != DType::Int64) || t->dims.size() > 1) return std::nullopt;
  std::vector<int64_t> v(static_cast<size_t>(t->num_elements));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = t->dtype == DType::Int32 ? static_cast<const int32_t*>(t->data)[i] : static_cast<const int64_t*>(t->data)[i];
  return v;
}

// What is known of an integer output of rank 0 or 1 whose rank and length are known.
std::optional<Partial> unknown_of(const Output& o) {
  const TensorShape& s = o.node->out_shapes[o.index];
  if (s.unknown_rank() || s.rank() > 1) return std::nullopt;
  if (s.rank() == 0) return Partial{.v = {-1}, .scalar = true};
  if (s.dims()[0] < 0) return std::nullopt;
  return Partial{.v = Dims(static_cast<size_t>(s.dims()[0]), -1), .scalar = false};
}

std::optional<Partial> partial_of(const Output& o, int depth) {
  if (depth > kMaxDepth) return unknown_of(o);
  const Node& n = *o.node;
  if (const auto c = const_ints(o)) {
    Partial p{.v = Dims(c->begin(), c->end()), .scalar = n.out_shapes[0].rank() == 0};
    for (int64_t& x : p.v) x = std::max<int64_t>(x, -1);
    return p;
  }
  if (n.op == &ops::op::Shape()) {
    const TensorShape& s = n.inputs[0].node->out_shapes[n.inputs[0].index];
    if (s.unknown_rank()) return std::nullopt;
    return Partial{.v = s.dims(), .scalar = false};
  }
  if (n.op == &ops::op::Cast() || n.op == &ops::op::Identity()) return partial_of(n.inputs[0], depth + 1);
  if (n.op == &ops::op::Pack()) {
    Partial p;
    for (const Output& in : n.inputs) {
      const auto e = partial_of(in, depth + 1);
      if (!e || !e->scalar) return unknown_of(o);
      p.v.push_back(e->v[0]);
    }
    return p;
  }
  if (n.op == &ops::op::ConcatV2() && n.inputs.size() >= 2) {
    const auto axis = const_ints(n.inputs.back());
    if (!axis || axis->size() != 1 || ((*axis)[0] != 0 && (*axis)[0] != -1)) return unknown_of(o);
    Partial p;
    for (size_t i = 0; i + 1 < n.inputs.size(); ++i) {
      const auto e = partial_of(n.inputs[i], depth + 1);
      if (!e || e->scalar) return unknown_of(o);
      for (int64_t x : e->v) p.v.push_back(x);
    }
    return p;
  }
  if (n.op == &ops::op::GatherV2() && n.inputs.size() == 3) {
    const auto axis = const_ints(n.inputs[2]);
    const auto indices = const_ints(n.inputs[1]);
    const auto params = partial_of(n.inputs[0], depth + 1);
    if (!axis || axis->size() != 1 || (*axis)[0] != 0 || !indices || !params || params->scalar) return unknown_of(o);
    Partial p{.v = {}, .scalar = n.inputs[1].node->out_shapes[n.inputs[1].index].rank() == 0};
    const auto size = static_cast<int64_t>(params->v.size());
    for (int64_t i : *indices) {
      if (i < 0 || i >= size) return unknown_of(o);  // the kernel's error, at run time
      p.v.push_back(params->v[static_cast<size_t>(i)]);
    }
    return p;
  }
  return unknown_of(o);
}

// `now` with the dimensions `more` knows and it does not; `now` itself where they disagree
// in rank or in a known dimension (then the graph fails at run time, as it would have).
bool refine(TensorShape& now, const TensorShape& more) {
  if (more.unknown_rank()) return false;
  if (now.unknown_rank()) {
    now = more;
    return true;
  }
  if (now.rank() != more.rank()) return false;
  Dims d = now.dims();
  bool changed = false;
  for (size_t k = 0; k < d.size(); ++k) {
    const int64_t m = more.dims()[k];
    if (m < 0) continue;
    if (d[k] >= 0 && d[k] != m) return false;
    if (d[k] < 0) {
      d[k] = m;
      changed = true;
    }
  }
  if (changed) now = TensorShape(std::move(d));
  return changed;
}

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
      if (node.op == &ops::op::Reshape() && node.inputs.size() == 2 && !node.out_shapes[0].is_fully_defined() &&
          !node.inputs[1].node->const_value()) {
        if (const auto p = partial_of(node.inputs[1], 0); p && !p->scalar) {
          Dims d = p->v;
          refined[id] |= refine(node.out_shapes[0], TensorShape(std::move(d)));
        }
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
      if (ctx.out(i).dtype == node.out_dtypes[i]) changed |= refine(node.out_shapes[i], ctx.out(i).shape);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_refine_shapes() { return std::make_unique<RefineShapes>(); }

}  // namespace kiln::optimize
