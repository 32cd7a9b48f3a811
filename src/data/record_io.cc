#include "data/record_io.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "core/crc32c.h"
#include "kiln/errors.h"

namespace kiln::data::detail {

Compression compression_of(const std::string& name) {
  if (name.empty()) return Compression::kNone;
  if (name == "GZIP") return Compression::kGzip;
  if (name == "ZLIB") return Compression::kZlib;
  throw InvalidArgumentError("Unsupported compression_type: " + name +
                             ". Supported compression types are \"GZIP\", \"ZLIB\" and \"\"");
}

namespace {
constexpr size_t kChunk = 64 * 1024;
int window_bits(Compression c) { return c == Compression::kGzip ? 16 + MAX_WBITS : MAX_WBITS; }
}  // namespace

struct ByteReader::Inflater {
  z_stream z{};
  std::string in;
  bool ended = false;
};

ByteReader::ByteReader(const std::string& path, Compression c) : path_(path), compression_(c) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw NotFoundError(path + "; No such file or directory");
  if (!S_ISREG(st.st_mode)) throw InvalidArgumentError(path + " is not a regular file");
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_) throw NotFoundError(path + "; could not be opened");
  if (c != Compression::kNone) {
    inflater_ = std::make_unique<Inflater>();
    if (inflateInit2(&inflater_->z, window_bits(c)) != Z_OK) {
      std::fclose(file_);
      throw InternalError("zlib could not start inflating " + path);
    }
    inflater_->in.resize(kChunk);
  }
}

ByteReader::~ByteReader() {
  if (inflater_) inflateEnd(&inflater_->z);
  if (file_) std::fclose(file_);
}

size_t ByteReader::fill_compressed(char* out, size_t n) {
  Inflater& f = *inflater_;
  size_t got = 0;
  while (got < n && !f.ended) {
    if (f.z.avail_in == 0) {
      const size_t r = std::fread(f.in.data(), 1, f.in.size(), file_);
      if (r == 0) {
        if (std::ferror(file_)) throw DataLossError(path_ + ": read error");
        throw DataLossError(path_ + ": the compressed stream ends early (truncated file)");
      }
      f.z.next_in = reinterpret_cast<Bytef*>(f.in.data());
      f.z.avail_in = static_cast<uInt>(r);
    }
    f.z.next_out = reinterpret_cast<Bytef*>(out + got);
    f.z.avail_out = static_cast<uInt>(n - got);
    const int rc = inflate(&f.z, Z_NO_FLUSH);
    got = n - f.z.avail_out;
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members (what appending writers make) continue the stream.
      if (f.z.avail_in == 0) {
        const int c = std::fgetc(file_);
        if (c == EOF) {
          f.ended = true;
          break;
        }
        std::ungetc(c, file_);
      }
      if (inflateReset(&f.z) != Z_OK) throw DataLossError(path_ + ": corrupt compressed stream");
      continue;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) throw DataLossError(path_ + ": corrupt compressed stream");
  }
  return got;
}

size_t ByteReader::read(char* out, size_t n) {
  size_t got = 0;
  while (got < n) {
    if (pos_ == buf_.size()) {  // refill: one fread or one inflate run per chunk, not per call
      buf_.resize(kChunk);
      size_t filled = 0;
      if (inflater_) {
        filled = fill_compressed(buf_.data(), buf_.size());
      } else {
        filled = std::fread(buf_.data(), 1, buf_.size(), file_);
        if (filled < buf_.size() && std::ferror(file_)) throw DataLossError(path_ + ": read error");
      }
      buf_.resize(filled);
      pos_ = 0;
      if (filled == 0) break;
    }
    const size_t take = std::min(n - got, buf_.size() - pos_);
    std::memcpy(out + got, buf_.data() + pos_, take);
    pos_ += take;
    got += take;
  }
  offset_ += got;
  return got;
}

