// TensorBundle files built in memory, for writers that place them themselves (a SavedModel's
// variables/ inside an atomically written directory). checkpoint.cc owns the format.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "kiln/tensor.h"

namespace kiln::io {

struct BundleFiles {
  std::string index;  // <prefix>.index
  std::string data;   // <prefix>.data-00000-of-00001 (bundle_data_file)
};
// The tensors, and scalar string entries (a checkpoint's object graph), as one shard.
// Names must be unique and not empty.
BundleFiles build_bundle(const std::vector<std::pair<std::string, Tensor>>& tensors,
                         const std::vector<std::pair<std::string, std::string>>& strings);
std::string bundle_data_file(const std::string& prefix);

}  // namespace kiln::io
