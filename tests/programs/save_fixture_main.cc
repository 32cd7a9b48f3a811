// Saves a model (dense layer with variables, cond, while_loop) for the tests that load it
// in other processes, with expected.json: the inputs and the outputs kiln computed here.
#include <kiln/kiln.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

using namespace kiln;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  Variable w(constant<float>({0.5f, -1, 2, 1, 0, -0.5f}, {2, 3}), "dense/kernel");
  Variable b(constant<float>({0.1f, 0.2f, 0.3f}, {3}), "dense/bias");
  auto model = function(
      [&](Tensor x, Tensor steps) {
        Tensor h = relu(matmul(x, w.read()) + b.read());
        Tensor s = cond(
            reduce_sum(h) > 1.0f, [&] { return h * 2.0f; }, [&] { return h - 1.0f; });
        auto [i, acc] = while_loop([&](Tensor i, Tensor) { return i < steps; },
                                   [&](Tensor i, Tensor acc) { return std::make_tuple(i + 1, acc + s); },
                                   std::make_tuple(constant(0), zeros_like(s)));
        return std::vector<Tensor>{acc, reduce_max(acc, {1})};
      },
      {.arg_names = {"x", "steps"},
       .input_signature = std::vector<TensorSpec>{{TensorShape({-1, 2}), DType::Float32, "x"},
                                                  {TensorShape({}), DType::Int32, "steps"}}});
  Tensor x = constant<float>({1, 2, -1, 0.5f}, {2, 2});
  Tensor steps = constant(3);
  save(dir, model.get_concrete_function(x, steps));
  auto out = model(x, steps);
  nlohmann::json j;
  j["x"] = x.to_vector<float>();
  j["x_shape"] = x.shape().dims();
  j["steps"] = 3;
  j["outputs"] = {out[0].to_vector<float>(), out[1].to_vector<float>()};
  j["variables"] = {{"dense/kernel", w.read().to_vector<float>()}, {"dense/bias", b.read().to_vector<float>()}};
  std::ofstream(dir + "/expected.json") << j.dump(1);
  std::printf("saved %s\n", dir.c_str());
  return 0;
}
