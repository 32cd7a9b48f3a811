#include "io/sstable.h"

#include <cstdint>
#include <cstring>

#include "core/crc32c.h"
#include "io/limits.h"
#include "io/varint.h"
#include "kiln/errors.h"

namespace kiln::io {
namespace {

constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
constexpr size_t kFooterSize = 48;     // two block handles padded to 40 bytes, then the magic
constexpr size_t kTrailerSize = 5;     // compression type, masked CRC
constexpr size_t kBlockSize = 262144;  // TensorFlow's writer options
constexpr int kDataRestartInterval = 16;

void put_fixed32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// Entries with shared key prefixes, a restart point every `interval` entries.
class BlockBuilder {
 public:
  explicit BlockBuilder(int interval) : interval_(interval) {}
  void add(const std::string& key, const std::string& value) {
    size_t shared = 0;
    if (count_ % interval_ == 0) {
      restarts_.push_back(static_cast<uint32_t>(buf_.size()));
    } else {
      while (shared < key.size() && shared < last_key_.size() && key[shared] == last_key_[shared]) ++shared;
    }
    put_varint(buf_, shared);
    put_varint(buf_, key.size() - shared);
    put_varint(buf_, value.size());
    buf_.append(key, shared, std::string::npos);
    buf_ += value;
    last_key_ = key;
    ++count_;
  }
  size_t size_estimate() const { return buf_.size() + 4 * (restarts_.size() + 1); }
  bool empty() const { return count_ == 0; }
  std::string finish() {
    if (restarts_.empty()) restarts_.push_back(0);
    std::string out = std::move(buf_);
    for (uint32_t r : restarts_) put_fixed32(out, r);
    put_fixed32(out, static_cast<uint32_t>(restarts_.size()));
    buf_.clear();
    restarts_.clear();
    last_key_.clear();
    count_ = 0;
    return out;
  }

