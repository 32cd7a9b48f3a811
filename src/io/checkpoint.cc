// TensorBundle, TensorFlow's checkpoint format: see include/kiln/checkpoint.h. Layout facts
// (field numbers, the table format, string encoding) are TensorFlow's; the code is kiln's.
#include "kiln/checkpoint.h"

#include <cstring>
#include <filesystem>
#include <map>

#include "core/crc32c.h"
#include "core/dtype_table.h"
#include "core/object_value.h"
#include "core/tensor_impl.h"
#include "graph/graph_def.h"
#include "io/bundle.h"
#include "io/files.h"
#include "io/limits.h"
#include "io/proto_values.h"
#include "io/sstable.h"
#include "io/varint.h"
#include "tensor_bundle.pb.h"  // generated from src/io/proto/tensor_bundle.proto

namespace kiln {
namespace {

constexpr size_t kMaxIndexBytes = size_t{1} << 30;
constexpr size_t kMaxIndexEntries = size_t{1} << 22;
constexpr int kMaxShards = 1 << 16;
constexpr int kBundleVersion = 1;  // TensorFlow's kTensorBundleVersion

std::string data_file(const std::string& prefix, int shard, int num_shards) {
  char suffix[48];
  std::snprintf(suffix, sizeof suffix, ".data-%05d-of-%05d", shard, num_shards);
  return prefix + suffix;
}

// TensorFlow's names (tf.DType.name) for the dtypes a checkpoint may hold.
std::string tf_dtype_name(int code) {
  static const std::map<int, const char*> names = {
      {1, "float32"},     {2, "float64"},   {3, "int32"},     {4, "uint8"},    {5, "int16"},     {6, "int8"},
      {7, "string"},      {8, "complex64"}, {9, "int64"},     {10, "bool"},    {14, "bfloat16"}, {17, "uint16"},
      {18, "complex128"}, {19, "float16"},  {20, "resource"}, {21, "variant"}, {22, "uint32"},   {23, "uint64"}};
  const auto it = names.find(code);
  return it == names.end() ? "dtype " + std::to_string(code) : it->second;
}

// A string entry: [varint64 length per element][fixed32: masked CRC of the lengths, each as
// 4 little-endian bytes (8 above 2^32 - 1)][the strings' bytes]. The entry's CRC covers the
// lengths in that fixed-width form, the 4 checksum bytes and the strings. Sets e's size and
// crc32c and appends the bytes to `data`.
void append_strings(const std::vector<std::string_view>& values, tensorflow::BundleEntryProto& e, std::string& data) {
  std::string bytes;
  uint32_t length_crc = 0;
  for (std::string_view value : values) {
    for (uint64_t v = value.size();; v >>= 7) {
      if (v < 0x80) {
        bytes += static_cast<char>(v);
        break;
      }
      bytes += static_cast<char>((v & 0x7f) | 0x80);
    }
    unsigned char fixed[8];
    const size_t width = value.size() > 0xffffffffull ? 8 : 4;
    for (size_t i = 0; i < width; ++i) fixed[i] = static_cast<unsigned char>(uint64_t{value.size()} >> (8 * i));
    length_crc = crc32c_extend(length_crc, fixed, width);
  }
  const uint32_t masked = crc32c_mask(length_crc);
  unsigned char stored[4];
  for (int i = 0; i < 4; ++i) stored[i] = static_cast<unsigned char>(masked >> (8 * i));
  uint32_t crc = crc32c_extend(length_crc, stored, 4);  // the entry's CRC starts as the lengths'

  bytes.append(reinterpret_cast<const char*>(stored), 4);
  for (std::string_view value : values) {
    crc = crc32c_extend(crc, value.data(), value.size());
    bytes += value;
  }
  e.set_size(static_cast<int64_t>(bytes.size()));
  e.set_crc32c(crc32c_mask(crc));
  data += bytes;
}

}  // namespace

namespace io {

BundleFiles build_bundle(const std::vector<std::pair<std::string, Tensor>>& tensors,
                         const std::vector<std::pair<std::string, std::string>>& strings) {
  std::map<std::string, tensorflow::BundleEntryProto> entries;
  BundleFiles out;
  auto add = [&](const std::string& name, tensorflow::BundleEntryProto e, const std::string& caller) {
    if (name.empty()) throw InvalidArgumentError(caller + ": a tensor name is empty (reserved for the header)");
    if (entries.count(name)) throw InvalidArgumentError(caller + ": the name \"" + name + "\" is used twice");
    entries.emplace(name, std::move(e));
  };
  for (const auto& [name, tensor] : tensors) {
    const detail::TensorImpl& t = detail::concrete(tensor);
    tensorflow::BundleEntryProto e;
    e.set_dtype(static_cast<tensorflow::DataType>(graph::dtype_to_proto(t.dtype)));
    for (int64_t d : t.dims) e.mutable_shape()->add_dim()->set_size(d);
    e.set_offset(static_cast<int64_t>(out.data.size()));
    if (t.dtype == DType::String) {
      std::vector<std::string_view> values(static_cast<size_t>(t.num_elements));
      for (size_t i = 0; i < values.size(); ++i) values[i] = detail::string_of(t.as<detail::ObjectValue*>()[i]);
      append_strings(values, e, out.data);
    } else {
      if (!detail::has_values(t.dtype))
        throw InvalidArgumentError("write_checkpoint: \"" + name + "\" is a " + std::string(dtype_name(t.dtype)) +
                                   " tensor, which has no stored form");
      const size_t nbytes = static_cast<size_t>(t.num_elements) * dtype_size(t.dtype);
      e.set_size(static_cast<int64_t>(nbytes));
      e.set_crc32c(crc32c_mask(crc32c(t.data, nbytes)));
      out.data.append(static_cast<const char*>(t.data), nbytes);
    }
    add(name, std::move(e), "write_checkpoint");
  }
  for (const auto& [name, value] : strings) {
    tensorflow::BundleEntryProto e;
    e.set_dtype(tensorflow::DT_STRING);
    e.mutable_shape();  // a scalar
    e.set_offset(static_cast<int64_t>(out.data.size()));
    append_strings({std::string_view(value)}, e, out.data);
    add(name, std::move(e), "build_bundle");
  }
  io::TableEntries table;
  tensorflow::BundleHeaderProto header;
  header.set_num_shards(1);
  header.set_endianness(tensorflow::BundleHeaderProto::LITTLE);
  header.mutable_version()->set_producer(kBundleVersion);
  table.emplace_back("", header.SerializeAsString());
  for (const auto& [name, e] : entries) table.emplace_back(name, e.SerializeAsString());
  out.index = io::build_table(table);
  return out;
}

std::string bundle_data_file(const std::string& prefix) { return data_file(prefix, 0, 1); }

}  // namespace io

struct CheckpointReader::Impl {
  std::string prefix;
  std::shared_ptr<const std::string> data;  // the one data file, when read from memory
  int num_shards = 1;
  std::map<std::string, tensorflow::BundleEntryProto> entries;

