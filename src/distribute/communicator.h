// The process group kiln's collectives run over: MPI's world communicator (Open MPI from
// Debian, launched with mpirun, as Horovod does). Below the ops layer: kernels call it with raw
// buffers. Built without MPI (KILN_MPI off or MPI not found), every call but available()
// raises FailedPreconditionError saying so.
//
// Every collective first agrees on what each rank brings (dtype, shape, root, reduction) with
// one small allgather, so a mismatch raises InvalidArgumentError on every rank instead of
// reading the wrong number of bytes. Each call waits at most timeout_seconds() for the other
// ranks; past it the process prints which collective stalled and aborts the whole job
// (MPI_Abort): a rank that died or stopped calling never leaves the others hanging.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/dtype.h"

namespace kiln::distribute::comm {

enum class Reduction { kSum, kMin, kMax, kProd };

bool available();  // built with MPI
void init();       // idempotent; MPI_Init_thread (serialized calls) on the first call
bool initialized();
void shutdown();  // MPI_Finalize, once; no collective may follow
// Ends every rank of the job now (MPI_Abort), after this one failed: the others would wait in
// their next collective until the timeout.
[[noreturn]] void abort_job(int code);
int rank();
int size();
int local_rank();  // among the ranks on this host
int local_size();
// Seconds a collective waits for the other ranks (default 60; KILN_COLLECTIVE_TIMEOUT).
double timeout_seconds();
void set_timeout_seconds(double seconds);
// Collective calls made by this process so far (the agreement step included).
int64_t calls();

// What one rank brings to a collective: checked against every other rank's.
struct Contribution {
  const char* what;  // "allreduce", "allgather", "broadcast" (for messages)
  DType dtype;
  std::vector<int64_t> dims;
  bool first_dim_may_differ;  // allgather: only the trailing dims must agree
  int64_t detail;             // the reduction or the root rank; must agree too
};
// Agrees on the contributions; returns every rank's first dim (allgather sizes).
std::vector<int64_t> agree(const Contribution& mine);

// out = the reduction over the ranks of each rank's `in` (count elements; in != out).
void allreduce(const void* in, void* out, int64_t count, DType dtype, Reduction op);
// Gathers each rank's `bytes` (which may differ) into `out`, in rank order.
void allgather(const void* data, int64_t bytes, const std::vector<int64_t>& rank_bytes, void* out);
void broadcast(void* data, int64_t bytes, int root);

}  // namespace kiln::distribute::comm
