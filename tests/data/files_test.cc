// kiln::data's files and Example parsing from C++, with hostile inputs: TFRecord round trips
// (plain, GZIP, ZLIB), corrupt, truncated and forged-length records, text lines, the dataset
// ops over iterator handles, and KilnParseExample on mutated protos (the sanitizer builds run
// these too).
#include <kiln/data.h>

#include <cstdio>
#include <fstream>
#include <random>

#include "core/crc32c.h"
#include "core/tensor_impl.h"
#include "eager/execute.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace kiln;
namespace kd = kiln::data;

namespace {

std::string temp_path(const std::string& name) { return ::testing::TempDir() + "kiln_data_" + name; }

std::vector<std::string> strings(const kd::Dataset& ds) {
  std::vector<std::string> out;
  auto it = ds.make_iterator();
  std::vector<Tensor> e;
  while (it.next(&e)) out.push_back(e.at(0).item<std::string>());
  return out;
}

ConcreteFunction times_two() {
  auto f = function([](Tensor x) { return x * constant(int64_t{2}); });
  return f.get_concrete_function(TensorSpec{.shape = TensorShape(std::vector<int64_t>{}), .dtype = DType::Int64});
}

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << bytes;
}

TEST(DataFiles, TFRecordsRoundTripEveryCompression) {
  const std::vector<std::string> records = {"", "a", std::string(100000, 'z'), std::string("\0\1\2", 3)};
  for (const std::string c : {"", "GZIP", "ZLIB"}) {
    const std::string path = temp_path("rt_" + c);
    {
      kd::TFRecordWriter w(path, c);
      for (const auto& r : records) w.write(r);
    }
    EXPECT_EQ(strings(kd::tfrecords({path, path}, c)).size(), 2 * records.size());
    EXPECT_EQ(strings(kd::tfrecords({path}, c)), records);
  }
  EXPECT_THROW(kd::tfrecords({"x"}, "BZIP2"), InvalidArgumentError);
}

TEST(DataFiles, CorruptTruncatedAndForgedRecordsAreDataLoss) {
  const std::string path = temp_path("corrupt");
  {
    kd::TFRecordWriter w(path);
    w.write("first");
    w.write("second record");
  }
  const std::string good = read_all(path);
  auto second_fails = [&](const std::string& bytes) {
    write_all(path, bytes);
    auto it = kd::tfrecords({path}).make_iterator();
    std::vector<Tensor> e;
    EXPECT_TRUE(it.next(&e));
    EXPECT_EQ(e[0].item<std::string>(), "first");
    EXPECT_THROW(it.next(&e), DataLossError);
  };
  std::string flipped = good;
  flipped[flipped.size() - 6] ^= 0x40;  // the second record's data
  second_fails(flipped);
  second_fails(good.substr(0, good.size() - 3));  // truncated footer
  // A forged length whose length CRC is right: the reader must not allocate it up front.
  std::string forged = good.substr(0, 8 + 4 + 5 + 4);
  std::string length(8, '\0');
  const uint64_t huge = uint64_t{1} << 60;
  for (int i = 0; i < 8; ++i) length[i] = static_cast<char>(huge >> (8 * i));
  const uint32_t crc = crc32c_mask(crc32c(length.data(), 8));
  std::string crc_bytes(4, '\0');
  for (int i = 0; i < 4; ++i) crc_bytes[i] = static_cast<char>(crc >> (8 * i));
  forged += length + crc_bytes + "tail";
  second_fails(forged);
  EXPECT_THROW(strings(kd::tfrecords({temp_path("no_such_file")})), NotFoundError);
}

TEST(DataFiles, TextLines) {
  const std::string path = temp_path("lines");
  write_all(path, "one\ntwo\r\n\nthree");
  EXPECT_EQ(strings(kd::text_lines({path})), (std::vector<std::string>{"one", "two", "", "three"}));
  EXPECT_THROW(strings(kd::text_lines({::testing::TempDir()})), InvalidArgumentError);  // a directory
}

TEST(DataFiles, IteratorHandlesAndOptionals) {
  Tensor ds = kd::as_variant(kd::range(0, 2, 1));
  Tensor it = kd::make_iterator(ds);
  const std::vector<TensorSpec> spec = {{.shape = TensorShape(std::vector<int64_t>{}), .dtype = DType::Int64}};
  EXPECT_EQ(kd::iterator_get_next(it, spec).at(0).item<int64_t>(), 0);
  Tensor opt = kd::iterator_get_next_as_optional(it);
  EXPECT_TRUE(kd::optional_has_value(opt).item<bool>());
  EXPECT_EQ(kd::optional_get_value(opt, spec).at(0).item<int64_t>(), 1);
  Tensor none = kd::iterator_get_next_as_optional(it);
  EXPECT_FALSE(kd::optional_has_value(none).item<bool>());
  EXPECT_THROW(kd::optional_get_value(none, spec), InvalidArgumentError);
  EXPECT_THROW(kd::iterator_get_next(it, spec), OutOfRangeError);
  EXPECT_THROW(kd::make_iterator(constant(1.0f)), InvalidArgumentError);
  EXPECT_THROW(kd::iterator_get_next(ds, spec), InvalidArgumentError);  // a dataset is not an iterator
}

