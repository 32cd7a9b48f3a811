#include <chrono>
#include <cstdio>

#include "ops/helpers.h"
#include "optimize/pass.h"

namespace kiln::optimize {

std::string PassStats::str() const {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s: %d -> %d nodes (%.0f us)", pass.c_str(), nodes_before, nodes_after, micros);
  return buf;
}

std::vector<int64_t> const_ints(const Output& o) {
  const ops::TensorImpl* t = o.node->const_value();
  if (!t || (t->dtype != DType::Int32 && t->dtype != DType::Int64) || t->dims.size() > 1) return {};
  return ops::int_values(*t);
}

bool is_scalar_of(const Output& v, DType dtype, int max_rank) {
  const TensorShape& s = v.node->out_shapes[v.index];
  if (v.node->out_dtypes[v.index] != dtype || s.unknown_rank() || s.rank() > max_rank) return false;
  for (int64_t d : s.dims())
    if (d != 1) return false;
  return true;
}

UseCounts::UseCounts(const graph::Graph& g) : uses(g.num_nodes(), 0), pinned(g.num_nodes(), 0) {
  for (const auto& node : g.nodes()) {
    for (const graph::Output& in : node->inputs) ++uses[in.node->id];
    for (const graph::Node* c : node->control_inputs) pinned[c->id] = 1;
  }
  for (const graph::Output& o : g.outputs) pinned[o.node->id] = 1;
}

Users::Users(const graph::Graph& g) : start_(g.num_nodes() + 1, 0) {
  for (const auto& node : g.nodes())
    for (const graph::Output& in : node->inputs) ++start_[in.node->id + 1];
  for (size_t i = 1; i < start_.size(); ++i) start_[i] += start_[i - 1];
  list_.resize(start_.back());
  std::vector<int> next(start_.begin(), start_.end() - 1);
  for (const auto& node : g.nodes())
    for (const graph::Output& in : node->inputs) list_[next[in.node->id]++] = node.get();
}

std::vector<PassStats> optimize(graph::Graph& g, const OptimizerOptions& options) {
  std::vector<std::unique_ptr<Pass>> passes;
  if (options.remove_identity) passes.push_back(make_remove_identity());
  if (options.constant_folding) passes.push_back(make_constant_folding());
  if (options.arithmetic_simplification) passes.push_back(make_arithmetic_simplification());
  if (options.common_subexpression_elimination) passes.push_back(make_common_subexpression_elimination());
  if (options.prune) passes.push_back(make_prune());
  // Fusions last: the other passes see plain ops; they see the shapes the graph's own shape
  // arithmetic gives (a Dense layer's channels behind Tensordot's run-time Reshape).
  if (options.contraction_fusion || options.elementwise_fusion) passes.push_back(make_refine_shapes());
  // Before fusion, which would fuse a loop body's product away from its list read; it kills
  // the product it moves, so only with pruning.
  if (options.contraction_fusion && options.prune) {
    passes.push_back(make_hoist_loop_products());
    passes.push_back(make_hoist_concat_products());
  }
  if (options.contraction_fusion) {
    passes.push_back(make_fold_pad());
    passes.push_back(make_fuse_contraction());
    passes.push_back(make_fuse_weight_update());
  }
  if (options.elementwise_fusion) {
    passes.push_back(make_fuse_softmax_scale());  // before the Mul could join an elementwise chain
    passes.push_back(make_fuse_elementwise());
  }
  std::vector<PassStats> stats;
  const PassContext ctx{options};
  constexpr int kMaxRounds = 4;
  for (int round = 0; round < kMaxRounds; ++round) {
    bool changed = false;
    for (auto& p : passes) {
      PassStats s;
      s.pass = p->name();
      s.nodes_before = g.num_nodes();
      const auto t0 = std::chrono::steady_clock::now();
      const bool c = p->run(g, ctx);
      // Rewrites append nodes: restore a topological order; dead nodes go only when pruning.
      if (c) g.compact_order(options.prune);
      s.micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      s.nodes_after = g.num_nodes();
      if (c) stats.push_back(s);
      changed |= c;
    }
    if (!changed) break;
  }
  return stats;
}

}  // namespace kiln::optimize
