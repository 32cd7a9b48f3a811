// Tensor::name() and Tensor::str(), public methods that need the graph layer: a symbolic
// tensor names its node.
#include <string>

#include "core/format.h"
#include "graph/graph.h"

namespace kiln {

std::string Tensor::name() const {
  const detail::TensorImpl* t = impl();
  if (!t || !t->symbolic) return "";
  if (!graph::graph_alive(t->graph_serial)) return "<discarded trace>:" + std::to_string(t->index);
  return t->node->name + ":" + std::to_string(t->index);
}

std::string Tensor::str() const {
  const detail::TensorImpl* t = impl();
  if (!t) return "kiln.Tensor(<empty>)";
  const std::string meta = "shape=" + detail::shape_of_impl(*t).str() + ", dtype=" + std::string(dtype_name(t->dtype));
  if (t->symbolic) return "Tensor(\"" + name() + "\", " + meta + ")";
  const std::string values = detail::format_values(*t);
  // Multi-line values start on a line of their own, as TensorFlow prints them.
  return "kiln.Tensor(" + std::string(values.find('\n') == std::string::npos ? "" : "\n") + values + ", " + meta + ")";
}

}  // namespace kiln