TEST(DataFiles, OptionalsMadeFromValuesAndEmpty) {
  const std::vector<TensorSpec> spec = {{.shape = TensorShape({2}), .dtype = DType::Float32},
                                        {.shape = TensorShape(std::vector<int64_t>{}), .dtype = DType::Int64}};
  Tensor opt = kd::optional_from_value({constant(std::vector<float>{1.0f, 2.0f}), constant(int64_t{7})});
  EXPECT_TRUE(kd::optional_has_value(opt).item<bool>());
  const std::vector<Tensor> value = kd::optional_get_value(opt, spec);
  EXPECT_EQ(value.at(0).to_vector<float>(), (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(value.at(1).item<int64_t>(), 7);
  EXPECT_THROW(kd::optional_get_value(opt, {spec[1], spec[0]}), InvalidArgumentError);  // other specs
  Tensor none = kd::optional_none();
  EXPECT_FALSE(kd::optional_has_value(none).item<bool>());
  EXPECT_THROW(kd::optional_get_value(none, spec), InvalidArgumentError);
  // Traced: the optional is a variant of the graph, its value read back by the function.
  auto f = function([](const Tensor& x) {
    Tensor o = kd::optional_from_value({x * x});
    return kd::optional_get_value(o, {{.shape = TensorShape({3}), .dtype = DType::Float32}}).at(0);
  });
  EXPECT_EQ(f(constant(std::vector<float>{1.0f, 2.0f, 3.0f})).to_vector<float>(),
            (std::vector<float>{1.0f, 4.0f, 9.0f}));
}

TEST(DataFiles, IteratorPositionsAndRestores) {
  Tensor it = kd::make_iterator(kd::as_variant(kd::map(kd::range(0, 10, 1), times_two())));
  std::vector<Tensor> e;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(kd::iterator_next(it, &e));
  EXPECT_EQ(kd::iterator_position(it), 3);
  kd::iterator_restore(it, 1);  // a new pass, replayed to element 1
  ASSERT_TRUE(kd::iterator_next(it, &e));
  EXPECT_EQ(e.at(0).item<int64_t>(), 2);
  EXPECT_EQ(kd::iterator_position(it), 2);
  kd::iterator_restore(it, 50);  // past the end: the pass is over
  EXPECT_FALSE(kd::iterator_next(it, &e));
  EXPECT_EQ(kd::iterator_position(it), 10);
  EXPECT_THROW(kd::iterator_restore(it, -1), InvalidArgumentError);
  EXPECT_THROW(kd::iterator_position(constant(1.0f)), InvalidArgumentError);
}

// The parse and CSV rows are variadic: called with fewer than their fixed inputs (as the kernel
// fuzzer calls them) they refuse before reading an input that is not there.
TEST(DataFiles, VariadicParseRowsCheckTheirFixedInputs) {
  Tensor s = constant("x");
  const ops::TensorImpl* one[] = {detail::impl_of(s)};
  const ops::TensorImpl* two[] = {detail::impl_of(s), detail::impl_of(s)};
  EXPECT_THROW(eager::execute(ops::op::KilnParseExample(), one, 1, {}), InvalidArgumentError);
  EXPECT_THROW(eager::execute(ops::op::KilnParseExample(), two, 2, {}), InvalidArgumentError);
  EXPECT_THROW(eager::execute(ops::op::KilnDecodeCSV(), one, 0, {}), InvalidArgumentError);
}

// Protobuf wire bytes for the test's Examples.
std::string varint(uint64_t v) {
  std::string out;
  do {
    out.push_back(static_cast<char>((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
    v >>= 7;
  } while (v);
  return out;
}
std::string field(int number, const std::string& payload) {
  return varint(number << 3 | 2) + varint(payload.size()) + payload;
}
std::string example(const std::string& key, int list_field, const std::string& list) {
  const std::string feature = field(list_field, list);
  const std::string entry = field(1, key) + field(2, feature);
  return field(1, field(1, entry));
}

TEST(DataFiles, ParseExampleReadsAndSurvivesMutations) {
  const std::string ints = field(1, varint(3) + varint(uint64_t(-4)) + varint(5));  // packed int64
  const std::string good = example("x", 3, ints);
  const std::vector<TensorSpec> dense = {{.shape = TensorShape({3}), .dtype = DType::Int64}};
  auto parsed = kd::parse_example(constant(good), {"x"}, {zeros({0}, DType::Int64)}, dense, {"x"}, {DType::Int64});
  EXPECT_EQ(parsed.dense_values[0].to_vector<int64_t>(), (std::vector<int64_t>{3, -4, 5}));
  EXPECT_EQ(parsed.sparse_values[0].to_vector<int64_t>(), (std::vector<int64_t>{3, -4, 5}));
  EXPECT_EQ(parsed.sparse_shapes[0].to_vector<int64_t>(), (std::vector<int64_t>{3}));
  EXPECT_THROW(kd::parse_example(constant(good), {"y"}, {zeros({0}, DType::Int64)}, dense, {}, {}),
               InvalidArgumentError);  // required and missing
  std::mt19937 rng(7);
  int parsed_ok = 0, refused = 0;
  for (int round = 0; round < 2000; ++round) {
    std::string bytes = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    bytes.resize(rng() % (bytes.size() + 1));
    try {
      kd::parse_example(constant(bytes), {"x"}, {constant<int64_t>({0, 0, 0}, {3})}, dense, {"x"}, {DType::Int64});
      ++parsed_ok;
    } catch (const InvalidArgumentError&) {
      ++refused;
    }
  }
  EXPECT_EQ(parsed_ok + refused, 2000);
  EXPECT_GT(refused, 0);
}

}  // namespace
