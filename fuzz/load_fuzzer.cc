// libFuzzer target for the loader. The first input byte picks which file of a valid saved
// model (graph with control flow and variables) the rest of the input replaces; checksums
// are not verified, so mutations reach the protobuf, JSON and safetensors parsers and the
// graph importer. Any kiln::Error is a clean rejection; anything else (a crash, another
// exception, a hang, a huge allocation) is a finding.
#include <kiln/kiln.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "io/saved_model.h"

namespace {

const char* const kFiles[] = {"graph.pb", "manifest.json", "variables.safetensors"};
std::map<std::string, std::string>* g_baseline = nullptr;

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
  // Seeds: each baseline file behind its selector byte.
  if (const char* seeds = std::getenv("KILN_FUZZ_SEED_DIR")) {
    std::filesystem::create_directories(seeds);
    for (int k = 0; k < 3; ++k)
      std::ofstream(std::string(seeds) + "/seed_" + std::to_string(k), std::ios::binary)
          << static_cast<char>(k) << g_baseline->at(kFiles[k]);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::map<std::string, std::string> files = *g_baseline;
  files[kFiles[data[0] % 3]] = std::string(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    kiln::io::load_from_files(files, false);
  } catch (const kiln::Error&) {
  }
  return 0;
}
