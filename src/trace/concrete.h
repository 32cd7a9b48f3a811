// ConcreteImpl: one traced graph with its signature, captures and compiled plan.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "exec/plan.h"
#include "graph/graph.h"
#include "kiln/function.h"

namespace kiln::detail {

class ConcreteImpl {
 public:
  std::string name;                         // the function's name
  std::vector<ArgEntry> signature;          // as traced (shapes possibly relaxed)
  std::unique_ptr<graph::Graph> graph;      // the traced graph: inputs = args then captures
  std::unique_ptr<graph::Graph> optimized;  // what runs (same inputs and outputs)
  std::vector<std::string> optimization_report;
  std::vector<Tensor> captures;  // values fed after the arguments
  std::vector<TensorSpec> inputs, outputs;
  std::unique_ptr<exec::Plan> plan;

  std::vector<Tensor> call(const Tensor* args, size_t num_args) const;
  // The same with the arguments by address (a Function call's own arguments, not copied).
  std::vector<Tensor> call(const Tensor* const* args, size_t num_args) const;
  std::vector<Tensor> call(const std::vector<Tensor>& args) const { return call(args.data(), args.size()); }
  std::string pretty_signature() const;
  // Optimizes a copy of `graph` into `optimized` and compiles the plan (once).
  void compile(const OptimizerOptions& options);
};

}  // namespace kiln::detail
