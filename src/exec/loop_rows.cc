#include "exec/loop_rows.h"

#include <algorithm>
#include <atomic>

#include "core/object_value.h"
#include "exec/batch_split.h"
#include "exec/env_switch.h"
#include "ops/helpers.h"
#include "ops/op_list.h"
#include "ops/tensor_list.h"

namespace kiln::exec {

namespace {

using ops::RowKind;

// A value's kind in the analysis: RowKind, or a list of rows.
struct Kind {
  RowKind row = RowKind::kFree;
  bool list = false;  // a TensorList whose items are rows (row is kRows)
  bool operator==(const Kind& k) const { return row == k.row && list == k.list; }
};
constexpr Kind kFreeKind{};
constexpr Kind kRowsKind{.row = RowKind::kRows};
constexpr Kind kListKind{.row = RowKind::kRows, .list = true};
constexpr Kind kOtherKind{.row = RowKind::kOther};

Kind kind_of_var(LoopVar v) { return v == LoopVar::kFree ? kFreeKind : v == LoopVar::kRows ? kRowsKind : kListKind; }

// An element_shape input that leaves axis 0 open: a Const -1 (unknown rank) or a vector led by -1.
bool open_axis0(const graph::Output& o) {
  const ops::TensorImpl* v = o.node->const_value();
  if (!v || (v->dtype != DType::Int32 && v->dtype != DType::Int64) || v->dims.size() > 1) return false;
  const std::vector<int64_t> dims = ops::int_values(*v);
  return !dims.empty() && dims[0] == -1;
}

// What node `n`'s outputs are, given its inputs' kinds.
Kind node_kind(const graph::Node& n, const std::vector<Kind>& in) {
  bool free = true, list = false;
  for (const Kind& k : in) {
    if (k.row == RowKind::kOther) return kOtherKind;
    free &= k == kFreeKind;
    list |= k.list;
  }
  if (free) return kFreeKind;
  namespace op = ops::op;
  if (n.op == &op::Identity() && in.size() == 1) return in[0];
  if (n.op == &op::TensorListGetItem() && in.size() == 3)
    return in[0].list && in[1] == kFreeKind && in[2] == kFreeKind && open_axis0(n.inputs[2]) ? kRowsKind : kOtherKind;
  if (n.op == &op::TensorListSetItem() && in.size() == 3)
    return in[0].list && in[1] == kFreeKind && in[2] == kRowsKind ? kListKind : kOtherKind;
  if (n.op == &op::TensorListLength() && in.size() == 1) return in[0].list ? kFreeKind : kOtherKind;
  if (list) return kOtherKind;
  std::vector<RowKind> rows(in.size());
  for (size_t i = 0; i < in.size(); ++i) rows[i] = in[i].row;
  return {.row = row_kind_of(n, rows)};
}

// The kinds of `g`'s results when its feeds are `feeds`; kOther for all when a step may not
// run once per block (random numbers, state changes; reading a variable is harmless).
std::vector<Kind> result_kinds(const graph::Graph& g, const std::vector<Kind>& feeds) {
  std::vector<Kind> kind(static_cast<size_t>(g.num_nodes()), kFreeKind);
  for (size_t i = 0; i < g.inputs.size(); ++i) kind[static_cast<size_t>(g.inputs[i]->id)] = feeds[i];
  std::vector<Kind> in;
  for (const auto& node : g.nodes()) {
    const graph::Node& n = *node;
    if ((n.stateful || n.op->is_stateful()) && n.op != &ops::op::ReadVariableOp())
      return std::vector<Kind>(g.outputs.size(), kOtherKind);
    if (n.op == &ops::op::Placeholder()) continue;
    in.clear();
    for (const graph::Output& o : n.inputs) in.push_back(kind[static_cast<size_t>(o.node->id)]);
    kind[static_cast<size_t>(n.id)] = node_kind(n, in);
  }
  std::vector<Kind> out;
  for (const graph::Output& o : g.outputs) {
    // A node's kind is every output's (row_kind_of).
    out.push_back(kind[static_cast<size_t>(o.node->id)]);
  }
  return out;
}

// Whether body result i is feed i passed along (through Identity nodes).
bool passes_along(const graph::Graph& body, size_t i) {
  graph::Output o = body.outputs[i];
  while (o.node->op == &ops::op::Identity() && o.node->inputs.size() == 1) o = o.node->inputs[0];
  return o.index == 0 && o.node == body.inputs[i];
}

}  // namespace

LoopRows analyze_loop_rows(const graph::Graph& cond, const graph::Graph& body) {
  LoopRows r;
  const size_t n = body.inputs.size();
  if (n == 0 || body.outputs.size() != n || cond.inputs.size() != n || cond.outputs.size() != 1) return r;
  // Candidates: lists, and tensors of rank >= 1 whose axis 0 is open; what comes out free is
  // free (a counter vector), and the analysis runs again. (A variable the body passes along
  // unchanged may be rows too: the sequence a recurrent layer reads.)
  r.vars.assign(n, LoopVar::kFree);
  for (size_t i = 0; i < n; ++i) {
    const graph::Node& feed = *body.inputs[i];
    // A block's rows must fit the feeds' shapes: axis 0 open in the body and the condition.
    const TensorShape& s = feed.out_shapes[0];
    const TensorShape& cs = cond.inputs[i]->out_shapes[0];
    const bool open = (s.unknown_rank() || (s.rank() >= 1 && s.dim(0) < 0)) &&
                      (cs.unknown_rank() || (cs.rank() >= 1 && cs.dim(0) < 0));
    if (feed.out_dtypes[0] == DType::Variant)
      r.vars[i] = LoopVar::kListRows;
    else if (detail::has_values(feed.out_dtypes[0]) && open)
      r.vars[i] = LoopVar::kRows;
  }
  std::vector<Kind> feeds(n);
  for (size_t round = 0; round <= n; ++round) {
    for (size_t i = 0; i < n; ++i) feeds[i] = kind_of_var(r.vars[i]);
    const std::vector<Kind> results = result_kinds(body, feeds);
    bool changed = false;
    for (size_t i = 0; i < n; ++i) {
      if (results[i] == feeds[i]) continue;
      if (results[i] != kFreeKind) return LoopRows{};  // rows from free, or a value no block can compute
      r.vars[i] = LoopVar::kFree;
      changed = true;
    }
    if (changed) continue;
    bool batched = false;
    for (LoopVar v : r.vars) batched |= v != LoopVar::kFree;
    if (!batched || result_kinds(cond, feeds)[0] != kFreeKind) return LoopRows{};
    r.separable = true;
    for (size_t i = 0; i < n; ++i) r.unchanged.push_back(passes_along(body, i));
    return r;
  }
  return LoopRows{};
}

int64_t loop_batch(const LoopRows& rows, const std::vector<Tensor>& vars) {
  if (!rows.separable || vars.size() != rows.vars.size()) return 0;
  int64_t batch = -1;
  auto agree = [&](int64_t b) {
    if (b < 0) return true;
    if (batch < 0) batch = b;
    return b == batch;
  };
  for (size_t i = 0; i < vars.size(); ++i) {
    const ops::TensorImpl* t = vars[i].impl();
    if (rows.vars[i] == LoopVar::kFree) continue;
    if (!t || t->symbolic) return 0;
    if (rows.vars[i] == LoopVar::kRows) {
      if (t->dims.empty() || !detail::has_values(t->dtype) || detail::holds_objects(t->dtype) || !agree(t->dims[0]))
        return 0;
      continue;
    }
    int64_t b;
    if (!ops::list_batch(*t, &b) || !agree(b)) return 0;
  }
  return std::max<int64_t>(batch, 0);
}

std::vector<Tensor> vars_for_rows(const LoopRows& rows, const std::vector<Tensor>& vars, int64_t first, int64_t count) {
  std::vector<Tensor> out(vars.size());
  for (size_t i = 0; i < vars.size(); ++i) switch (rows.vars[i]) {
      case LoopVar::kFree:
        out[i] = vars[i];
        break;
      case LoopVar::kRows:
        out[i] = ops::rows_of(*vars[i].impl(), first, count);
        break;
      case LoopVar::kListRows:
        out[i] = ops::list_rows(*vars[i].impl(), first, count);
        break;
    }
  return out;
}

std::vector<Tensor> stitch_vars(const LoopRows& rows, const std::vector<std::vector<Tensor>>& blocks,
                                const std::vector<Tensor>& start) {
  std::vector<Tensor> out(rows.vars.size());
  std::vector<const ops::TensorImpl*> parts(blocks.size());
  for (size_t i = 0; i < out.size(); ++i) {
    if (rows.vars[i] == LoopVar::kFree) {
      out[i] = blocks[0][i];
      continue;
    }
    if (rows.unchanged[i]) {
      out[i] = start[i];
      continue;
    }
    for (size_t b = 0; b < blocks.size(); ++b) {
      parts[b] = blocks[b][i].impl();
      if (!parts[b]) throw InternalError("a block of a loop run by rows lost a variable");
    }
    out[i] = rows.vars[i] == LoopVar::kRows ? ops::stitch_rows(parts) : ops::stitch_lists(parts);
  }
  return out;
}

namespace {
std::atomic<int64_t> g_loops_by_rows{0};
}
int64_t loops_run_by_rows() { return g_loops_by_rows.load(std::memory_order_relaxed); }
void count_loop_run_by_rows() { g_loops_by_rows.fetch_add(1, std::memory_order_relaxed); }

bool loop_rows_enabled() {
  static const bool enabled = switched_on("KILN_LOOP_ROWS");
  return enabled;
}

}  // namespace kiln::exec
