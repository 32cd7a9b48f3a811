// Files for saved models: bounded reads, SHA-256 checksums and atomic directory writes.
#pragma once
#include <string>

namespace kiln::io {

// The whole file; NotFoundError if it cannot be opened, DataLossError if it is larger
// than max_bytes.
std::string read_file(const std::string& path, size_t max_bytes);
std::string sha256_hex(const std::string& bytes);

// Builds a directory beside `target` and puts it in place with one rename (an atomic swap
// when `target` exists), so readers see the old directory or the complete new one. Files
// and directories are fsynced before the rename. Without commit(), nothing is left behind.
class AtomicDirWriter {
 public:
  explicit AtomicDirWriter(const std::string& target);
  ~AtomicDirWriter();
  AtomicDirWriter(const AtomicDirWriter&) = delete;
  AtomicDirWriter& operator=(const AtomicDirWriter&) = delete;
  void write(const std::string& name, const std::string& bytes);
  void commit();

 private:
  std::string target_, tmp_;
  bool committed_ = false;
};

}  // namespace kiln::io
