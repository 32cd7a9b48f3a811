// A trace in progress: the graph being built, the tensors it captured from outside, and the
// stateful ops in program order (automatic control dependencies). Contexts nest: a branch
// or loop body is traced in a context over a sub-graph whose parent is the enclosing graph.
#pragma once
#include <cstdint>
#include <map>
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
  // Unique per context ever made on any thread (a context's address may be reused later).
  uint64_t serial() const { return serial_; }
  TraceContext* outer() const { return outer_; }
  // The graph output for an input tensor: own symbolic outputs as is; anything else becomes a
  // capture (a Placeholder here): eager tensors are fed at call time, tensors of an enclosing
  // graph are passed in by the control-flow node.
  graph::Output resolve(const Tensor& t);

  struct Capture {
    Tensor value;         // root graph: the outside eager tensor, kept alive
    graph::Output outer;  // sub-graph: the captured output in the parent graph
    graph::Node* node;    // the placeholder here
  };
  const std::vector<Capture>& captures() const { return captures_; }
  // Captures the parent-graph output `o` (or returns the existing placeholder).
  graph::Node* capture_outer(const graph::Output& o);
  // Stateful nodes in program order.
  const std::vector<graph::Node*>& stateful_nodes() const { return stateful_; }
  void add_stateful(graph::Node* n) { stateful_.push_back(n); }
  graph::Node* last_stateful() const { return stateful_.empty() ? nullptr : stateful_.back(); }

  // Whether a kiln::Variable may be created during this trace (the first trace only).
  bool allow_variable_creation = true;
  // Variables read or written while tracing (the function keeps them alive).
  std::vector<std::shared_ptr<Resource>> resources;

 private:
  graph::Graph* graph_;
  TraceContext* outer_;
  uint64_t serial_;
  std::vector<Capture> captures_;
  std::map<const void*, graph::Node*> eager_index_;
  std::map<std::pair<const graph::Node*, int>, graph::Node*> outer_index_;
  std::vector<graph::Node*> stateful_;
};

}  // namespace kiln::trace
