#include "io/files.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "kiln/errors.h"

namespace kiln::io {
namespace fs = std::filesystem;
namespace {

std::string sys_error(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

void fsync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) throw InternalError(sys_error("cannot open", path));
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw InternalError(sys_error("fsync failed for", path));
}

}  // namespace

namespace {
// A regular file open for reading, closed when it goes out of scope.
class ReadOnlyFile {
 public:
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever. The
  // type is checked on the open descriptor (no window between a check and the open).
  explicit ReadOnlyFile(const std::string& path)
      : path_(path), fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) {
    if (fd_ < 0) throw NotFoundError(sys_error("cannot open", path));
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd_);
      throw DataLossError(path + " is not a regular file");
    }
    size_ = static_cast<uint64_t>(st.st_size);
  }
  ~ReadOnlyFile() { ::close(fd_); }
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;

  uint64_t size() const { return size_; }
  // `n` bytes at `offset`, which the caller has checked lie inside the file.
  std::string read(uint64_t offset, uint64_t n) const {
    std::string out(static_cast<size_t>(n), '\0');
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t got = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
      if (got < 0) throw DataLossError(sys_error("cannot read", path_));
      if (got == 0) throw DataLossError(path_ + " became shorter while it was read");
      done += static_cast<size_t>(got);
    }
    return out;
  }

 private:
  std::string path_;
  int fd_;
  uint64_t size_ = 0;
};
}  // namespace

std::string read_file(const std::string& path, size_t max_bytes) {
  const ReadOnlyFile file(path);
  if (file.size() > max_bytes)
    throw DataLossError(path + " is " + std::to_string(file.size()) + " bytes, more than the " +
                        std::to_string(max_bytes) + " allowed");
  return file.read(0, file.size());
}

std::string read_file_range(const std::string& path, uint64_t offset, uint64_t size) {
  const ReadOnlyFile file(path);
  if (offset > file.size() || size > file.size() - offset)
    throw DataLossError(path + " has " + std::to_string(file.size()) + " bytes; asked for " + std::to_string(size) +
                        " at offset " + std::to_string(offset));
  return file.read(offset, size);
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
  std::string tmp = path + ".tmp-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw InternalError(sys_error("cannot create a file beside", path));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      ::close(fd);
      ::unlink(tmp.c_str());
      throw InternalError(sys_error("cannot write", tmp));
    }
    done += static_cast<size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0 && ::fchmod(fd, 0644) == 0;
  ::close(fd);
  if (!synced || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string error = sys_error("cannot put in place", path);
    ::unlink(tmp.c_str());
    throw InternalError(error);
  }
}

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr))
    throw InternalError("SHA-256 failed");
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

AtomicDirWriter::AtomicDirWriter(const std::string& target)
    : target_(fs::absolute(target).lexically_normal().string()) {
  while (!target_.empty() && target_.back() == '/') target_.pop_back();
  const fs::path parent = fs::path(target_).parent_path();
  std::error_code ec;
  fs::create_directories(parent, ec);
  std::string pattern = (parent / (fs::path(target_).filename().string() + ".tmp-XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) throw InternalError(sys_error("cannot create a directory beside", target_));
  tmp_ = pattern;
}

AtomicDirWriter::~AtomicDirWriter() {
  std::error_code ec;
  if (!tmp_.empty()) fs::remove_all(tmp_, ec);
}

void AtomicDirWriter::write(const std::string& name, const std::string& bytes) {
  const std::string path = tmp_ + "/" + name;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw InternalError(sys_error("cannot create", path));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      ::close(fd);
      throw InternalError(sys_error("cannot write", path));
    }
    done += static_cast<size_t>(n);
  }
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw InternalError(sys_error("fsync failed for", path));
}

void AtomicDirWriter::make_dir(const std::string& name) {
  const std::string path = tmp_ + "/" + name;
  if (::mkdir(path.c_str(), 0755) != 0) throw InternalError(sys_error("cannot create", path));
  dirs_.push_back(path);
}

void AtomicDirWriter::commit() {
  for (const std::string& d : dirs_) fsync_path(d, O_RDONLY | O_DIRECTORY);
  fsync_path(tmp_, O_RDONLY | O_DIRECTORY);
  std::error_code ec;
  if (fs::exists(target_, ec)) {
    if (!fs::is_directory(target_, ec)) throw InvalidArgumentError(target_ + " exists and is not a directory");
    // Swap the two directories in one step; the old model ends up at tmp_ and is removed.
    if (::renameat2(AT_FDCWD, tmp_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) != 0)
      throw InternalError(sys_error("cannot replace", target_));
  } else if (::rename(tmp_.c_str(), target_.c_str()) != 0) {
    throw InternalError(sys_error("cannot rename into", target_));
  } else {
    tmp_.clear();
  }
  fsync_path(fs::path(target_).parent_path().string(), O_RDONLY | O_DIRECTORY);
  committed_ = true;
}

}  // namespace kiln::io
