// A program that never saw the C++ function: it only calls kiln::load, runs the saved
// signature on the inputs in expected.json and compares with the outputs recorded there.
#include <kiln/kiln.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

using namespace kiln;

namespace {
bool same(const std::vector<float>& got, const nlohmann::json& want, const char* what) {
  const auto w = want.get<std::vector<float>>();
  bool ok = got.size() == w.size();
  for (size_t i = 0; ok && i < w.size(); ++i) ok = std::fabs(got[i] - w[i]) <= 1e-6f * (1 + std::fabs(w[i]));
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what);
  return ok;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  nlohmann::json j;
  std::ifstream(dir + "/expected.json") >> j;
  try {
    LoadedModel m = load(dir);
    Tensor x = constant<float>(j["x"].get<std::vector<float>>(), j["x_shape"].get<std::vector<int64_t>>());
    auto out = m.call("serving_default", {x, constant(j["steps"].get<int32_t>())});
    bool ok = out.size() == 2;
    ok &= same(out[0].to_vector<float>(), j["outputs"][0], "output_0");
    ok &= same(out[1].to_vector<float>(), j["outputs"][1], "output_1");
    const auto vars = m.variables();
    for (const auto& [name, values] : j["variables"].items())
      ok &= vars.count(name) && same(vars.at(name).to_vector<float>(), values, name.c_str());
    return ok ? 0 : 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: %s\n", error_code_name(e.code()), e.what());
    return 1;
  }
}
