// Builds the TensorFlow.js interop models: each function is traced, saved, exported with
// export_tfjs, and run by kiln; cases.json records inputs and kiln's outputs for
// run_model.js to compare against TensorFlow.js.
#include <kiln/kiln.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "random_program.h"

using namespace kiln;
using nlohmann::json;

namespace {

json tensor_json(const Tensor& t) {
  json values = json::array();
  switch (t.dtype()) {
    case DType::Float32:
      for (float v : t.to_vector<float>()) values.push_back(v);
      break;
    case DType::Int32:
      for (int32_t v : t.to_vector<int32_t>()) values.push_back(v);
      break;
    case DType::Bool:
      for (bool v : t.to_vector<bool>()) values.push_back(v);
      break;
    default:
      throw InvalidArgumentError("interop tensors are float32, int32 or bool");
  }
  return {{"dtype", std::string(dtype_name(t.dtype()))}, {"shape", t.shape().dims()}, {"values", values}};
}

class Cases {
 public:
  explicit Cases(std::string root) : root_(std::move(root)) {}
  // Saves and exports `cf` as model `name`, then records one case per input list.
  void add(const std::string& name, const ConcreteFunction& cf, const std::vector<std::vector<Tensor>>& input_sets) {
    const std::string saved = root_ + "/" + name + "/saved", web = root_ + "/" + name + "/tfjs";
    save(saved, cf);
    export_tfjs(saved, web);
    const auto specs = cf.input_specs();
    for (size_t k = 0; k < input_sets.size(); ++k) {
      json c = {{"name", name + "#" + std::to_string(k)}, {"model", web}};
      for (size_t i = 0; i < specs.size(); ++i) c["inputs"][specs[i].name] = tensor_json(input_sets[k][i]);
      const auto outs = cf(input_sets[k]);
      for (size_t i = 0; i < outs.size(); ++i) c["expected"]["output_" + std::to_string(i)] = tensor_json(outs[i]);
      cases_.push_back(c);
    }
  }
  void write() const { std::ofstream(root_ + "/cases.json") << cases_.dump(1); }

 private:
  std::string root_;
  json cases_ = json::array();
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  Cases cases(argv[1]);

  // The guide's first example: matmul and add.
  auto matmul_add =
      function([](Tensor x, Tensor y, Tensor b) { return matmul(x, y) + b; }, {.arg_names = {"x", "y", "b"}});
  Tensor x1 = constant<float>({1, 2}, {1, 2}), y1 = constant<float>({2, 3}, {2, 1}), b1 = constant(4.0f);
  cases.add("matmul_add", matmul_add.get_concrete_function(x1, y1, b1), {{x1, y1, b1}});

  // simple_relu: a StatelessIf.
  auto simple_relu = function(
      [](Tensor x) {
        return cond(
            x > 0, [&] { return x; }, [&] { return zeros_like(x); });
      },
      {.arg_names = {"x"}});
  cases.add("simple_relu", simple_relu.get_concrete_function(constant(1.0f)),
            {{constant(3.5f)}, {constant(-2.0f)}, {constant(0.0f)}});

  // power as a while loop with a tensor exponent.
  auto power = function(
      [](Tensor x, Tensor y) {
        auto [i, r] = while_loop([&](Tensor i, Tensor) { return i < y; },
                                 [&](Tensor i, Tensor r) { return std::make_tuple(i + 1, matmul(x, r)); },
                                 std::make_tuple(constant(0), eye(4)));
        return r;
      },
      {.arg_names = {"x", "y"}});
  Tensor px = random_uniform({4, 4}, -1, 1, DType::Float32, 11);
  cases.add("power", power.get_concrete_function(px, constant(3)),
            {{px, constant(0)}, {px, constant(1)}, {px, constant(5)}});

  // A two-layer dense model; its variables are frozen into the weights.
  Variable w1(random_uniform({8, 16}, -0.5, 0.5, DType::Float32, 1), "dense1/kernel");
  Variable b1v(random_uniform({16}, -0.1, 0.1, DType::Float32, 2), "dense1/bias");
  Variable w2(random_uniform({16, 3}, -0.5, 0.5, DType::Float32, 3), "dense2/kernel");
  Variable b2v(random_uniform({3}, -0.1, 0.1, DType::Float32, 4), "dense2/bias");
  auto mlp = function(
      [&](Tensor x) {
        Tensor h = relu(matmul(x, w1.read()) + b1v.read());
        return softmax(matmul(h, w2.read()) + b2v.read());
      },
      {.arg_names = {"x"}, .input_signature = std::vector<TensorSpec>{{TensorShape({-1, 8}), DType::Float32, "x"}}});
  Tensor mx = random_uniform({5, 8}, -1, 1, DType::Float32, 9);
  cases.add("dense2", mlp.get_concrete_function(mx), {{mx}, {random_uniform({2, 8}, -1, 1, DType::Float32, 10)}});

  // Random programs from the differential generator, float32/int32 only.
  std::mt19937 rng(2026);
  for (int k = 0; k < 24; ++k) {
    kiln::testing::Program p = kiln::testing::generate(rng, true);
    std::vector<Tensor> inputs = kiln::testing::random_inputs(p, rng);
    auto fn = function([p](std::vector<Tensor> xs) { return kiln::testing::run(p, xs); });
    cases.add("random" + std::to_string(k), fn.get_concrete_function(inputs), {inputs});
  }
  cases.write();
  std::printf("wrote %s/cases.json\n", argv[1]);
  return 0;
}
