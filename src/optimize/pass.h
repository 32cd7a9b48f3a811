// Graph optimizer passes. Each pass is one small file with one interface:
// `bool run(Graph&, const PassContext&)` returning whether it changed the graph.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "kiln/function.h"
#include "ops/op_list.h"

namespace kiln::optimize {

// The names every pass uses.
using graph::Graph;
using graph::Node;
using graph::Output;
namespace op = ops::op;

// MatMul's transpose flags, which several passes read.
inline const int kMatMulTransposeA = ops::attr_index(ops::op::MatMul(), "transpose_a");
inline const int kMatMulTransposeB = ops::attr_index(ops::op::MatMul(), "transpose_b");

struct PassContext {
  const OptimizerOptions& options;
};

// The values of a constant integer scalar or vector (a perm, a shape, begin/end of a
// slice); empty when `o` is not one.
std::vector<int64_t> const_ints(const Output& o);

// `v` is one value of `dtype` in a shape of at most `max_rank` ones ([], [1], [1, 1], ...): a
// Mul by it keeps the other operand's shape when that has at least `max_rank` dimensions.
bool is_scalar_of(const Output& v, DType dtype, int max_rank);

class Pass {
 public:
  virtual ~Pass() = default;
  virtual const char* name() const = 0;
  virtual bool run(graph::Graph& g, const PassContext& ctx) = 0;
};

std::unique_ptr<Pass> make_remove_identity();
std::unique_ptr<Pass> make_constant_folding();
std::unique_ptr<Pass> make_arithmetic_simplification();
std::unique_ptr<Pass> make_common_subexpression_elimination();
std::unique_ptr<Pass> make_prune();
std::unique_ptr<Pass> make_fuse_elementwise();
std::unique_ptr<Pass> make_fuse_softmax_scale();
std::unique_ptr<Pass> make_fold_pad();
std::unique_ptr<Pass> make_fuse_contraction();
std::unique_ptr<Pass> make_fuse_weight_update();
std::unique_ptr<Pass> make_refine_shapes();
std::unique_ptr<Pass> make_hoist_loop_products();
std::unique_ptr<Pass> make_hoist_concat_products();

struct PassStats {
  std::string pass;
  int nodes_before = 0, nodes_after = 0;
  double micros = 0;
  std::string str() const;
};

// Runs the enabled passes to a fixed point (at most a few rounds); returns what each did.
std::vector<PassStats> optimize(graph::Graph& g, const OptimizerOptions& options);

// Shared by passes: a replacement map keyed by (node, output index).
using Replacements = std::map<std::pair<const graph::Node*, int>, graph::Output>;

// How a rewrite may fold a node into its user: how many inputs read each node, and which
// values are needed beyond them (a graph output's, a control input's).
struct UseCounts {
  std::vector<int> uses;
  std::vector<char> pinned;
  explicit UseCounts(const graph::Graph& g);
  // Read by exactly one input, needed nowhere else, and waiting on nothing.
  bool used_once(const graph::Node& n) const { return !pinned[n.id] && uses[n.id] == 1 && n.control_inputs.empty(); }
};

// Who reads each node: one entry per input that reads it, users in node order. Two arrays
// for the whole graph (one list per node would be an allocation per node, per pass).
// Nodes a pass appends later have no entry.
class Users {
 public:
  explicit Users(const graph::Graph& g);
  std::span<Node* const> of(const Node& n) const {
    return {list_.data() + start_[n.id], list_.data() + start_[n.id + 1]};
  }

 private:
  std::vector<int> start_;  // node id -> its first entry in list_; one more at the end
  std::vector<Node*> list_;
};

}  // namespace kiln::optimize
