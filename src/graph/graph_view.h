// Public views of a graph: GraphView (operations) and Graphviz DOT text.
#pragma once
#include <string>

#include "graph/graph.h"
#include "kiln/function.h"

namespace kiln::graph {

GraphView make_view(const Graph& g);
std::string to_dot(const Graph& g, const std::string& title);
// Text of an attr value, as GraphView shows it.
std::string attr_text(const ops::AttrValue& v);

}  // namespace kiln::graph
