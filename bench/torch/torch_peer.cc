// LibTorch (Debian's libtorch-dev) as a peer in bench/python/bench_peers.py: the same
// workloads in C++, eagerly and as TorchScript (torch::jit::compile, LibTorch's graph mode),
// timed best-of-5 like the Python table. Prints one JSON object: {workload: {column: us}}.
//   ./build/bench/torch_peer [--threads N] [--quick]
#include <torch/script.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>

namespace {

int g_repeat = 5;

double best_us(const std::function<void()>& fn, int number) {
  fn();
  double best = 1e300;
  for (int r = 0; r < g_repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < number; ++i) fn();
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, us / number);
  }
  return best;
}

// TorchScript source of the graph-mode workloads (the same computations as bench_peers.py).
const char* kScript = R"(
def power(x: Tensor):
    result = torch.eye(10, dtype=x.dtype)
    for _ in range(100):
        result = torch.matmul(x, result)
    return result

def add_one(x: Tensor):
    return x + 1

def chain(x: Tensor):
    return torch.tanh(x * 0.5 + 1) * x - x / 3

def lstm(x: Tensor, w: Tensor, steps: int):
    u = w.size(1) // 4
    h = torch.zeros(x.size(0), u)
    c = torch.zeros(x.size(0), u)
    for _ in range(steps):
        z = torch.matmul(torch.cat([x, h], 1), w)
        i, f, o, g = z[:, :u], z[:, u:2 * u], z[:, 2 * u:3 * u], z[:, 3 * u:]
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
    return h
)";

torch::Tensor power_eager(const torch::Tensor& x) {
  torch::Tensor r = torch::eye(10, x.options());
  for (int i = 0; i < 100; ++i) r = torch::matmul(x, r);
  return r;
}

torch::Tensor lstm_eager(const torch::Tensor& x, const torch::Tensor& w, int steps) {
  const int64_t u = w.size(1) / 4;
  torch::Tensor h = torch::zeros({x.size(0), u}), c = torch::zeros({x.size(0), u});
  for (int s = 0; s < steps; ++s) {
    torch::Tensor z = torch::matmul(torch::cat({x, h}, 1), w);
    auto gates = z.split(u, 1);
    c = torch::sigmoid(gates[1]) * c + torch::sigmoid(gates[0]) * torch::tanh(gates[3]);
    h = torch::sigmoid(gates[2]) * torch::tanh(c);
  }
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 0;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--quick")) quick = true;
  }
  if (threads > 0) torch::set_num_threads(threads);
  if (quick) g_repeat = 2;
  const auto n = [&](int number) { return quick ? std::max(1, number / 10) : number; };
  torch::NoGradGuard no_grad_by_default;
  std::map<std::string, std::map<std::string, double>> table;
  auto cu = torch::jit::compile(kScript);

  for (auto dtype : {torch::kInt32, torch::kFloat32}) {
    const std::string name = dtype == torch::kInt32 ? "power(x,100) int32 10x10" : "power(x,100) f32 10x10";
    torch::Tensor x = (torch::arange(100).reshape({10, 10}) % 3 - 1).to(dtype);
    table[name]["LibTorch eager"] = best_us([&] { power_eager(x); }, n(20));
    table[name]["TorchScript"] = best_us([&] { cu->get_function("power")({x}); }, n(20));
  }
  {
    torch::Tensor a = torch::tensor(1.5f), b = torch::tensor(2.5f);
    table["eager scalar a + b"]["LibTorch eager"] = best_us([&] { (void)(a + b); }, n(2000));
    torch::Tensor m = torch::ones({10, 10});
    table["eager matmul 10x10 f32"]["LibTorch eager"] = best_us([&] { torch::matmul(m, m); }, n(2000));
    torch::Tensor one = torch::tensor(1.0f);
    table["cached call f(x)=x+1"]["TorchScript"] = best_us([&] { cu->get_function("add_one")({one}); }, n(2000));
  }
  {
    torch::Tensor x = torch::linspace(-3, 3, 1000000);
    table["chain on 1M f32"]["LibTorch eager"] = best_us([&] { torch::tanh(x * 0.5 + 1) * x - x / 3; }, n(20));
    table["chain on 1M f32"]["TorchScript"] = best_us([&] { cu->get_function("chain")({x}); }, n(20));
  }
  {  // One SGD step of the 784-256-10 MLP on a batch of 64: forward, backward, update.
    torch::manual_seed(0);
    torch::Tensor x = torch::randn({64, 784}), y = torch::randn({64, 10});
    torch::Tensor w1 = (torch::randn({784, 256}) * 0.05).requires_grad_(),
                  w2 = (torch::randn({256, 10}) * 0.05).requires_grad_();
    auto step = [&] {
      torch::Tensor loss;
      {
        torch::AutoGradMode grad(true);
        torch::Tensor h = torch::tanh(torch::matmul(x, w1));
        loss = torch::mean(torch::square(torch::matmul(h, w2) - y));
        loss.backward();
      }
      w1.sub_(0.01 * w1.grad());
      w2.sub_(0.01 * w2.grad());
      w1.mutable_grad().zero_();
      w2.mutable_grad().zero_();
    };
    table["MLP 64x784-256-10 step"]["LibTorch eager"] = best_us(step, n(20));
  }
  {
    torch::manual_seed(1);
    torch::Tensor x = torch::randn({8, 32}), w = torch::randn({96, 256}) * 0.1;
    table["LSTM loop 300 steps"]["LibTorch eager"] = best_us([&] { lstm_eager(x, w, 300); }, n(5));
    table["LSTM loop 300 steps"]["TorchScript"] = best_us(
        [&] {
          cu->get_function("lstm")({x, w, int64_t{300}});
        },
        n(5));
    table["LSTM loop: trace+1st call"]["TorchScript"] = best_us(
        [&] {
          auto fresh = torch::jit::compile(kScript);
          fresh->get_function("lstm")({x, w, int64_t{300}});
        },
        1);
  }

  std::printf("{");
  bool first_row = true;
  for (const auto& [workload, cells] : table) {
    std::printf("%s\n \"%s\": {", first_row ? "" : ",", workload.c_str());
    bool first = true;
    for (const auto& [column, us] : cells) {
      std::printf("%s\"%s\": %.3f", first ? "" : ", ", column.c_str(), us);
      first = false;
    }
    std::printf("}");
    first_row = false;
  }
  std::printf("\n}\n");
  return 0;
}
