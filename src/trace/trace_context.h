// A trace in progress: the graph being built, the captured outside tensors, and the
// stateful ops in program order (automatic control dependencies).
#pragma once
#include <unordered_map>
#include <vector>

#include "graph/graph.h"

namespace kiln::trace {

class TraceContext {
 public:
  explicit TraceContext(graph::Graph* g);
  ~TraceContext();  // pops itself
  TraceContext(const TraceContext&) = delete;
  TraceContext& operator=(const TraceContext&) = delete;

  graph::Graph& graph() { return *graph_; }
  // The graph output for an input tensor: own symbolic outputs as is; concrete tensors
  // become captures (a Placeholder fed with the value at call time).
  graph::Output resolve(const Tensor& t);

  struct Capture {
    Tensor value;       // the outside tensor, kept alive
    graph::Node* node;  // its placeholder
  };
  const std::vector<Capture>& captures() const { return captures_; }
  // Stateful nodes in program order.
  const std::vector<graph::Node*>& stateful_nodes() const { return stateful_; }
  void add_stateful(graph::Node* n) { stateful_.push_back(n); }
  graph::Node* last_stateful() const { return stateful_.empty() ? nullptr : stateful_.back(); }

 private:
  graph::Graph* graph_;
  TraceContext* outer_;
  std::vector<Capture> captures_;
  std::unordered_map<const void*, graph::Node*> capture_index_;
  std::vector<graph::Node*> stateful_;
};

}  // namespace kiln::trace
