// Datasets on disk from C++: save/load round trips (strings, shapes, shards, GZIP), the file
// cache, and hostile saved directories: every mutated shard or metadata file either loads or
// raises a kiln error, never crashes (the sanitizer builds run these too).
#include <kiln/data.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <utility>

#include "test_util.h"

using namespace kiln;
namespace kd = kiln::data;
namespace fs = std::filesystem;

namespace {

std::string fresh_dir(const std::string& name) {
  const std::string path = ::testing::TempDir() + "kiln_saved_" + name;
  fs::remove_all(path);
  return path;
}

std::vector<std::vector<Tensor>> all(const kd::Dataset& ds) {
  std::vector<std::vector<Tensor>> out;
  auto it = ds.make_iterator();
  std::vector<Tensor> e;
  while (it.next(&e)) out.push_back(std::exchange(e, {}));
  return out;
}

std::string first_snapshot(const std::string& dir) {
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.path().extension() == ".snapshot") return entry.path().string();
  return "";
}

kd::Dataset numbers_and_words() {
  return kd::from_tensor_slices(
      {constant<int64_t>({1, 2, 3, 4, 5}, {5}),
       constant(std::vector<std::string>{"", "a", "bb", std::string(300, 'c'), "\x01"}, {5})});
}

TEST(SavedDataset, RoundTripsEveryCompressionWithTheSpecItWrote) {
  for (const std::string c : {"", "GZIP", "ZLIB"}) {
    const std::string dir = fresh_dir("round" + c);
    kd::save(numbers_and_words(), dir, {.compression = c, .structure_json = "", .shard_by_first_component = false});
    kd::Dataset loaded = kd::load(dir, c);
    ASSERT_EQ(loaded.element_spec().size(), 2u);
    EXPECT_EQ(loaded.element_spec()[1].dtype, DType::String);
    EXPECT_EQ(loaded.cardinality(), 5);
    auto rows = all(loaded);
    ASSERT_EQ(rows.size(), 5u);
    EXPECT_EQ(rows[3][0].item<int64_t>(), 4);
    EXPECT_EQ(rows[3][1].item<std::string>(), std::string(300, 'c'));
    EXPECT_EQ(rows[0][1].item<std::string>(), "");
  }
}

TEST(SavedDataset, ShardsByTheFirstComponentAndInterleavesThem) {
  const std::string dir = fresh_dir("shards");
  // (x % 2, x): the shard index is dropped from what is saved.
  kd::Dataset r = kd::range(0, 6, 1);
  kd::Dataset tagged = kd::zip({kd::from_tensor_slices({constant<int64_t>({0, 1, 0, 1, 0, 1}, {6})}), r});
  kd::save(tagged, dir, {.compression = "", .structure_json = "", .shard_by_first_component = true});
  kd::Dataset loaded = kd::load(dir);
  ASSERT_EQ(loaded.element_spec().size(), 1u);
  std::vector<int64_t> got;
  for (auto& e : all(loaded)) got.push_back(e[0].item<int64_t>());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_THROW(
      kd::save(r, fresh_dir("badshard"), {.compression = "", .structure_json = "", .shard_by_first_component = true}),
      InvalidArgumentError);
}

TEST(SavedDataset, FileCacheWritesOnceAndReadsAfter) {
  const std::string dir = fresh_dir("cache");
  fs::create_directories(dir);
  kd::Dataset cached = kd::cache(numbers_and_words(), dir + "/c");
  {
    auto it = cached.make_iterator();  // an unfinished pass leaves nothing
    std::vector<Tensor> e;
    ASSERT_TRUE(it.next(&e));
  }
  EXPECT_TRUE(fs::is_empty(dir));
  EXPECT_EQ(all(cached).size(), 5u);
  EXPECT_TRUE(fs::is_regular_file(dir + "/c.kiln-cache"));
  EXPECT_EQ(all(cached)[4][1].item<std::string>(), "\x01");
}

TEST(SavedDataset, MutatedFilesLoadOrRaiseNeverCrash) {
  const std::string dir = fresh_dir("hostile");
  kd::save(numbers_and_words(), dir);
  const std::string shard = first_snapshot(dir);
  const std::string metadata = dir + "/snapshot.metadata";
  std::string good_shard, good_meta;
  {
    std::ifstream a(shard, std::ios::binary), b(metadata, std::ios::binary);
    good_shard.assign(std::istreambuf_iterator<char>(a), {});
    good_meta.assign(std::istreambuf_iterator<char>(b), {});
  }
  std::mt19937 rng(11);
  int loaded = 0, refused = 0;
  for (int round = 0; round < 400; ++round) {
    const bool meta = round % 4 == 0;
    std::string bytes = meta ? good_meta : good_shard;
    for (int k = 0, n = 1 + static_cast<int>(rng() % 3); k < n; ++k) bytes[rng() % bytes.size()] ^= 1 << (rng() % 8);
    if (rng() % 3 == 0) bytes.resize(rng() % (bytes.size() + 1));
    std::ofstream(meta ? metadata : shard, std::ios::binary | std::ios::trunc) << bytes;
    try {
      all(kd::load(dir));
      ++loaded;
    } catch (const Error&) {
      ++refused;
    }
    std::ofstream(meta ? metadata : shard, std::ios::binary | std::ios::trunc) << (meta ? good_meta : good_shard);
  }
  EXPECT_EQ(loaded + refused, 400);
  EXPECT_GT(refused, 0);
  EXPECT_EQ(all(kd::load(dir)).size(), 5u);
}

TEST(SavedDataset, MissingAndUnfinishedSaves) {
  EXPECT_THROW(kd::load(fresh_dir("none")), NotFoundError);
  EXPECT_THROW(kd::save(kd::window(kd::range(0, 4, 1), 2, 2), fresh_dir("variant")), InvalidArgumentError);
}

}  // namespace