 private:
  int interval_;
  std::string buf_, last_key_;
  std::vector<uint32_t> restarts_;
  int64_t count_ = 0;
};

// Appends a block and its trailer; returns its handle (offset, size without the trailer).
std::string append_block(std::string& file, const std::string& contents) {
  std::string handle;
  put_varint(handle, file.size());
  put_varint(handle, contents.size());
  file += contents;
  const char type = 0;  // no compression
  uint32_t crc = crc32c(contents.data(), contents.size());
  crc = crc32c_extend(crc, &type, 1);
  file.push_back(type);
  put_fixed32(file, crc32c_mask(crc));
  return handle;
}

// The smallest key > `key` that is as short as possible (LevelDB's FindShortSuccessor).
std::string short_successor(std::string key) {
  for (size_t i = 0; i < key.size(); ++i)
    if (static_cast<unsigned char>(key[i]) != 0xff) {
      key[i] = static_cast<char>(static_cast<unsigned char>(key[i]) + 1);
      key.resize(i + 1);
      return key;
    }
  return key;  // all 0xff: the key itself is the bound
}

// -- reading ----------------------------------------------------------------------------------

[[noreturn]] void corrupt(const std::string& what) { throw DataLossError("checkpoint index table: " + what); }

struct Cursor {
  const unsigned char* p;
  const unsigned char* end;
  uint64_t varint(const char* what) {
    uint64_t v = 0;
    if (!get_varint64(p, end, &v)) corrupt(std::string("truncated or over-long varint in ") + what);
    return v;
  }
};

struct Handle {
  uint64_t offset, size;
};

Handle read_handle(Cursor& c) {
  Handle h{};
  h.offset = c.varint("block handle");
  h.size = c.varint("block handle");
  return h;
}

// The checked contents of the block at h.
std::string_view block_at(const std::string& file, Handle h, size_t data_end) {
  if (h.offset > data_end || h.size > data_end - h.offset || kTrailerSize > data_end - h.offset - h.size)
    corrupt("a block lies outside the file");
  const auto* base = reinterpret_cast<const unsigned char*>(file.data()) + h.offset;
  const unsigned char type = base[h.size];
  if (type != 0) corrupt("compressed block (type " + std::to_string(type) + "): TensorFlow writes none");
  uint32_t crc = crc32c(base, h.size + 1);
  if (crc32c_mask(crc) != get_fixed32(base + h.size + 1)) corrupt("block checksum mismatch");
  return {reinterpret_cast<const char*>(base), h.size};
}

// Every entry of a block, keys rebuilt from their shared prefixes.
// Keys are rebuilt in full, so their bytes are counted against kMaxTableKeyBytes each and
// `key_budget` in all: prefix sharing lets a small file spell out huge keys.
void read_block(std::string_view block, TableEntries& out, size_t max_entries, size_t& key_budget) {
  if (block.size() < 4) corrupt("block too short");
  const auto* base = reinterpret_cast<const unsigned char*>(block.data());
  const uint32_t num_restarts = get_fixed32(base + block.size() - 4);
  if (num_restarts == 0 || num_restarts > (block.size() - 4) / 4) corrupt("bad restart count");
  const size_t entries_end = block.size() - 4 - 4 * size_t{num_restarts};
  Cursor c{base, base + entries_end};
  std::string key;
  bool first = true;
  while (c.p < c.end) {
    const uint64_t shared = c.varint("entry"), non_shared = c.varint("entry"), value_len = c.varint("entry");
    if (shared > key.size() || (first && shared != 0)) corrupt("an entry shares more of the key than exists");
    const auto left = static_cast<uint64_t>(c.end - c.p);
    if (non_shared > left || value_len > left - non_shared) corrupt("an entry runs past its block");
    if (shared + non_shared > kMaxTableKeyBytes)
      corrupt("a key of " + std::to_string(shared + non_shared) + " bytes (at most " +
              std::to_string(kMaxTableKeyBytes) + ")");
    if (shared + non_shared > key_budget)
      corrupt("its keys spell out more than " + std::to_string(kMaxTableKeyTotalBytes) + " bytes");
    key_budget -= shared + non_shared;
    key.resize(shared);
    key.append(reinterpret_cast<const char*>(c.p), non_shared);
    c.p += non_shared;
    if (!out.empty() && !(out.back().first < key)) corrupt("keys out of order");
    if (out.size() >= max_entries) corrupt("more than " + std::to_string(max_entries) + " entries");
    out.emplace_back(key, std::string(reinterpret_cast<const char*>(c.p), value_len));
    c.p += value_len;
    first = false;
  }
}

}  // namespace

std::string build_table(const TableEntries& entries) {
  for (size_t i = 1; i < entries.size(); ++i)
    if (!(entries[i - 1].first < entries[i].first))
      throw InvalidArgumentError("table keys must be strictly increasing: \"" + entries[i].first + "\"");
  std::string file;
  BlockBuilder data(kDataRestartInterval), index(1);
  std::string last_key;
  auto flush = [&](const std::string* next_key) {
    const std::string handle = append_block(file, data.finish());
    // Any separator >= the block's last key and < the next block's first key is valid; the
    // last key itself is the simplest such (LevelDB shortens it; readers do not care).
    index.add(next_key ? last_key : short_successor(last_key), handle);
  };
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& [key, value] = entries[i];
    if (!data.empty() && data.size_estimate() >= kBlockSize) flush(&key);
    data.add(key, value);
    last_key = key;
  }
  if (!data.empty()) flush(nullptr);
  const std::string metaindex = append_block(file, BlockBuilder(kDataRestartInterval).finish());
  const std::string index_handle = append_block(file, index.finish());
  std::string footer = metaindex + index_handle;
  footer.resize(kFooterSize - 8, '\0');
  put_fixed32(footer, static_cast<uint32_t>(kTableMagic & 0xffffffffu));
  put_fixed32(footer, static_cast<uint32_t>(kTableMagic >> 32));
  return file + footer;
}

TableEntries read_table(const std::string& bytes, size_t max_entries) {
  if (bytes.size() < kFooterSize) corrupt("shorter than its footer");
  const size_t data_end = bytes.size() - kFooterSize;
  const auto* footer = reinterpret_cast<const unsigned char*>(bytes.data()) + data_end;
  const uint64_t magic = get_fixed32(footer + 40) | uint64_t{get_fixed32(footer + 44)} << 32;
  if (magic != kTableMagic) corrupt("bad magic number (not a TensorFlow checkpoint index)");
  Cursor fc{footer, footer + 40};
  (void)read_handle(fc);  // the metaindex: TensorFlow's tables have no filters or properties
  const Handle index_handle = read_handle(fc);
  TableEntries index;
  size_t key_budget = kMaxTableKeyTotalBytes;
  read_block(block_at(bytes, index_handle, data_end), index, max_entries, key_budget);
  TableEntries out;
  uint64_t next_free = 0;  // data blocks follow each other: each byte is checked at most once
  for (const auto& [separator, handle_bytes] : index) {
    Cursor hc{reinterpret_cast<const unsigned char*>(handle_bytes.data()),
              reinterpret_cast<const unsigned char*>(handle_bytes.data()) + handle_bytes.size()};
    const Handle h = read_handle(hc);
    if (h.offset < next_free) corrupt("data blocks overlap");
    next_free = h.offset + h.size;  // no overflow: block_at bounds both by the file size
    const size_t before = out.size();
    const std::string_view block = block_at(bytes, h, data_end);
    read_block(block, out, max_entries, key_budget);
    if (out.size() > before && separator < out.back().first) corrupt("an index key is below its block's keys");
  }
  return out;
}

}  // namespace kiln::io
