// The loader's in-memory entry point, shared by load() and the fuzz target.
#pragma once
#include <map>
#include <string>

#include "kiln/saved_model.h"
#include "ops/variable_state.h"
#include "trace/concrete.h"

namespace kiln::detail {

struct LoadedModelImpl {
  std::map<std::string, std::shared_ptr<ConcreteImpl>> signatures;
  std::map<std::string, std::shared_ptr<ops::VariableState>> variables;
};

}  // namespace kiln::detail

namespace kiln::io {

inline constexpr const char* kGraphFile = "graph.pb";
inline constexpr const char* kVariablesFile = "variables.safetensors";
inline constexpr const char* kManifestFile = "manifest.json";

// Loads from file contents by name. With verify_checksums off (fuzzing), the manifest's
// sizes and SHA-256 sums are not compared, so mutations reach the parsers behind them.
LoadedModel load_from_files(const std::map<std::string, std::string>& files, bool verify_checksums = true,
                            const LoadOptions& options = {});

// SavedModels written by TensorFlow (a saved_model.pb in the directory): tf_saved_model.cc.
bool is_tf_saved_model(const std::string& dir);
LoadedModel load_tf_saved_model(const std::string& dir, const LoadOptions& options);

}  // namespace kiln::io
