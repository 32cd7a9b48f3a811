#include "graph/graph_view.h"

#include <string>

namespace kiln {

namespace graph {

std::string attr_text(const ops::AttrValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>)
          return "";
        else if constexpr (std::is_same_v<T, int64_t>)
          return std::to_string(x);
        else if constexpr (std::is_same_v<T, double>)
          return std::to_string(x);
        else if constexpr (std::is_same_v<T, bool>)
          return x ? "true" : "false";
        else if constexpr (std::is_same_v<T, DType>)
          return std::string(dtype_name(x));
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          std::string s = "[";
          for (size_t i = 0; i < x.size(); ++i) s += (i ? ", " : "") + std::to_string(x[i]);
          return s + "]";
        } else if constexpr (std::is_same_v<T, std::string>)
          return x;
        else if constexpr (std::is_same_v<T, TensorShape>)
          return x.str();
        else if constexpr (std::is_same_v<T, ops::FuncRef>)
          return x.name;
        else if constexpr (std::is_same_v<T, std::vector<ops::FuncRef>>) {
          std::string s = "[";
          for (size_t i = 0; i < x.size(); ++i) s += (i ? ", " : "") + x[i].name;
          return s + "]";
        } else if constexpr (std::is_same_v<T, ops::ResourceRef>)
          return x.resource ? x.resource->resource_name() : "";
        else if constexpr (std::is_same_v<T, ops::ShapeAttr>)
          return x.get().str();
        else
          return x.str();
      },
      v);
}

static std::string output_name(const Output& o) { return o.node->name + ":" + std::to_string(o.index); }

GraphView make_view(const Graph& g) {
  GraphView view;
  for (const auto& n : g.nodes()) {
    Operation op;
    op.name = n->name;
    op.type = n->op->name;
    for (const Output& in : n->inputs) op.inputs.push_back(output_name(in));
    for (const Node* c : n->control_inputs) op.control_inputs.push_back(c->name);
    for (int i = 0; i < n->attrs.size() && i < static_cast<int>(n->op->attr_specs.size()); ++i)
      op.attrs[n->op->attr_specs[i].name] = attr_text(n->attrs[i]);
    for (int i = 0; i < n->num_outputs(); ++i)
      op.outputs.push_back(n->name + ":" + std::to_string(i) + " " + std::string(dtype_name(n->out_dtypes[i])) + " " +
                           ops::shape_text(n->out_shapes[i]));
    view.operations.push_back(std::move(op));
  }
  return view;
}

static std::string dot_escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    r += c;
  }
  return r;
}

std::string to_dot(const Graph& g, const std::string& title) {
  std::string s = "digraph \"" + dot_escape(title) +
                  "\" {\n  rankdir=TB;\n  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n";
  for (const auto& n : g.nodes()) {
    const bool io = n->op->has(ops::kNoKernel);
    s += "  n" + std::to_string(n->id) + " [label=\"" + dot_escape(n->op->name) + "\\n" + dot_escape(n->name) + "\"" +
         (io ? ", shape=ellipse" : "") + "];\n";
  }
  for (const auto& n : g.nodes()) {
    for (const Output& in : n->inputs) {
      const std::string label =
          std::string(dtype_name(in.node->out_dtypes[in.index])) + " " + ops::shape_text(in.node->out_shapes[in.index]);
      s += "  n" + std::to_string(in.node->id) + " -> n" + std::to_string(n->id) + " [label=\"" + dot_escape(label) +
           "\"];\n";
    }
    for (const Node* c : n->control_inputs)
      s += "  n" + std::to_string(c->id) + " -> n" + std::to_string(n->id) + " [style=dashed];\n";
  }
  return s + "}\n";
}

}  // namespace graph
}  // namespace kiln
