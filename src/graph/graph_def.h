// GraphDef export: kiln graphs as TensorFlow-compatible protobuf (binary and text).
#pragma once
#include "graph/graph.h"
#include "kiln/function.h"

namespace kiln::graph {

GraphDef to_graph_def(const Graph& g);

}  // namespace kiln::graph
