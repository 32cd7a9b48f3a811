// kiln's allreduce against a raw MPI_Allreduce of the same bytes, in one run:
//   mpirun -np 2 --oversubscribe ./build/bench/distribute_bench   (make bench-distribute)
// Not Google Benchmark: its adaptive iteration counts would differ between ranks, and every
// rank must make the same calls. Each row: the best of 5 rounds of a fixed number of calls,
// every rank starting a round together (a barrier).
#include <kiln/distribute.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

using namespace kiln;
namespace dist = kiln::distribute;

template <class F>
double best_us(int calls, F&& f) {
  f();  // warm
  double best = 1e300;
  for (int round = 0; round < 5; ++round) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) f();
    best = std::min(
        best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / calls);
  }
  return best;
}

int main() {
  dist::init();
  const int rank = dist::rank();
  if (rank == 0)
    std::printf("allreduce (sum, float32) over %d ranks: us per call, best of 5\n%12s %14s %14s %10s\n", dist::size(),
                "bytes", "MPI_Allreduce", "kiln", "kiln/raw");
  for (int64_t bytes : {int64_t{4} << 10, int64_t{256} << 10, int64_t{1} << 20, int64_t{4} << 20, int64_t{16} << 20}) {
    const int64_t n = bytes / 4;
    const int calls = bytes >= (int64_t{4} << 20) ? 20 : 100;
    std::vector<float> in(n, 1.0f + rank), out(n);
    const double raw = best_us(
        calls, [&] { MPI_Allreduce(in.data(), out.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); });
    const Tensor x = constant<float>(in, {n});
    const double kiln_us = best_us(calls, [&] { (void)dist::allreduce(x, dist::ReduceOp::kSum); });
    if (rank == 0)
      std::printf("%12lld %14.1f %14.1f %10.3f\n", static_cast<long long>(bytes), raw, kiln_us, kiln_us / raw);
  }
  dist::shutdown();
  return 0;
}
