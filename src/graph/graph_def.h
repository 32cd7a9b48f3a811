// GraphDef export: kiln graphs as TensorFlow-compatible protobuf (binary and text).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "kiln/function.h"

namespace tensorflow {
class GraphDef;
class FunctionDef;
}  // namespace tensorflow

namespace kiln::graph {

struct ExportOptions {
  // The shared_name of a variable's VarHandleOp; default: the variable's own name.
  std::function<std::string(const Resource*)> variable_name;
  // Prepended to every library function's name (definitions and references), so the
  // libraries of several root graphs can share one FunctionDefLibrary.
  std::string function_prefix;
  // write_function_library only: when set, the root function takes each variable it uses as
  // a trailing DT_RESOURCE argument (TensorFlow's captured variables), appended here in
  // argument order, instead of making a VarHandleOp. Bodies of If/Case/While take the
  // variables they use the same way (the node passes them after its tensors; a While carries
  // them as loop variables and its body returns them unchanged).
  std::vector<const Resource*>* resource_args = nullptr;
};

// The graph's nodes, plus every function its control-flow nodes reach (transitively) as
// the library. Variables appear as VarHandleOp nodes feeding the variable ops, as in TF.
void write_graph_def(const Graph& g, tensorflow::GraphDef* def, const ExportOptions& options = {});
// A function graph (inputs become input args, outputs output args) named `name`; the
// functions it reaches are added to `library` once each (by body).
void write_function_library(const Graph& f, const std::string& name, tensorflow::GraphDef* def,
                            const ExportOptions& options = {});

GraphDef to_graph_def(const Graph& g);
// TensorFlow's DataType enum value of a dtype (tensorflow::DataType).
int dtype_to_proto(DType d);

}  // namespace kiln::graph
