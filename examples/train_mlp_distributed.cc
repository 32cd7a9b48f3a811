// examples/train_mlp's MLP (784 -> 256 -> 10, SGD with momentum) trained data-parallel:
// `mpirun -np N ./build/examples/train_mlp_distributed [steps]`. Each rank takes its 64/N rows
// of every batch of 64; the whole step (forward, loss, gradients, one fused allreduce that
// averages them over the ranks, update) is one traced graph. Initial weights are made equal
// with broadcast_variables. Rank 0 prints the loss of the whole batch per step (the average of
// the ranks' losses), the MPI calls per step and the time per step; it exits non-zero unless
// the loss falls and every rank ends with the same weights.
#include <kiln/distribute.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "mlp.h"

using namespace kiln;
namespace dist = kiln::distribute;

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 100;
  if (steps < 2) {
    std::fprintf(stderr, "usage: train_mlp_distributed [steps >= 2]\n");
    return 2;
  }
  dist::init();
  const int rank = dist::rank(), size = dist::size();
  if (64 % size != 0) {
    if (rank == 0)
      std::fprintf(stderr, "train_mlp_distributed: the batch of 64 must split evenly over %d ranks\n", size);
    return 2;
  }
  // Ranks on one host share its cores: each takes its part for its kernels' threads.
  config::set_intra_op_parallelism_threads(
      std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / dist::local_size()));
  mlp::Model model(42 + rank);  // different on each rank until the broadcast
  dist::broadcast_variables(model.variables(), 0);
  SGD opt(0.05, 0.9);
  const Tensor teacher = mlp::teacher();
  std::vector<mlp::Batch> shards;
  for (int i = 0; i < 8; ++i) {
    const mlp::Batch b = mlp::make_batch(teacher, 100 + i);
    const int64_t rows = 64 / size;
    shards.push_back({slice(b.x, {rank * rows, 0}, {rows, -1}), slice(b.labels, {rank * rows}, {rows})});
  }
  auto step = function([&](const Tensor& x, const Tensor& y) {
    GradientTape tape;
    Tensor loss = reduce_mean(sparse_softmax_cross_entropy_with_logits(y, model.logits(x)));
    const std::vector<Tensor> grads = dist::grouped_allreduce(tape.gradient(loss, model.variables()));
    opt.apply_gradients(grads, model.variables());
    return dist::allreduce(loss);
  });
  std::vector<float> losses;
  int64_t calls = 0;
  auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) {
    const int64_t before = dist::collective_calls();
    losses.push_back(step(shards[s % shards.size()].x, shards[s % shards.size()].labels).item<float>());
    calls = dist::collective_calls() - before;
    if (s == 0) start = std::chrono::steady_clock::now();  // the first step traces: not timed
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / (steps - 1);
  // Every rank must end with the same weights: their largest difference to rank 0's.
  float spread = 0;
  for (Variable* v : model.variables()) {
    const Tensor mine = v->read();
    const Tensor root = dist::broadcast(mine, 0);
    spread = std::max(spread, reduce_max(abs(mine - root)).item<float>());
  }
  spread = dist::allreduce(constant(spread), dist::ReduceOp::kMax).item<float>();
  if (rank == 0) {
    std::printf("ranks %d, rows per rank %d\nstep   loss (whole batch)\n", size, 64 / size);
    for (int s = 0; s < steps; s += std::max(1, steps / 10)) std::printf("%4d   %.6f\n", s, losses[s]);
    std::printf("%4d   %.6f\n", steps - 1, losses.back());
    std::printf(
        "MPI calls per step: %lld (one fused allreduce of the four gradients, one of the loss; each "
        "an agreement on shapes and the data)\n",
        static_cast<long long>(calls));
    std::printf("time per step: %.3f ms\nlargest weight difference between ranks: %g\n", ms, spread);
  }
  const bool ok = losses.back() < losses.front() && spread == 0;
  dist::shutdown();
  return ok ? 0 : 1;
}
