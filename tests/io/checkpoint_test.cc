// TensorBundle (TensorFlow's checkpoint format): CRC32C, the sorted string table, the writer
// and the reader, and the reader against hostile files. Interop with TensorFlow itself is in
// python/tests/test_checkpoint.py (TensorFlow reads what kiln writes, and the reverse).
#include <filesystem>
#include <fstream>

#include "core/crc32c.h"
#include "io/sstable.h"
#include "tensor_bundle.pb.h"
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;
namespace fs = std::filesystem;

namespace {

std::string temp_prefix(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("kiln_ckpt_" + std::to_string(::getpid()));
  return (dir / name / "ckpt").string();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

template <class T>
void expect_same_bits(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.shape(), want.shape());
  const auto a = got.to_vector<T>(), b = want.to_vector<T>();
  ASSERT_EQ(a.size(), b.size());
  if constexpr (std::is_same_v<T, bool>) {
    EXPECT_EQ(a, b);
  } else {
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(T)));
  }
}

}  // namespace

TEST(Crc32c, CheckValueAndMask) {
  EXPECT_EQ(crc32c("123456789", 9), 0xe3069283u);  // the CRC-32C check value
  EXPECT_EQ(crc32c("", 0), 0u);
  // Extending in pieces is the CRC of the whole.
  const std::string text = "kiln writes TensorFlow checkpoints, byte for byte";
  for (size_t cut = 0; cut <= text.size(); ++cut)
    EXPECT_EQ(crc32c_extend(crc32c(text.data(), cut), text.data() + cut, text.size() - cut),
              crc32c(text.data(), text.size()));
  for (uint32_t c : {0u, 1u, 0xe3069283u, 0xffffffffu}) EXPECT_EQ(crc32c_unmask(crc32c_mask(c)), c);
}

TEST(SortedTable, RoundTripAcrossBlocks) {
  io::TableEntries entries{{"", "header"}};
  // 3000 keys with shared prefixes and 300-byte values: several 256 KiB data blocks.
  for (int i = 0; i < 3000; ++i) {
    char key[32];
    std::snprintf(key, sizeof key, "layer/%05d/kernel", i);
    entries.emplace_back(key, std::string(300, static_cast<char>('a' + i % 26)));
  }
  const std::string table = io::build_table(entries);
  EXPECT_EQ(io::read_table(table, 1 << 20), entries);
  EXPECT_EQ(io::read_table(io::build_table({}), 10), io::TableEntries{});
  expect_error<DataLossError>([&] { io::read_table(table, 100); }, "more than 100 entries");
  expect_error<InvalidArgumentError>([] { io::build_table({{"b", ""}, {"a", ""}}); }, "strictly increasing");
}

// Every single-byte change is refused or, where no check covers the byte (the footer's
// padding), changes nothing; every truncation is refused.
TEST(SortedTable, EveryCorruptionIsCaught) {
  const io::TableEntries entries{{"", "h"}, {"a/b", "1234"}, {"a/c", "5678"}, {"z", std::string(40, 'x')}};
  const std::string table = io::build_table(entries);
  for (size_t i = 0; i < table.size(); ++i) {
    std::string bad = table;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    try {
      EXPECT_EQ(io::read_table(bad, 100), entries) << "byte " << i;
    } catch (const DataLossError&) {
    }
  }
  for (size_t n = 0; n < table.size(); ++n)
    EXPECT_THROW(io::read_table(table.substr(0, n), 100), DataLossError) << "truncated to " << n;
}

