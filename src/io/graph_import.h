// Builds kiln graphs from a FunctionDefLibrary read from a file. Everything is checked
// before use: op names, attr names and types, input references, arity, cycles, recursion
// between functions, dtypes and shapes (each op's own shape function validates its node).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph.pb.h"
#include "graph/graph.h"
#include "ops/variable_state.h"

namespace kiln::io {

using VariableMap = std::map<std::string, std::shared_ptr<ops::VariableState>>;

// How many nodes one load may build, over every function it imports: a small hostile file
// cannot expand into a huge graph. Each library function is built once per argument
// dtypes and shapes, however often it is called.
struct NodeBudget {
  int64_t max_nodes;
  int64_t used = 0;
};

using ResourceBindings = std::vector<std::shared_ptr<ops::VariableState>>;

// A new root graph for function `name`: its inputs are the function's tensor input args with
// the given dtypes and shapes, its outputs the output args; control-flow bodies become its
// library, and (Stateful)PartitionedCall nodes are inlined. VarHandleOp nodes resolve by
// shared_name in `variables`; DT_RESOURCE input args (TensorFlow's captured variables) are
// bound, in order, to `resources`. Throws InvalidArgumentError.
std::unique_ptr<graph::Graph> import_function(const tensorflow::FunctionDefLibrary& library, const std::string& name,
                                              const std::vector<DType>& input_dtypes,
                                              const std::vector<TensorShape>& input_shapes,
                                              const VariableMap& variables, NodeBudget& budget,
                                              const ResourceBindings& resources = {});

}  // namespace kiln::io
