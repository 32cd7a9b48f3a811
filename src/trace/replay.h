// replay(): runs a traced graph op by op through dispatch(), as if its ops were called one
// by one now. Eager, each op runs and a recording GradientTape sees it (a ConcreteFunction
// or a loaded SavedModel function called under a tape is differentiated through its ops);
// inside a trace, the ops join the graph being traced (the call is inlined).
#pragma once
#include <vector>

#include "graph/graph.h"

namespace kiln::trace {

// `inputs` feed g.inputs in order (arguments, then captures); returns g.outputs' values.
// Eager: If, Case and While nodes run their bodies the same way. Inside a trace, a graph with
// control flow is UnimplementedError (its bodies would have to join the outer library).
std::vector<Tensor> replay(const graph::Graph& g, const std::vector<Tensor>& inputs);

}  // namespace kiln::trace
