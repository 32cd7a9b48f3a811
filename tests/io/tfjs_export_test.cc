// export_tfjs: the model.json structure tfjs reads, and refusals that name the node.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;
namespace fs = std::filesystem;

namespace {

std::string temp_dir(const std::string& name) { return temp_path("tfjs_" + name); }

nlohmann::json export_and_read(const ConcreteFunction& cf, const std::string& name) {
  const std::string saved = temp_dir(name), web = temp_dir(name + "_web");
  save(saved, cf);
  export_tfjs(saved, web);
  nlohmann::json j;
  std::ifstream(web + "/model.json") >> j;
  fs::remove_all(saved);
  fs::remove_all(web);
  return j;
}

void expect_refused(const ConcreteFunction& cf, const std::string& message) {
  const std::string saved = temp_dir("refused"), web = temp_dir("refused_web");
  save(saved, cf);
  expect_error<UnimplementedError>([&] { export_tfjs(saved, web); }, message);
  EXPECT_FALSE(fs::exists(web));
  fs::remove_all(saved);
}

}  // namespace

TEST(TfjsExport, ModelJsonHasWhatTfjsReads) {
  Variable w(constant<float>({1, 2, 3, 4}, {2, 2}), "w");
  auto f = function(
      [&](Tensor x) {
        Tensor y = matmul(x, w.read()) + 1.0f;
        return cond(
            reduce_sum(y) > 0, [&] { return y; }, [&] { return -y; });
      },
      {.arg_names = {"x"}});
  const auto j = export_and_read(f.get_concrete_function(ones({1, 2})), "structure");
  EXPECT_EQ(j["format"], "graph-model");
  ASSERT_TRUE(j["modelTopology"].contains("versions"));
  ASSERT_TRUE(j["modelTopology"].contains("library"));
  std::set<std::string> weights;
  for (const auto& w : j["weightsManifest"][0]["weights"]) EXPECT_TRUE(weights.insert(w["name"]).second) << w;
  std::set<std::string> names;
  auto check_nodes = [&](const nlohmann::json& nodes) {
    for (const auto& n : nodes) {
      EXPECT_NE(n["op"], "ReadVariableOp");
      EXPECT_NE(n["op"], "VarHandleOp");
      if (n.contains("input")) {
        for (const auto& in : n["input"]) EXPECT_NE(in.get<std::string>()[0], '^') << n["name"];
      }
      if (n["op"] == "Const") {
        EXPECT_TRUE(weights.count(n["name"])) << n["name"];
      } else {
        EXPECT_FALSE(weights.count(n["name"])) << "a non-Const node shares a weight name: " << n["name"];
      }
    }
  };
  check_nodes(j["modelTopology"]["node"]);
  for (const auto& fn : j["modelTopology"]["library"]["function"]) {
    check_nodes(fn["nodeDef"]);
    for (const auto& [k, v] : fn["ret"].items()) EXPECT_NE(v.get<std::string>().find("_ret"), std::string::npos);
  }
  EXPECT_EQ(j["signature"]["inputs"]["x"]["name"], "x:0");
}

TEST(TfjsExport, RefusesWhatTfjsCannotRun) {
  auto f64 = function([](Tensor x) { return x * 2.0; }, {.arg_names = {"x"}});
  expect_refused(f64.get_concrete_function(constant(1.0)), "uses float64; TensorFlow.js has no 64-bit types");
  Variable v(constant(0.0f), "v");
  auto writes = function(
      [&](Tensor x) {
        v.assign_add(x);
        return v.read();
      },
      {.arg_names = {"x"}});
  expect_refused(writes.get_concrete_function(constant(1.0f)), "(AssignAddVariableOp)");
  SGD opt(0.1, 0.9);
  auto trains = function([&](Tensor g) { opt.apply_gradients({g}, {&v}); }, {.arg_names = {"g"}});
  expect_refused(trains.get_concrete_function(constant(1.0f)), "(ResourceApplyKerasMomentum): writes a variable");
  auto prints = function(
      [](Tensor x) {
        print("x is", x);
        return x + 1.0f;
      },
      {.arg_names = {"x"}});
  expect_refused(prints.get_concrete_function(constant(1.0f)), "(KilnPrint): TensorFlow.js has no such op");
}
