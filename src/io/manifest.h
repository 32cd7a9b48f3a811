// manifest.json of a saved model: format version, signatures (input and output names,
// dtypes, shapes), variable names and a SHA-256 checksum of every other file.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/shape.h"

namespace kiln::io {

inline constexpr const char* kManifestFormat = "kiln-saved-model";
inline constexpr int kManifestVersion = 1;

struct SignatureEntry {
  std::string function;  // the FunctionDef in graph.pb
  std::vector<TensorSpec> inputs, outputs;
};
struct FileEntry {
  uint64_t bytes = 0;
  std::string sha256;
};
struct Manifest {
  std::map<std::string, SignatureEntry> signatures;
  std::vector<std::string> variables;
  std::map<std::string, FileEntry> files;
};

std::string write_manifest(const Manifest& m);
// Throws DataLossError naming the field that is missing or malformed.
Manifest parse_manifest(const std::string& text);

}  // namespace kiln::io
