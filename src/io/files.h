// Files for saved models: bounded reads, SHA-256 checksums and atomic directory writes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::io {

// The whole file; NotFoundError if it cannot be opened, DataLossError if it is larger
// than max_bytes.
std::string read_file(const std::string& path, size_t max_bytes);
std::string sha256_hex(const std::string& bytes);
// `size` bytes at `offset`; NotFoundError if the file cannot be opened, DataLossError if the
// range is not inside it.
std::string read_file_range(const std::string& path, uint64_t offset, uint64_t size);
// Writes a temporary file beside `path`, fsyncs it and renames it into place.
void write_file_atomically(const std::string& path, const std::string& bytes);

// Builds a directory beside `target` and puts it in place with one rename (an atomic swap
// when `target` exists), so readers see the old directory or the complete new one. Files
// and directories are fsynced before the rename. Without commit(), nothing is left behind.
class AtomicDirWriter {
 public:
  explicit AtomicDirWriter(const std::string& target);
  ~AtomicDirWriter();
  AtomicDirWriter(const AtomicDirWriter&) = delete;
  AtomicDirWriter& operator=(const AtomicDirWriter&) = delete;
  // `name` may be inside a directory made by make_dir.
  void write(const std::string& name, const std::string& bytes);
  void make_dir(const std::string& name);
  void commit();

 private:
  std::string target_, tmp_;
  std::vector<std::string> dirs_;  // made inside tmp_, fsynced at commit
  bool committed_ = false;
};

}  // namespace kiln::io
