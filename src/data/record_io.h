// Files as tf.data reads and writes them: a byte stream (plain, GZIP or ZLIB, TensorFlow's
// compression_type names), TFRecord framing (length, masked CRC-32C of the length, data,
// masked CRC-32C of the data) and text lines. Readers treat files as hostile: only regular
// files are opened, every length and checksum is checked before it is trusted, and a record
// grows as its bytes arrive (a forged length cannot make kiln allocate it up front).
#pragma once
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace kiln::data::detail {

// "", "GZIP" or "ZLIB"; InvalidArgumentError for anything else.
enum class Compression { kNone, kGzip, kZlib };
Compression compression_of(const std::string& name);

class ByteReader {
 public:
  // NotFoundError if the path is not a regular file that can be opened.
  ByteReader(const std::string& path, Compression c);
  ~ByteReader();
  ByteReader(const ByteReader&) = delete;
  ByteReader& operator=(const ByteReader&) = delete;
  // Up to n bytes into out; fewer only at the end of the stream. DataLossError for a
  // corrupt compressed stream.
  size_t read(char* out, size_t n);
  uint64_t offset() const { return offset_; }  // uncompressed bytes read so far
  const std::string& path() const { return path_; }

 private:
  size_t fill_compressed(char* out, size_t n);
  std::string path_;
  std::FILE* file_ = nullptr;
  Compression compression_;
  struct Inflater;
  std::unique_ptr<Inflater> inflater_;
  std::string buf_;  // bytes read (and inflated) ahead
  size_t pos_ = 0;
  uint64_t offset_ = 0;
};

// The next TFRecord's bytes into *record; false at a clean end of file. DataLossError for a
// truncated record or a checksum mismatch ("corrupted record at <offset>").
bool read_record(ByteReader& in, std::string* record);
// The next line without its "\n" (or "\r\n"); false at the end of the file.
bool read_line(ByteReader& in, std::string* line);

class ByteWriter {
 public:
  ByteWriter(const std::string& path, Compression c);
  ~ByteWriter();  // closes, swallowing errors (call close() to see them)
  ByteWriter(const ByteWriter&) = delete;
  ByteWriter& operator=(const ByteWriter&) = delete;
  void write(const void* data, size_t n);
  void flush();
  void close();

 private:
  void deflate_out(const void* data, size_t n, int flush);
  std::string path_;
  std::FILE* file_ = nullptr;
  Compression compression_;
  struct Deflater;
  std::unique_ptr<Deflater> deflater_;
};

void write_record(ByteWriter& out, const std::string& record);

}  // namespace kiln::data::detail
