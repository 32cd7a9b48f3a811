// fuse_elementwise: a chain or tree of elementwise ops over one shape becomes one
// KilnFusedElementwise node: one pass over memory, no intermediate buffers. Operands other
// than the group's shape are single elements, vectors along the last dimension (a
// BatchNormalization's per-channel scale and shift, shape [C] or [1, ..., 1, C]) or one
// element per row (a layer norm's mean and scale, [B, T, 1] against [B, T, C]). A shape
// may have unknown dimensions (a served model's batch): the fused kernel then takes its
// inputs' broadcast shape at run time, as the separate ops would (ops/fused.cc). A producer
// joins its consumer's group only if nothing outside the group uses it.
#include <algorithm>
#include <string>

#include "ops/channel_vector.h"
#include "ops/fused.h"
#include "ops/op_list.h"
#include "ops/widen.h"
#include "optimize/pass.h"

namespace kiln::optimize {
namespace {

// The op whose chunk function computes n: its own, or AddV2's for a BiasAdd over the last
// dimension (NHWC; its [C] bias a per-channel operand), so a Dense layer's bias joins the
// activation or residual Add after it where the MatMul before it could not take it (Keras's
// Tensordot puts a Reshape between them).
const ops::OpDef* chunk_op(const Node& n) {
  if (n.op == &ops::op::BiasAdd()) {
    const std::string& format = n.attrs.s(0);  // data_format
    return format.empty() || format == "NHWC" ? &ops::op::AddV2() : nullptr;
  }
  return n.op;
}

// Chunk functions compute the dtypes an op has kernels of its own for; the 16-bit floats run
// through float32 (ops/widen.h) and stay unfused, and so do strings (fused scratch memory
// holds no object references) and complex numbers (the fused kernel computes real types).
bool fusable(const Node& n) {
  const ops::OpDef* op = chunk_op(n);
  return op && op->chunk && !n.stateful && detail::has_values(n.out_dtypes[0]) && !is_complex(n.out_dtypes[0]) &&
         n.control_inputs.empty() && n.num_outputs() == 1 && op->kernel_for(n.out_dtypes[0]) != &ops::run_widened &&
         !n.out_shapes[0].unknown_rank() && ops::fusable_index(op) >= 0;
}

// How a group over `dims` reads an operand of shape `s`.
enum class Operand { kFull, kScalar, kChannels, kRows, kNone };
Operand operand_kind(const TensorShape& s, const Dims& dims) {
  if (s.unknown_rank()) return Operand::kNone;
  const Dims& d = s.dims();
  if (d == dims) return Operand::kFull;
  if (ops::is_row_vector(d, dims)) return Operand::kRows;
  if (!s.is_fully_defined()) return Operand::kNone;
  int64_t count = 1;
  for (int64_t x : d) count *= x;
  if (count == 1) return Operand::kScalar;
  if (dims.empty() || !ops::is_channel_vector(d, dims.back(), dims.size())) return Operand::kNone;
  return Operand::kChannels;
}

bool operands_ok(const Node& n, const Dims& dims) {
  for (const Output& in : n.inputs) {
    if (operand_kind(in.node->out_shapes[in.index], dims) == Operand::kNone) return false;
    if (in.node->out_dtypes[in.index] != n.out_dtypes[0]) return false;
  }
  return true;
}

class FuseElementwise : public Pass {
 public:
  const char* name() const override { return "fuse_elementwise"; }
  bool run(graph::Graph& g, const PassContext&) override {
    const int n = g.num_nodes();
    std::vector<std::vector<const Node*>> users(n);
    std::vector<char> escapes(n, 0);
    for (const auto& node : g.nodes())
      for (const Output& in : node->inputs) users[in.node->id].push_back(node.get());
    for (const Output& o : g.outputs) escapes[o.node->id] = 1;
    std::vector<int> group(n, -1);
    Replacements repl;
    for (int id = n - 1; id >= 0; --id) {
      Node& root = *g.node(id);
      if (group[id] >= 0 || !fusable(root) || !operands_ok(root, root.out_shapes[0].dims())) continue;
      const Dims dims = root.out_shapes[0].dims();
      std::vector<Node*> members{&root};
      group[id] = id;
      for (size_t k = 0; k < members.size(); ++k)
        for (const Output& in : members[k]->inputs) {
          Node& p = *in.node;
          if (p.id >= n || group[p.id] >= 0 || !fusable(p) || escapes[p.id]) continue;
          if (p.out_shapes[0].dims() != dims || !operands_ok(p, dims)) continue;
          if (members.size() >= static_cast<size_t>(ops::kMaxFusedTemps)) continue;  // kernel limit
          const bool inside = std::all_of(users[p.id].begin(), users[p.id].end(),
                                          [&](const Node* u) { return u->id < n && group[u->id] == id; });
          if (!inside) continue;
          members.push_back(&p);
          group[p.id] = id;
        }
      if (members.size() < 2) {
        group[id] = -1;
        continue;
      }
      std::sort(members.begin(), members.end(), [](const Node* a, const Node* b) { return a->id < b->id; });
      std::vector<Output> external;
      auto reg_of_external = [&](const Output& o) {
        for (size_t i = 0; i < external.size(); ++i)
          if (external[i] == o) return static_cast<int64_t>(i);
        external.push_back(o);
        return static_cast<int64_t>(external.size() - 1);
      };
      for (Node* m : members)
        for (const Output& in : m->inputs)
          if (!(in.node->id < n && group[in.node->id] == id)) reg_of_external(in);
      const int64_t num_inputs = static_cast<int64_t>(external.size());
      if (num_inputs + static_cast<int64_t>(members.size()) > ops::kMaxFusedRegisters) {
        for (Node* m : members) group[m->id] = -1;
        continue;
      }
      std::vector<int64_t> program{num_inputs, num_inputs + static_cast<int64_t>(members.size())};
      auto reg_of = [&](const Output& o) -> int64_t {
        for (size_t k = 0; k < members.size(); ++k)
          if (members[k] == o.node) return num_inputs + static_cast<int64_t>(k);
        return reg_of_external(o);
      };
      for (size_t k = 0; k < members.size(); ++k) {
        const Node& m = *members[k];
        program.push_back(ops::fusable_index(chunk_op(m)));
        program.push_back(num_inputs + static_cast<int64_t>(k));
        program.push_back(reg_of(m.inputs[0]));
        program.push_back(m.inputs.size() > 1 ? reg_of(m.inputs[1]) : -1);
      }
      Node* fused = g.add_node(ops::op::KilnFusedElementwise(), root.name + "/fused", external,
                               ops::Attrs{std::move(program), TensorShape(dims)});
      repl[{&root, 0}] = Output{fused, 0};
    }
    g.replace_uses(repl);
    return !repl.empty();
  }
};
}  // namespace

std::unique_ptr<Pass> make_fuse_elementwise() { return std::make_unique<FuseElementwise>(); }

}  // namespace kiln::optimize
