// libFuzzer target for the file readers. The first input byte picks which file the rest of
// the input replaces (or, selector 5, holds a whole SavedModel: seeds TensorFlow wrote): one of a valid SavedModel kiln
// saved (saved_model.pb with control flow and variables, its variables' TensorBundle index and data: mutations reach
// the protobuf parser, the object graph, the checkpoint reader and the graph importer), or the index or data file of a
// valid TensorFlow checkpoint (read with CheckpointReader, every tensor fetched). Any kiln::Error is a clean rejection;
// anything else (a crash, another exception, a hang, a huge allocation) is a finding.
#include <kiln/kiln.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "io/saved_model.h"

namespace {

const char* const kFiles[] = {kiln::io::kSavedModelFile, kiln::io::kVariablesIndexFile, kiln::io::kVariablesDataFile,
                              "ckpt.index", "ckpt.data-00000-of-00001"};
constexpr int kNumFiles = 5;
constexpr int kFirstCheckpointFile = 3;
std::map<std::string, std::string>* g_baseline = nullptr;
std::string* g_checkpoint_dir = nullptr;

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

void read_checkpoint(const std::map<std::string, std::string>& files) {
  for (int k = kFirstCheckpointFile; k < kNumFiles; ++k)
    write(*g_checkpoint_dir + "/" + kFiles[k], files.at(kFiles[k]));
  kiln::CheckpointReader reader(*g_checkpoint_dir + "/ckpt");
  for (const std::string& name : reader.tensor_names()) {
    try {
      if (reader.dtype_name(name) == "string")
        (void)reader.get_strings(name);
      else
        (void)reader.get_tensor(name);
    } catch (const kiln::Error&) {
    }
  }
  try {
    (void)kiln::read_object_graph(reader);  // a SavedModel's variables carry one
  } catch (const kiln::Error&) {
  }
}

std::map<std::string, std::string> make_baseline() {
  using namespace kiln;
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("kiln_fuzz_" + std::to_string(::getpid()))).string();
  Variable w(constant<float>({1, 2, 3, 4}, {2, 2}), "w");
  auto f = function(
      [&](Tensor x, Tensor n) {
        Tensor y = matmul(x, w.read()) + 1.0f;
        Tensor z = cond(
            reduce_sum(y) > 0, [&] { return y; }, [&] { return -y; });
        auto [i, acc] = while_loop([&](Tensor i, Tensor) { return i < n; },
                                   [&](Tensor i, Tensor acc) { return std::make_tuple(i + 1, acc + z); },
                                   std::make_tuple(constant(0), zeros_like(z)));
        return concat({acc, transpose(z)}, 0);
      },
      {.arg_names = {"x", "n"}});
  save(dir, f.get_concrete_function(ones({2, 2}), constant(2)));
  write_checkpoint(dir + "/ckpt", {{"dense/kernel/.ATTRIBUTES/VARIABLE_VALUE", constant<float>({1, 2, 3, 4}, {2, 2})},
                                   {"step", constant<int64_t>({7}, {})},
                                   {"flags", constant<bool>({true, false}, {2})}});
  std::map<std::string, std::string> files;
  for (const char* name : kFiles) {
    std::ifstream in(dir + "/" + name, std::ios::binary);
    files[name] = std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::filesystem::remove_all(dir);
  return files;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_baseline = new std::map<std::string, std::string>(make_baseline());
  g_checkpoint_dir = new std::string(
      (std::filesystem::temp_directory_path() / ("kiln_fuzz_ckpt_" + std::to_string(::getpid()))).string());
  std::filesystem::create_directories(*g_checkpoint_dir);
  // Seeds: each baseline file behind its selector byte.
  if (const char* seeds = std::getenv("KILN_FUZZ_SEED_DIR")) {
    std::filesystem::create_directories(seeds);
    for (int k = 0; k < kNumFiles; ++k)
      std::ofstream(std::string(seeds) + "/seed_" + std::to_string(k), std::ios::binary)
          << static_cast<char>(k) << g_baseline->at(kFiles[k]);
  }
  return 0;
}

namespace {

// Selector kWholeModel: the rest holds a whole SavedModel, its three files each behind a
// 4-byte little-endian length (fuzz/make_tf_seeds.py writes models TensorFlow saved this way;
// a length past the end takes what is left, a missing file is empty).
constexpr int kWholeModel = kNumFiles;
std::map<std::string, std::string> whole_model(const uint8_t* data, size_t size) {
  std::map<std::string, std::string> files;
  size_t at = 0;
  for (int k = 0; k < kFirstCheckpointFile; ++k) {
    uint32_t length = 0;
    for (int b = 0; b < 4 && at < size; ++b) length |= static_cast<uint32_t>(data[at++]) << (8 * b);
    const size_t take = std::min<size_t>(length, size - at);
    files[kFiles[k]] = std::string(reinterpret_cast<const char*>(data) + at, take);
    at += take;
  }
  return files;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const int which = data[0] % (kNumFiles + 1);
  std::map<std::string, std::string> files;
  if (which == kWholeModel) {
    files = whole_model(data + 1, size - 1);
  } else {
    files = *g_baseline;
    files[kFiles[which]] = std::string(reinterpret_cast<const char*>(data) + 1, size - 1);
  }
  try {
    if (which >= kFirstCheckpointFile && which != kWholeModel)
      read_checkpoint(files);
    else
      kiln::io::load_from_files(files);
  } catch (const kiln::Error&) {
  }
  return 0;
}
