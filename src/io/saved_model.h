// The loaded model, and the loader's entry points shared by load(), the tests and the fuzz target.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "kiln/saved_model.h"
#include "ops/variable_state.h"
#include "trace/concrete.h"

namespace kiln::detail {

struct LoadedModelImpl {
  std::map<std::string, std::shared_ptr<ConcreteImpl>> signatures;
  std::map<std::string, std::shared_ptr<ops::VariableState>> variables;
  std::string objects;                                             // LoadedModel::objects()
  std::map<std::string, std::shared_ptr<ConcreteImpl>> functions;  // tf.functions' traces by name
  std::map<std::string, std::string> function_errors;              // traces kiln could not build
  RunLimits limits;                                                // in force for every call (LoadOptions)
  bool has_limits() const { return limits.timeout || limits.shared_memory; }
};

}  // namespace kiln::detail

namespace kiln::io {

// A SavedModel's files, by path inside its directory.
inline constexpr const char* kSavedModelFile = "saved_model.pb";
inline constexpr const char* kVariablesIndexFile = "variables/variables.index";
inline constexpr const char* kVariablesDataFile = "variables/variables.data-00000-of-00001";

// SavedModels as TensorFlow writes them (tf_saved_model.cc); save() writes the same format
// (tf_saved_model_writer.cc).
bool is_tf_saved_model(const std::string& dir);
LoadedModel load_tf_saved_model(const std::string& dir, const LoadOptions& options);
SavedModelInfo inspect_tf_saved_model(const std::string& dir);
// The same from file contents by path (the fuzz target and the malformed-file tests).
LoadedModel load_from_files(const std::map<std::string, std::string>& files, const LoadOptions& options = {});

// What kiln::save and kiln::export_tfjs do (src/api/saved_model.cc): write a SavedModel
// (tf_saved_model_writer.cc), convert one for TensorFlow.js (tfjs_export.cc).
void write_saved_model(const std::string& dir, std::map<std::string, ConcreteFunction> signatures,
                       const std::map<std::string, std::vector<std::string>>& output_names,
                       const struct ObjectsToSave* objects = nullptr);
// write_saved_model without turning the object graph's JSON errors into InvalidArgumentError.
void write_saved_model_checked(const std::string& dir, std::map<std::string, ConcreteFunction> signatures,
                               const std::map<std::string, std::vector<std::string>>& output_names,
                               const struct ObjectsToSave* objects);
// kiln::SavedObjects with each variable as the resource its ops name (the caller keeps them alive).
struct ObjectsToSave {
  std::string graph;
  std::vector<const Resource*> variables;
  std::vector<ConcreteFunction> functions;
};
void write_tfjs(const detail::ConcreteImpl& signature, const std::map<std::string, Tensor>& variables,
                const std::string& out_dir);

}  // namespace kiln::io