TEST(Checkpoint, WritesAndReadsEveryDtype) {
  const std::string prefix = temp_prefix("every_dtype");
  const std::vector<std::pair<std::string, Tensor>> tensors{
      {"dense/kernel/.ATTRIBUTES/VARIABLE_VALUE", constant<float>({1.5f, -0.0f, 3e-42f, 7}, {2, 2})},
      {"f64", constant<double>({1e300, -2.5}, {2})},
      {"i32", constant<int32_t>({-7, 1 << 30, 0}, {3, 1})},
      {"i64", constant<int64_t>({int64_t{1} << 40}, {})},
      {"flags", constant<bool>({true, false, true}, {3})},
      {"empty", zeros({0, 4})}};
  write_checkpoint(prefix, tensors);
  EXPECT_TRUE(fs::exists(prefix + ".index"));
  EXPECT_TRUE(fs::exists(prefix + ".data-00000-of-00001"));
  CheckpointReader r(prefix);
  EXPECT_EQ(r.tensor_names(), (std::vector<std::string>{"dense/kernel/.ATTRIBUTES/VARIABLE_VALUE", "empty", "f64",
                                                        "flags", "i32", "i64"}));
  EXPECT_EQ(r.dtype_name("f64"), "float64");
  EXPECT_EQ(r.dtype_name("flags"), "bool");
  EXPECT_EQ(r.shape("i32"), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(r.shape("i64"), (std::vector<int64_t>{}));
  EXPECT_TRUE(r.has_tensor("f64"));
  EXPECT_FALSE(r.has_tensor("nope"));
  expect_same_bits<float>(r.get_tensor("dense/kernel/.ATTRIBUTES/VARIABLE_VALUE"), tensors[0].second);
  expect_same_bits<double>(r.get_tensor("f64"), tensors[1].second);
  expect_same_bits<int32_t>(r.get_tensor("i32"), tensors[2].second);
  expect_same_bits<int64_t>(r.get_tensor("i64"), tensors[3].second);
  expect_same_bits<bool>(r.get_tensor("flags"), tensors[4].second);
  EXPECT_EQ(r.get_tensor("empty").shape(), TensorShape({0, 4}));
  expect_error<NotFoundError>([&] { r.get_tensor("nope"); }, "Key nope not found in checkpoint");
  expect_error<InvalidArgumentError>([&] { r.get_strings("f64"); }, "not string");
  // Writing again replaces the files whole.
  write_checkpoint(prefix, {{"only", constant(1.0f)}});
  EXPECT_EQ(CheckpointReader(prefix).tensor_names(), std::vector<std::string>{"only"});
}

TEST(Checkpoint, WriterRefusesBadNames) {
  const std::string prefix = temp_prefix("bad_names");
  expect_error<InvalidArgumentError>([&] { write_checkpoint(prefix, {{"", constant(1.0f)}}); }, "name is empty");
  expect_error<InvalidArgumentError>(
      [&] {
        write_checkpoint(prefix, {{"a", constant(1.0f)}, {"a", constant(2.0f)}});
      },
      "used twice");
  expect_error<InvalidArgumentError>([] { write_checkpoint("", {}); }, "prefix is empty");
  expect_error<NotFoundError>([&] { CheckpointReader(prefix + "_missing"); }, "cannot open");
}

TEST(Checkpoint, CorruptDataIsDataLoss) {
  const std::string prefix = temp_prefix("corrupt_data");
  write_checkpoint(prefix, {{"w", constant<float>({1, 2, 3, 4}, {4})}});
  const std::string data_path = prefix + ".data-00000-of-00001";
  std::string data = slurp(data_path);
  data[5] ^= 1;
  spit(data_path, data);
  CheckpointReader r(prefix);
  expect_error<DataLossError>([&] { r.get_tensor("w"); }, "checksum mismatch");
  spit(data_path, data.substr(0, 8));
  expect_error<DataLossError>([&] { r.get_tensor("w"); }, "asked for 16 at offset 0");
}

// Index entries that lie: each is refused with a typed error before any large allocation.
TEST(Checkpoint, HostileIndexEntries) {
  const std::string prefix = temp_prefix("hostile");
  write_checkpoint(prefix, {{"w", constant<float>({1, 2}, {2})}});
  tensorflow::BundleHeaderProto header;
  header.set_num_shards(1);
  header.mutable_version()->set_producer(1);
  auto index_with = [&](const tensorflow::BundleHeaderProto& h, const tensorflow::BundleEntryProto& e) {
    spit(prefix + ".index", io::build_table({{"", h.SerializeAsString()}, {"w", e.SerializeAsString()}}));
  };
  tensorflow::BundleEntryProto good;
  good.set_dtype(tensorflow::DT_FLOAT);
  good.mutable_shape()->add_dim()->set_size(2);
  good.set_size(8);
  good.set_crc32c(crc32c_mask(crc32c(slurp(prefix + ".data-00000-of-00001").data(), 8)));
  index_with(header, good);
  EXPECT_EQ(CheckpointReader(prefix).get_tensor("w").to_vector<float>(), (std::vector<float>{1, 2}));

  auto expect_refused = [&](auto mutate, const std::string& message, bool at_open) {
    tensorflow::BundleHeaderProto h = header;
    tensorflow::BundleEntryProto e = good;
    mutate(h, e);
    index_with(h, e);
    try {
      CheckpointReader r(prefix);
      if (at_open) ADD_FAILURE() << "accepted at open: " << message;
      r.get_tensor("w");
      ADD_FAILURE() << "accepted: " << message;
    } catch (const Error& err) {
      EXPECT_NE(std::string(err.what()).find(message), std::string::npos) << err.what();
    }
  };
  using H = tensorflow::BundleHeaderProto;
  using E = tensorflow::BundleEntryProto;
  expect_refused([](H& h, E&) { h.set_num_shards(0); }, "bad shard count", true);
  expect_refused([](H& h, E&) { h.set_endianness(H::BIG); }, "big-endian", true);
  expect_refused([](H& h, E&) { h.mutable_version()->set_min_consumer(7); }, "version 7 or later", true);
  expect_refused([](H&, E& e) { e.set_shard_id(3); }, "bad shard, offset, size or shape", true);
  expect_refused([](H&, E& e) { e.set_offset(-1); }, "bad shard, offset, size or shape", true);
  expect_refused([](H&, E& e) { e.mutable_shape()->set_unknown_rank(true); }, "bad shard", true);
  expect_refused(
      [](H&, E& e) {
        for (int i = 0; i < 40; ++i) e.mutable_shape()->add_dim()->set_size(1);
      },
      "bad shard", true);
  expect_refused(
      [](H&, E& e) {
        e.mutable_shape()->clear_dim();
        for (int i = 0; i < 3; ++i) e.mutable_shape()->add_dim()->set_size(int64_t{1} << 40);
      },
      "too many elements", true);
  expect_refused([](H&, E& e) { e.mutable_shape()->mutable_dim(0)->set_size(-2); }, "negative dimension", true);
  expect_refused([](H&, E& e) { e.set_size(12); }, "12 bytes for 2 elements", false);
  expect_refused([](H&, E& e) { e.set_offset(int64_t{1} << 50); }, "asked for 8 at offset", false);
  expect_refused([](H&, E& e) { e.set_crc32c(e.crc32c() + 1); }, "checksum mismatch", false);
  expect_refused([](H&, E& e) { e.set_dtype(tensorflow::DT_STRING); }, "size does not match its strings", false);
  expect_refused([](H&, E& e) { e.set_dtype(static_cast<tensorflow::DataType>(11)); }, "dtype 11, which kiln lacks",
                 false);
  // A variant's elements are objects: no file may hand kiln their bytes.
  expect_refused([](H&, E& e) { e.set_dtype(tensorflow::DT_VARIANT); }, "variant, which kiln lacks", false);
  expect_refused([](H&, E& e) { e.add_slices("x"); }, "partitioned", false);
  // String entries: more elements than bytes, and lengths that run past the entry.
  tensorflow::BundleEntryProto strings = good;
  strings.set_dtype(tensorflow::DT_STRING);
  strings.mutable_shape()->mutable_dim(0)->set_size(100);
  index_with(header, strings);
  expect_error<DataLossError>([&] { CheckpointReader(prefix).get_strings("w"); }, "too small for its elements");
  strings.mutable_shape()->mutable_dim(0)->set_size(1);
  index_with(header, strings);  // the float 1.0f's bytes 00 00 80 3f: length 0, then a 3-byte "checksum"
  expect_error<DataLossError>([&] { CheckpointReader(prefix).get_strings("w"); }, "does not match its strings");
  spit(prefix + ".index", io::build_table({{"w", good.SerializeAsString()}}));
  expect_error<DataLossError>([&] { CheckpointReader r(prefix); }, "no header entry");
  spit(prefix + ".index", io::build_table({{"", "\xff\xff"}, {"w", good.SerializeAsString()}}));
  expect_error<DataLossError>([&] { CheckpointReader r(prefix); }, "header entry does not parse");
}

TEST(ObjectCheckpoint, ObjectGraphRoundTripsAndBadReferencesFail) {
  const std::string prefix = temp_prefix("objects");
  const std::vector<CheckpointObject> graph = {
      {.children = {{.node = 1, .name = "w"}}, .values = {}},
      {.children = {},
       .values = {{.name = "VARIABLE_VALUE", .full_name = "w", .checkpoint_key = "w/.ATTRIBUTES/VARIABLE_VALUE"}}},
  };
  write_object_checkpoint(prefix, graph, {{"w/.ATTRIBUTES/VARIABLE_VALUE", constant(2.5f)}});
  CheckpointReader reader(prefix);
  const std::vector<CheckpointObject> back = read_object_graph(reader);
  ASSERT_EQ(back.size(), 2u);
  ASSERT_EQ(back[0].children.size(), 1u);
  EXPECT_EQ(back[0].children[0].node, 1);
  EXPECT_EQ(back[0].children[0].name, "w");
  ASSERT_EQ(back[1].values.size(), 1u);
  EXPECT_EQ(back[1].values[0].checkpoint_key, "w/.ATTRIBUTES/VARIABLE_VALUE");
  expect_tensor<float>(reader.get_tensor(back[1].values[0].checkpoint_key), {2.5f}, {});

  expect_error<InvalidArgumentError>([&] { write_object_checkpoint(prefix, {}, {}); }, "no root object");
  expect_error<InvalidArgumentError>(
      [&] { write_object_checkpoint(prefix, {{.children = {{.node = 3, .name = "x"}}, .values = {}}}, {}); },
      "child 'x'");
  write_checkpoint(prefix, {{"w", constant(1.0f)}});
  expect_error<NotFoundError>([&] { read_object_graph(CheckpointReader(prefix)); }, "no object graph");
  // One object whose child is node 7 of 1; then bytes that are no protobuf at all.
  write_checkpoint(prefix,
                   {{"_CHECKPOINTABLE_OBJECT_GRAPH", constant(std::string_view("\x0a\x04\x0a\x02\x08\x07", 6))}});
  expect_error<DataLossError>([&] { read_object_graph(CheckpointReader(prefix)); }, "-> node 7 of 1");
  write_checkpoint(prefix, {{"_CHECKPOINTABLE_OBJECT_GRAPH", constant("\x0a\x05garbage")}});
  expect_error<DataLossError>([&] { read_object_graph(CheckpointReader(prefix)); }, "not a TrackableObjectGraph");
}
