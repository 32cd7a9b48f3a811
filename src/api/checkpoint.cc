// write_checkpoint: a TensorBundle on disk (io/checkpoint.cc owns the format and the reader).
#include "kiln/checkpoint.h"

#include <filesystem>

#include "io/bundle.h"
#include "io/files.h"

namespace kiln {

void write_checkpoint(const std::string& prefix, const std::vector<std::pair<std::string, Tensor>>& tensors) {
  if (prefix.empty()) throw InvalidArgumentError("write_checkpoint: the prefix is empty");
  const io::BundleFiles files = io::build_bundle(tensors, {});
  const std::filesystem::path parent = std::filesystem::path(prefix).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  io::write_file_atomically(io::bundle_data_file(prefix), files.data);  // data first: an index means complete
  io::write_file_atomically(prefix + ".index", files.index);
}

}  // namespace kiln
