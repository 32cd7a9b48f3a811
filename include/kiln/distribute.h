// Data-parallel training over MPI, with Horovod's API: every rank runs the same program on
// its shard of each batch; collectives (ops, usable eagerly and inside a traced step) combine
// what the ranks computed. Launch with `mpirun -np N program`. kiln built without MPI has
// this header too: available() is false and the rest raises FailedPreconditionError.
//
//   kiln::distribute::init();
//   kiln::distribute::broadcast_variables({&w, &b}, 0);          // the same initial weights
//   auto step = kiln::function([&](Tensor x, Tensor y) {
//     GradientTape tape;
//     Tensor loss = ...;
//     auto grads = kiln::distribute::grouped_allreduce(tape.gradient(loss, {&w, &b}));
//     opt.apply_gradients(grads, {&w, &b});
//     return loss;
//   });
//
// Every rank must call the same collectives in the same order, with the same dtypes and
// shapes (allgather: the same shape after the first dimension); a mismatch raises
// InvalidArgumentError on every rank. A collective waits at most timeout_seconds() (60 s by
// default, KILN_COLLECTIVE_TIMEOUT) for the other ranks, then prints which one stalled and
// aborts the whole job: a rank that died or raised never leaves the others hanging.
#pragma once
#include <cstdint>
#include <vector>

#include "kiln/tensor.h"
#include "kiln/variable.h"

namespace kiln::distribute {

enum class ReduceOp { kAverage, kSum, kMin, kMax };

bool available();  // built with MPI
void init();       // idempotent
bool is_initialized();
void shutdown();  // at the end, once; optional (MPI finalizes at exit)
// Ends every rank of the job at once (MPI_Abort) after this one failed; without it the others
// wait in their next collective until the timeout. kiln.distribute (Python) calls it for an
// uncaught exception; in C++ an uncaught exception terminates the process, which also ends
// the job.
[[noreturn]] void abort_job(int exit_code = 1);
int rank();
int size();
int local_rank();  // among the ranks on this host
int local_size();

// The elementwise reduction over the ranks of each rank's `t` (same dtype and shape on every
// rank). kAverage of an integer tensor is the sum divided by size() as TensorFlow's `/`
// divides integers: float64.
Tensor allreduce(const Tensor& t, ReduceOp op = ReduceOp::kAverage);
// allreduce of many tensors in few calls (Horovod's tensor fusion): the tensors of one dtype
// are packed into buffers of at most `fusion_bytes` (one tensor larger than that travels
// alone), each reduced with one MPI call, and unpacked. Results in the order given.
std::vector<Tensor> grouped_allreduce(const std::vector<Tensor>& ts, ReduceOp op = ReduceOp::kAverage,
                                      int64_t fusion_bytes = int64_t{64} << 20);
// The ranks' tensors concatenated along the first dimension, in rank order (the first
// dimension may differ between ranks).
Tensor allgather(const Tensor& t);
// root_rank's tensor, on every rank.
Tensor broadcast(const Tensor& t, int root_rank);
// Assigns root_rank's value of each variable to it on every rank.
void broadcast_variables(const std::vector<Variable*>& variables, int root_rank = 0);

// How long a collective waits for the other ranks before aborting the job.
double timeout_seconds();
void set_timeout_seconds(double seconds);
// MPI collective calls this process made so far (each collective op makes two: the agreement
// on dtypes and shapes, then the data), to count the calls per training step.
int64_t collective_calls();

}  // namespace kiln::distribute
