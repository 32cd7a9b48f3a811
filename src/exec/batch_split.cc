#include "exec/batch_split.h"

#include <algorithm>

#include "core/object_value.h"
#include "exec/env_switch.h"
#include "ops/batch_rows.h"
#include "ops/op_list.h"

namespace kiln::exec {

using ops::RowKind;

RowKind row_kind_of(const graph::Node& n, const std::vector<RowKind>& kinds) {
  bool batch = false;
  for (RowKind k : kinds) {
    if (k == RowKind::kOther) return RowKind::kOther;
    batch |= k != RowKind::kFree;
  }
  if (!batch) return RowKind::kFree;
  if (n.num_outputs() != 1 && !n.op->rows) return RowKind::kOther;  // the traits speak for output 0 only
  std::vector<ops::InputInfo> inputs;
  inputs.reserve(n.inputs.size());
  for (const graph::Output& o : n.inputs) inputs.push_back(graph::input_info(o));
  const ops::RowsContext c = {.op = *n.op,
                              .inputs = inputs.data(),
                              .kinds = kinds.data(),
                              .num_inputs = static_cast<int>(kinds.size()),
                              .attrs = n.attrs,
                              .out_rank = n.out_shapes[0].rank()};
  const RowKind k = n.op->rows ? n.op->rows(c) : ops::rows_by_traits(c);
  return k == RowKind::kRows && c.out_rank < 1 ? RowKind::kOther : k;
}

namespace {

// One row of node `n`'s output 0, in bytes; 0 if a dim other than the batch is unknown.
int64_t row_bytes(const graph::Node& n) {
  const TensorShape& s = n.out_shapes[0];
  if (s.rank() < 1) return 0;
  double bytes = static_cast<double>(dtype_size(n.out_dtypes[0]));  // a double: no overflow to guard
  for (int i = 1; i < s.rank(); ++i) {
    if (s.dim(i) < 0) return 0;
    bytes *= static_cast<double>(s.dim(i));
  }
  return static_cast<int64_t>(std::min(bytes, 1e15));
}

}  // namespace

BatchSplit analyze_batch_split(const graph::Graph& g) {
  BatchSplit split;
  if (g.inputs.empty() || g.outputs.empty()) return split;
  std::vector<RowKind> kind(static_cast<size_t>(g.num_nodes()), RowKind::kFree);
  bool any_batched = false, windowed = false;
  int64_t largest_row = 0;  // bytes of one row of the largest batched value (of known dims)
  for (const graph::Node* in : g.inputs) {
    const TensorShape& s = in->out_shapes[0];
    const bool batched = s.rank() >= 1 && s.dim(0) < 0;
    if (batched && detail::holds_objects(in->out_dtypes[0])) return split;  // rows are copied as plain bytes
    split.batched_feed.push_back(batched);
    kind[static_cast<size_t>(in->id)] = batched ? RowKind::kRows : RowKind::kFree;
    any_batched |= batched;
  }
  if (!any_batched) return split;
  std::vector<RowKind> inputs;
  for (const auto& node : g.nodes()) {
    const graph::Node& n = *node;
    RowKind& k = kind[static_cast<size_t>(n.id)];
    if (k == RowKind::kRows && n.op == &ops::op::Placeholder()) continue;  // a batched feed
    // Each row's call runs every step again: a step that draws random numbers or changes
    // state would run once per row instead of once (reading a variable is harmless).
    if ((n.stateful || n.op->is_stateful()) && n.op != &ops::op::ReadVariableOp()) return split;
    inputs.clear();
    for (const graph::Output& o : n.inputs) inputs.push_back(kind[static_cast<size_t>(o.node->id)]);
    k = row_kind_of(n, inputs);
    if (k != RowKind::kRows) continue;
    windowed |= n.op->has(ops::kWindowed);
    largest_row = std::max(largest_row, row_bytes(n));
  }
  for (const graph::Output& o : g.outputs)
    if (kind[static_cast<size_t>(o.node->id)] != RowKind::kRows || o.index != 0 ||
        detail::holds_objects(o.node->out_dtypes[0]))
      return split;
  split.separable = windowed && largest_row >= kMinRowBytes;
  return split;
}

bool batch_split_enabled() {
  static const bool enabled = switched_on("KILN_BATCH_SPLIT");
  return enabled;
}

}  // namespace kiln::exec