namespace {

uint64_t le64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint32_t le32(const unsigned char* p) { return p[0] | (p[1] << 8) | (p[2] << 16) | (uint32_t{p[3]} << 24); }
void put_le(unsigned char* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

}  // namespace

bool read_record(ByteReader& in, std::string* record) {
  const uint64_t start = in.offset();
  unsigned char header[12];
  const size_t h = in.read(reinterpret_cast<char*>(header), sizeof header);
  if (h == 0) return false;
  const std::string where = " at " + std::to_string(start) + " in " + in.path();
  if (h < sizeof header) throw DataLossError("truncated record" + where);
  if (crc32c_mask(crc32c(header, 8)) != le32(header + 8)) throw DataLossError("corrupted record" + where);
  const uint64_t length = le64(header);
  record->clear();
  char buf[kChunk];
  uint64_t left = length;
  uint32_t crc = 0;
  while (left > 0) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(left, sizeof buf));
    const size_t got = in.read(buf, want);
    if (got < want) throw DataLossError("truncated record" + where);
    crc = crc32c_extend(crc, buf, got);
    record->append(buf, got);
    left -= got;
  }
  unsigned char footer[4];
  if (in.read(reinterpret_cast<char*>(footer), 4) < 4) throw DataLossError("truncated record" + where);
  if (crc32c_mask(crc) != le32(footer)) throw DataLossError("corrupted record" + where);
  return true;
}

bool read_line(ByteReader& in, std::string* line) {
  line->clear();
  char c;
  bool any = false;
  while (in.read(&c, 1) == 1) {
    any = true;
    if (c == '\n') break;
    line->push_back(c);
  }
  if (!any) return false;
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return true;
}

struct ByteWriter::Deflater {
  z_stream z{};
};

ByteWriter::ByteWriter(const std::string& path, Compression c) : path_(path), compression_(c) {
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) throw NotFoundError(path + "; could not be opened for writing");
  if (c != Compression::kNone) {
    deflater_ = std::make_unique<Deflater>();
    if (deflateInit2(&deflater_->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits(c), 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      std::fclose(file_);
      file_ = nullptr;
      throw InternalError("zlib could not start deflating " + path);
    }
  }
}

ByteWriter::~ByteWriter() {
  try {
    close();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw; close() reports
  }
}

void ByteWriter::deflate_out(const void* data, size_t n, int flush) {
  z_stream& z = deflater_->z;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<void*>(data));
  z.avail_in = static_cast<uInt>(n);
  unsigned char out[kChunk];
  do {
    z.next_out = out;
    z.avail_out = sizeof out;
    const int rc = deflate(&z, flush);
    if (rc == Z_STREAM_ERROR) throw InternalError("zlib failed while writing " + path_);
    const size_t produced = sizeof out - z.avail_out;
    if (produced && std::fwrite(out, 1, produced, file_) != produced) throw DataLossError(path_ + ": write failed");
  } while (z.avail_out == 0);
}

void ByteWriter::write(const void* data, size_t n) {
  if (!file_) throw FailedPreconditionError(path_ + " is closed");
  if (deflater_) {
    deflate_out(data, n, Z_NO_FLUSH);
    return;
  }
  if (std::fwrite(data, 1, n, file_) != n) throw DataLossError(path_ + ": write failed");
}

void ByteWriter::flush() {
  if (!file_) return;
  if (deflater_) deflate_out(nullptr, 0, Z_SYNC_FLUSH);
  if (std::fflush(file_) != 0) throw DataLossError(path_ + ": write failed");
}

void ByteWriter::close() {
  if (!file_) return;
  bool ok = true;
  if (deflater_) {
    try {
      deflate_out(nullptr, 0, Z_FINISH);
    } catch (...) {
      ok = false;
    }
    deflateEnd(&deflater_->z);
    deflater_.reset();
  }
  if (std::fclose(file_) != 0) ok = false;
  file_ = nullptr;
  if (!ok) throw DataLossError(path_ + ": write failed");
}

void write_record(ByteWriter& out, const std::string& record) {
  unsigned char header[12];
  put_le(header, record.size(), 8);
  put_le(header + 8, crc32c_mask(crc32c(header, 8)), 4);
  unsigned char footer[4];
  put_le(footer, crc32c_mask(crc32c(record.data(), record.size())), 4);
  out.write(header, sizeof header);
  out.write(record.data(), record.size());
  out.write(footer, sizeof footer);
}

}  // namespace kiln::data::detail