  const tensorflow::BundleEntryProto& entry(const std::string& name) const {
    const auto it = entries.find(name);
    if (it == entries.end()) throw NotFoundError("Key " + name + " not found in checkpoint " + prefix);
    return it->second;
  }
  std::string where(const std::string& name) const { return "checkpoint " + prefix + ", tensor \"" + name + "\""; }

  // The entry's element count from its (checked) shape.
  uint64_t elements(const std::string& name, const tensorflow::BundleEntryProto& e) const {
    uint64_t n = 1;
    for (const auto& d : e.shape().dim()) {
      if (d.size() < 0) throw DataLossError(where(name) + ": negative dimension");
      const auto size = static_cast<uint64_t>(d.size());
      if (size != 0 && n > io::kMaxElements / size) throw DataLossError(where(name) + ": too many elements");
      n *= size;
    }
    return n;
  }

  // The entry's bytes as stored.
  std::string range(const tensorflow::BundleEntryProto& e) const {
    const auto offset = static_cast<uint64_t>(e.offset()), size = static_cast<uint64_t>(e.size());
    if (!data) return io::read_file_range(data_file(prefix, e.shard_id(), num_shards), offset, size);
    if (offset > data->size() || size > data->size() - offset)
      throw DataLossError("checkpoint " + prefix + ": an entry runs past the end of the data");
    return data->substr(offset, size);
  }
  // The entry's bytes, checksum-verified.
  std::string bytes(const std::string& name, const tensorflow::BundleEntryProto& e) const {
    std::string b = range(e);
    if (crc32c_mask(crc32c(b.data(), b.size())) != e.crc32c())
      throw DataLossError(where(name) + ": checksum mismatch (the data file is corrupt)");
    return b;
  }
};

CheckpointReader::CheckpointReader(const std::string& prefix)
    : CheckpointReader(prefix, io::read_file(prefix + ".index", kMaxIndexBytes), nullptr) {}

CheckpointReader CheckpointReader::from_bytes(const std::string& index, std::string data) {
  return CheckpointReader("(in memory)", index, std::make_shared<const std::string>(std::move(data)));
}

CheckpointReader::CheckpointReader(const std::string& prefix, const std::string& index,
                                   std::shared_ptr<const std::string> data) {
  auto impl = std::make_shared<Impl>();
  impl->prefix = prefix;
  impl->data = std::move(data);
  if (index.size() > kMaxIndexBytes) throw DataLossError("checkpoint " + prefix + ": the index is too large");
  const io::TableEntries table = io::read_table(index, kMaxIndexEntries);
  if (table.empty() || !table.front().first.empty())
    throw DataLossError("checkpoint " + prefix + ": the index has no header entry");
  tensorflow::BundleHeaderProto header;
  if (!header.ParseFromString(table.front().second))
    throw DataLossError("checkpoint " + prefix + ": the header entry does not parse");
  if (header.num_shards() < 1 || header.num_shards() > kMaxShards)
    throw DataLossError("checkpoint " + prefix + ": bad shard count " + std::to_string(header.num_shards()));
  if (header.endianness() != tensorflow::BundleHeaderProto::LITTLE)
    throw UnimplementedError("checkpoint " + prefix + " was written on a big-endian machine");
  const auto& version = header.version();
  if (version.min_consumer() > kBundleVersion)
    throw UnimplementedError("checkpoint " + prefix + " needs a reader of version " +
                             std::to_string(version.min_consumer()) + " or later");
  for (int bad : version.bad_consumers())
    if (bad == kBundleVersion) throw UnimplementedError("checkpoint " + prefix + " refuses this reader's version");
  impl->num_shards = header.num_shards();
  if (impl->data && impl->num_shards != 1)
    throw DataLossError("checkpoint " + prefix + ": " + std::to_string(impl->num_shards) + " shards, one was given");
  for (size_t i = 1; i < table.size(); ++i) {
    const std::string& name = table[i].first;
    tensorflow::BundleEntryProto e;
    if (!e.ParseFromString(table[i].second)) throw DataLossError(impl->where(name) + ": the entry does not parse");
    if (e.shard_id() < 0 || e.shard_id() >= impl->num_shards || e.offset() < 0 || e.size() < 0 ||
        e.shape().unknown_rank() || static_cast<size_t>(e.shape().dim_size()) > io::kMaxRank)
      throw DataLossError(impl->where(name) + ": bad shard, offset, size or shape");
    (void)impl->elements(name, e);
    impl->entries.emplace(name, std::move(e));
  }
  impl_ = std::move(impl);
}

std::vector<std::string> CheckpointReader::tensor_names() const {
  std::vector<std::string> names;
  names.reserve(impl_->entries.size());
  for (const auto& kv : impl_->entries) names.push_back(kv.first);
  return names;
}

bool CheckpointReader::has_tensor(const std::string& name) const { return impl_->entries.count(name) != 0; }

std::string CheckpointReader::dtype_name(const std::string& name) const {
  return tf_dtype_name(impl_->entry(name).dtype());
}

std::vector<int64_t> CheckpointReader::shape(const std::string& name) const {
  std::vector<int64_t> dims;
  for (const auto& d : impl_->entry(name).shape().dim()) dims.push_back(d.size());
  return dims;
}

Tensor CheckpointReader::get_tensor(const std::string& name) const {
  const auto& e = impl_->entry(name);
  if (e.slices_size() != 0) throw UnimplementedError(impl_->where(name) + " is partitioned (slices)");
  DType dtype{};
  if (!io::kiln_dtype_of(e.dtype(), &dtype))
    throw UnimplementedError(impl_->where(name) + " has dtype " + tf_dtype_name(e.dtype()) + ", which kiln lacks");
  Dims dims;
  for (const auto& d : e.shape().dim()) dims.push_back(d.size());
  if (dtype == DType::String) {
    const std::vector<std::string> strings = get_strings(name);
    detail::TensorImpl* impl = detail::make_concrete(dtype, dims);
    Tensor t(impl);
    auto** out = impl->as<detail::ObjectValue*>();
    for (size_t i = 0; i < strings.size(); ++i) out[i] = detail::make_string(strings[i]);
    return t;
  }
  const uint64_t n = impl_->elements(name, e);
  if (static_cast<uint64_t>(e.size()) != n * dtype_size(dtype))
    throw DataLossError(impl_->where(name) + ": " + std::to_string(e.size()) + " bytes for " + std::to_string(n) +
                        " elements of " + tf_dtype_name(e.dtype()));
  const std::string b = impl_->bytes(name, e);
  detail::TensorImpl* impl = detail::make_concrete(dtype, dims);
  Tensor t(impl);
  std::memcpy(impl->data, b.data(), b.size());
  if (dtype == DType::Bool)  // one byte each; anything but 0 is true
    for (uint64_t i = 0; i < n; ++i) static_cast<unsigned char*>(impl->data)[i] = b[i] != 0;
  return t;
}

// [varint64 length per element][fixed32: masked CRC of the lengths as little-endian uint32
// (uint64 above 2^32 - 1)][the strings' bytes]. The entry's CRC covers the lengths in that
// fixed-width form, the 4 checksum bytes and the strings.
std::vector<std::string> CheckpointReader::get_strings(const std::string& name) const {
  const auto& e = impl_->entry(name);
  if (e.dtype() != tensorflow::DT_STRING)
    throw InvalidArgumentError(impl_->where(name) + " has dtype " + tf_dtype_name(e.dtype()) + ", not string");
  if (e.slices_size() != 0) throw UnimplementedError(impl_->where(name) + " is partitioned (slices)");
  const uint64_t n = impl_->elements(name, e);
  if (n > static_cast<uint64_t>(e.size())) throw DataLossError(impl_->where(name) + ": too small for its elements");
  const std::string b = impl_->range(e);
  const auto* p = reinterpret_cast<const unsigned char*>(b.data());
  const auto* end = p + b.size();
  std::vector<uint64_t> lengths(static_cast<size_t>(n));
  uint32_t length_crc = 0, entry_crc = 0;
  uint64_t total = 0;
  for (auto& len : lengths) {
    uint64_t v = 0;
    if (!io::get_varint64(p, end, &v)) throw DataLossError(impl_->where(name) + ": bad string length");
    len = v;
    if (v > b.size() || total > b.size() - v) throw DataLossError(impl_->where(name) + ": strings run past the entry");
    total += v;
    unsigned char fixed[8];
    const size_t width = v > 0xffffffffull ? 8 : 4;
    for (size_t i = 0; i < width; ++i) fixed[i] = static_cast<unsigned char>(v >> (8 * i));
    length_crc = crc32c_extend(length_crc, fixed, width);
    entry_crc = crc32c_extend(entry_crc, fixed, width);
  }
  if (end - p < 4 || static_cast<uint64_t>(end - p - 4) != total)
    throw DataLossError(impl_->where(name) + ": the entry's size does not match its strings");
  const uint32_t stored = io::get_fixed32(p);
  if (stored != crc32c_mask(length_crc)) throw DataLossError(impl_->where(name) + ": string length checksum mismatch");
  entry_crc = crc32c_extend(entry_crc, p, 4);
  p += 4;
  entry_crc = crc32c_extend(entry_crc, p, static_cast<size_t>(total));
  if (crc32c_mask(entry_crc) != e.crc32c()) throw DataLossError(impl_->where(name) + ": checksum mismatch");
  std::vector<std::string> out;
  out.reserve(lengths.size());
  for (uint64_t len : lengths) {
    out.emplace_back(reinterpret_cast<const char*>(p), static_cast<size_t>(len));
    p += len;
  }
  return out;
}

}  // namespace kiln
