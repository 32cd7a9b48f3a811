// Saving and loading functions in TensorFlow's SavedModel format: saved_model.pb (the function
// library, signature_defs, the object graph) and variables/ (a TensorBundle checkpoint).
// TensorFlow loads what save() writes (tf.saved_model.load, saved_model_cli, TF Serving); load()
// reads what TensorFlow writes. A loaded model needs none of the original code.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/function.h"
#include "kiln/limits.h"
#include "kiln/tensor.h"
#include "kiln/variable.h"

namespace kiln {

namespace detail {
struct LoadedModelImpl;
}

class LoadedModel {
 public:
  LoadedModel() = default;
  explicit LoadedModel(std::shared_ptr<detail::LoadedModelImpl> impl) : impl_(std::move(impl)) {}

  // Runs a signature. Inputs are positional, in the order of the signature's input names;
  // a mismatch raises InvalidArgumentError listing the signatures that exist.
  std::vector<Tensor> call(const std::string& signature, std::vector<Tensor> inputs) const;
  // call("s", {x, y}): positional (a brace list of tensors is not a map).
  std::vector<Tensor> call(const std::string& signature, std::initializer_list<Tensor> inputs) const {
    return call(signature, std::vector<Tensor>(inputs));
  }
  // By name, as TensorFlow's signatures are called: every input by its name, the outputs by
  // theirs (output_0, ... or the keys TensorFlow saved). A missing or unknown name raises
  // InvalidArgumentError listing the signature's inputs.
  std::map<std::string, Tensor> call(const std::string& signature, const std::map<std::string, Tensor>& inputs) const;
  std::vector<std::string> signatures() const;
  // The signature as a ConcreteFunction: its graphs, specs and pretty-printed signature.
  ConcreteFunction signature(const std::string& name) const;
  // The variables' current values, by saved name.
  std::map<std::string, Tensor> variables() const;

  // The saved objects (what tf.saved_model.load rebuilds a tf.Module from), as JSON:
  //   {"nodes": [node, ...]}, node 0 the root, each node {"kind": k, "children": [[name, id], ...]}
  //   with k "object", "signatures" (the signature map), "variable" (+ "variable": its name for
  //   variable()), "function" (a tf.function: + "args": its parameter names, "defaults": a
  //   structure or null, "traces": [{"function": name for function(), "inputs": structure,
  //   "outputs": structure}]) or "other" (a kind kiln does not restore).
  // Structures are TensorFlow's StructuredValues in JSON (docs/saved_model.md).
  std::string objects() const;
  // A trace of a saved tf.function, by its name in objects(). A trace kiln could not build
  // (an op it lacks, a capture it does not restore) throws that error here, not at load.
  ConcreteFunction function(const std::string& name) const;
  // A saved variable by name, sharing its state with the functions that use it.
  Variable variable(const std::string& name) const;

 private:
  std::shared_ptr<detail::LoadedModelImpl> impl_;
};

// Writes `dir` atomically: into a temporary directory beside it, fsynced, then renamed
// over it. Input names are the function's arg_names (the signature's keyword arguments);
// outputs are output_0, output_1, ... Each variable the functions use is saved once, as an
// object at the path its name gives ("dense/kernel": child "kernel" of object "dense").
// A variable used inside an If/While body is passed to it as a resource argument (a While
// carries it as a loop variable), as TensorFlow does.
void save(const std::string& dir, const ConcreteFunction& function, std::string signature = "serving_default");
void save(const std::string& dir, std::map<std::string, ConcreteFunction> signatures);
// The same, naming the outputs of the signatures listed in `output_names` (TensorFlow names a
// dict's outputs by its keys): one unique, non-empty name per output.
void save(const std::string& dir, std::map<std::string, ConcreteFunction> signatures,
          const std::map<std::string, std::vector<std::string>>& output_names);
// Objects to save beside the signatures, as tf.saved_model.save writes a tf.Module: a tree of
// plain objects, variables and tf.functions (each with its traces), in JSON:
//   {"nodes": [node, ...]}, node 0 the root: {"kind": "object", "children": [[name, id], ...]},
//   {"kind": "variable", "variable": index into `variables`}, or {"kind": "function",
//   "args": [parameter names], "traces": [{"function": index into `functions`, "inputs":
//   ((positional structures...), {}) as a structure, "outputs": structure}]}.
// A trace's tensor arguments are the TensorSpecs of its inputs in TensorFlow's flattening
// order (dicts by sorted key); structures are StructuredValues in JSON (docs/saved_model.md).
// Variables the functions use that the tree lacks are saved at the paths their names give.
struct SavedObjects {
  std::string graph;
  std::vector<Variable> variables;
  std::vector<ConcreteFunction> functions;
};
void save(const std::string& dir, std::map<std::string, ConcreteFunction> signatures,
          const std::map<std::string, std::vector<std::string>>& output_names, const SavedObjects& objects);

struct LoadOptions {
  // The most nodes a load may build, over all signatures and library functions (each
  // function is built once per argument dtypes and shapes, however many nodes call it).
  // Beyond it the load fails with InvalidArgumentError naming the budget.
  int64_t max_nodes = 1'000'000;
  // Limits for a server (kiln/limits.h). The model's tensor memory — its variables and the
  // tensors of all its calls alive at once — stays within memory_limit_bytes (0: none), or
  // the load or call fails with ResourceExhaustedError; each call past call_timeout fails
  // with DeadlineExceededError. A RunLimitsScope around a call adds its own limits.
  int64_t memory_limit_bytes = 0;
  std::optional<std::chrono::steady_clock::duration> call_timeout = std::nullopt;
};

// Every file is checked (checksums, formats, the graph); errors are DataLossError for
// corrupt files and InvalidArgumentError for graphs kiln cannot run.
LoadedModel load(const std::string& dir, const LoadOptions& options = {});

// What a SavedModel declares, read without building its graphs: each signature's inputs and
// outputs (sorted by name; a dtype kiln lacks shows as float32 with unknown shape) and the ops
// kiln lacks, "Op (in function ...)" — empty when kiln can serve it. For `kiln show`.
struct SavedModelInfo {
  struct Signature {
    std::string name;
    std::vector<TensorSpec> inputs = {}, outputs = {};
    std::vector<std::string> missing_ops = {};
  };
  std::vector<Signature> signatures;
};
SavedModelInfo inspect(const std::string& dir);

// Writes a TensorFlow.js GraphModel (model.json + weight shards) of one signature of a
// saved model into `out_dir`. Variables are frozen; graphs tfjs cannot run are refused
// with a message naming the node.
void export_tfjs(const std::string& saved_dir, const std::string& out_dir, const std::string& signature = "");

}  // namespace kiln
