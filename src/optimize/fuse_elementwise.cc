// fuse_elementwise: a chain or tree of elementwise ops over one shape becomes one
// KilnFusedElementwise node: one pass over memory, no intermediate buffers. Operands other
// than the group's shape are single elements, vectors along the last dimension (a
// BatchNormalization's per-channel scale and shift, shape [C] or [1, ..., 1, C]) or one
// element per row (a layer norm's mean and scale, [B, T, 1] against [B, T, C]). A shape
// may have unknown dimensions (a served model's batch): the fused kernel then takes its
// inputs' broadcast shape at run time, as the separate ops would (ops/fused.cc). A producer
// joins its consumer's group only if nothing outside the group uses it. An operand that is
// a run of columns of a wider tensor (Split along the last dimension, a StridedSlice of the
// last dimension's columns: an LSTM's four gates out of one product) is read through a
// window of that tensor, so the slicing step and its copy go when nothing else needs them.
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

// Where `o` (of a group's shape, last dimension `width`) is columns [offset, offset + width)
// of a tensor of the same rank whose other dimensions are o's: that tensor and the window.
struct ColumnWindow {
  Output source;
  int64_t columns = 0, offset = 0;
};
const int kSplitNum = ops::attr_index(ops::op::Split(), "num_split");
const int kSliceBeginMask = ops::attr_index(ops::op::StridedSlice(), "begin_mask");
const int kSliceEndMask = ops::attr_index(ops::op::StridedSlice(), "end_mask");
const int kSliceEllipsisMask = ops::attr_index(ops::op::StridedSlice(), "ellipsis_mask");
const int kSliceNewAxisMask = ops::attr_index(ops::op::StridedSlice(), "new_axis_mask");
const int kSliceShrinkMask = ops::attr_index(ops::op::StridedSlice(), "shrink_axis_mask");

bool column_window(const Output& o, const Dims& dims, ColumnWindow* w) {
  const Node& n = *o.node;
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (rank == 0 || dims.back() <= 0 || !n.control_inputs.empty()) return false;
  const int64_t width = dims.back();
  std::vector<int64_t> v;
  if (n.op == &ops::op::Split()) {
    const Output value = n.inputs[1];
    const TensorShape& vs = value.node->out_shapes[value.index];
    v = const_ints(n.inputs[0]);
    if (vs.unknown_rank() || vs.rank() != rank || v.size() != 1) return false;
    const int64_t axis = v[0] < 0 ? v[0] + rank : v[0];
    const int64_t columns = vs.dims().back(), parts = n.attrs.i(kSplitNum);
    if (axis != rank - 1 || columns <= width || parts <= 0 || columns != parts * width) return false;
    *w = ColumnWindow{.source = value, .columns = columns, .offset = o.index * width};
    return true;
  }
  if (n.op != &ops::op::StridedSlice() || n.attrs.i(kSliceEllipsisMask) || n.attrs.i(kSliceNewAxisMask) ||
      n.attrs.i(kSliceShrinkMask))
    return false;
  const Output value = n.inputs[0];
  const TensorShape& vs = value.node->out_shapes[value.index];
  const std::vector<int64_t> begin = const_ints(n.inputs[1]), end = const_ints(n.inputs[2]);
  v = const_ints(n.inputs[3]);
  if (vs.unknown_rank() || vs.rank() != rank || static_cast<int64_t>(begin.size()) != rank ||
      static_cast<int64_t>(end.size()) != rank || static_cast<int64_t>(v.size()) != rank)
    return false;
  const int64_t begin_mask = n.attrs.i(kSliceBeginMask), end_mask = n.attrs.i(kSliceEndMask);
  for (int64_t k = 0; k < rank; ++k) {
    if (v[static_cast<size_t>(k)] != 1) return false;
    // Every other dimension whole: both masks, or from 0 to a known size the output has too.
    const bool whole =
        (begin_mask >> k & 1 && end_mask >> k & 1) ||
        (begin[static_cast<size_t>(k)] == 0 && vs.dim(k) >= 0 && dims[static_cast<size_t>(k)] == vs.dim(k));
    if (k < rank - 1 && !whole) return false;
  }
  const int64_t columns = vs.dims().back();
  if (columns <= width) return false;
  // The last dimension's start as the kernel takes it (negative from the end, clamped).
  int64_t offset = begin_mask >> (rank - 1) & 1 ? 0 : begin.back();
  if (offset < 0) offset += columns;
  offset = std::clamp<int64_t>(offset, 0, columns);
  int64_t stop = end_mask >> (rank - 1) & 1 ? columns : end.back();
  if (stop < 0) stop += columns;
  stop = std::clamp<int64_t>(stop, 0, columns);
  if (stop - offset != width) return false;
  *w = ColumnWindow{.source = value, .columns = columns, .offset = offset};
  return true;
}

class FuseElementwise : public Pass {
 public:
  const char* name() const override { return "fuse_elementwise"; }
  bool run(graph::Graph& g, const PassContext&) override {
    const int n = g.num_nodes();
    const Users users(g);
    std::vector<char> escapes(n, 0);
    for (const Output& o : g.outputs) escapes[o.node->id] = 1;
    std::vector<int> group(n, -1);
    Replacements repl;
    for (int id = n - 1; id >= 0; --id) {
      Node& root = *g.node(id);
      if (group[id] >= 0 || !fusable(root) || !operands_ok(root, root.out_shapes[0].dims())) continue;
      const Dims dims = root.out_shapes[0].dims();
      std::vector<Node*> members;
      members.reserve(ops::kMaxFusedTemps);
      members.push_back(&root);
      group[id] = id;
      for (size_t k = 0; k < members.size(); ++k)
        for (const Output& in : members[k]->inputs) {
          Node& p = *in.node;
          if (p.id >= n || group[p.id] >= 0 || !fusable(p) || escapes[p.id]) continue;
          if (p.out_shapes[0].dims() != dims || !operands_ok(p, dims)) continue;
          if (members.size() >= static_cast<size_t>(ops::kMaxFusedTemps)) continue;  // kernel limit
          const auto readers = users.of(p);
          const bool inside = std::all_of(readers.begin(), readers.end(),
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
      std::vector<int64_t> program;
      program.reserve(2 + 4 * members.size());
      program.push_back(num_inputs);
      program.push_back(num_inputs + static_cast<int64_t>(members.size()));
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
      // Operands that are columns of a wider tensor read it through a window (the kernel's
      // limit of them; the rest stay the slicing step's copies).
      std::vector<int64_t> windows;
      for (size_t i = 0, used = 0; i < external.size() && used < ops::kMaxFusedWindowInputs; ++i) {
        ColumnWindow w;
        const TensorShape& s = external[i].node->out_shapes[external[i].index];
        if (s.unknown_rank() || s.dims() != dims || !column_window(external[i], dims, &w)) continue;
        if (windows.empty()) windows.assign(2 * external.size(), 0);
        windows[2 * i] = w.columns;
        windows[2 * i + 1] = w.offset;
        external[i] = w.source;
        ++used;
      }
      Node* fused = g.add_node(ops::op::KilnFusedElementwise(), root.name + "/fused", external,
                               ops::Attrs{std::move(program), TensorShape(dims), std::move(windows)});
      repl[{&root, 0}] = Output{fused, 0};
    }
    g.replace_uses(repl);
    return !repl.empty();
  }
};
}  // namespace

std::unique_ptr<Pass> make_fuse_elementwise() { return std::make_unique<FuseElementwise>(); }

}  // namespace kiln::optimize
