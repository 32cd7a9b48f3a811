#include "distribute/communicator.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "kiln/errors.h"

#if defined(KILN_HAVE_MPI)
#include <mpi.h>
#endif

namespace kiln::distribute::comm {
namespace {

std::atomic<double> g_timeout{[] {
  const char* env = std::getenv("KILN_COLLECTIVE_TIMEOUT");
  const double v = env ? std::atof(env) : 0.0;
  return v > 0 ? v : 60.0;
}()};
std::atomic<int64_t> g_calls{0};

#if !defined(KILN_HAVE_MPI)
[[noreturn]] void not_built() {
  throw FailedPreconditionError(
      "kiln was built without MPI: install Open MPI (make deps installs openmpi-bin and libopenmpi-dev) and "
      "rebuild to use kiln.distribute");
}
#endif

#if defined(KILN_HAVE_MPI)
std::mutex g_mu;  // one collective at a time
bool g_initialized = false, g_finalized = false;
int g_rank = 0, g_size = 1, g_local_rank = 0, g_local_size = 1;

void require_init() {
  if (!g_initialized) throw FailedPreconditionError("kiln.distribute: call init() first");
  if (g_finalized) throw FailedPreconditionError("kiln.distribute: shutdown() was called");
}

// The collective in flight (its start on the steady clock, 0 if none) and what it is. A
// watchdog thread, started by init(), aborts the job when one outlives the timeout: MPI's
// blocking collectives (faster than the nonblocking ones, which Open MPI runs through a
// generic schedule) cannot time out themselves.
std::atomic<int64_t> g_started_ns{0};
std::atomic<const char*> g_what{""};
std::atomic<bool> g_stop_watchdog{false};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct InFlight {
  explicit InFlight(const char* what) {
    ++g_calls;
    g_what.store(what);
    g_started_ns.store(now_ns());
  }
  ~InFlight() { g_started_ns.store(0); }
};

void watchdog() {
  while (!g_stop_watchdog.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const int64_t started = g_started_ns.load();
    if (started && static_cast<double>(now_ns() - started) * 1e-9 > g_timeout.load()) {
      std::fprintf(stderr,
                   "kiln.distribute: rank %d waited %.0f s for the other ranks in %s (a rank died, raised or "
                   "stopped calling collectives); aborting the job (KILN_COLLECTIVE_TIMEOUT sets the wait)\n",
                   g_rank, g_timeout.load(), g_what.load());
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
}

MPI_Datatype mpi_type(DType d) {
  switch (d) {
    case DType::Float32:
      return MPI_FLOAT;
    case DType::Float64:
      return MPI_DOUBLE;
    case DType::Int32:
      return MPI_INT32_T;
    case DType::Int64:
      return MPI_INT64_T;
    case DType::Bool:
      return MPI_C_BOOL;
    default:
      break;
  }
  throw UnimplementedError("kiln.distribute: collectives over " + std::string(dtype_name(d)) +
                           " tensors are not supported (bool, int32, int64, float32, float64)");
}
#endif

}  // namespace

bool available() {
#if defined(KILN_HAVE_MPI)
  return true;
#else
  return false;
#endif
}

void init() {
#if defined(KILN_HAVE_MPI)
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_initialized) return;
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    int provided = 0;  // the watchdog may call MPI_Abort while a collective runs
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &g_local_rank);
  MPI_Comm_size(local, &g_local_size);
  MPI_Comm_free(&local);
  g_initialized = true;
  std::thread(watchdog).detach();
  std::atexit([] { shutdown(); });  // a program that never calls shutdown() still finalizes MPI
#else
  not_built();
#endif
}

bool initialized() {
#if defined(KILN_HAVE_MPI)
  std::lock_guard<std::mutex> lock(g_mu);
  return g_initialized && !g_finalized;
#else
  return false;
#endif
}

void shutdown() {
#if defined(KILN_HAVE_MPI)
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_initialized || g_finalized) return;
  g_stop_watchdog.store(true);
  MPI_Finalize();
  g_finalized = true;
#endif
}

void abort_job(int code) {
#if defined(KILN_HAVE_MPI)
  if (g_initialized && !g_finalized) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::_Exit(code);
}

#if defined(KILN_HAVE_MPI)
#define KILN_COMM_GETTER(name, var)         \
  int name() {                              \
    std::lock_guard<std::mutex> lock(g_mu); \
    require_init();                         \
    return var;                             \
  }
KILN_COMM_GETTER(rank, g_rank)
KILN_COMM_GETTER(size, g_size)
KILN_COMM_GETTER(local_rank, g_local_rank)
KILN_COMM_GETTER(local_size, g_local_size)
#undef KILN_COMM_GETTER
#else
int rank() { not_built(); }
int size() { not_built(); }
int local_rank() { not_built(); }
int local_size() { not_built(); }
#endif

double timeout_seconds() { return g_timeout.load(); }
void set_timeout_seconds(double seconds) {
  if (!(seconds > 0)) throw InvalidArgumentError("kiln.distribute: the timeout must be positive");
  g_timeout.store(seconds);
}
int64_t calls() { return g_calls.load(); }

std::vector<int64_t> agree(const Contribution& mine) {
#if defined(KILN_HAVE_MPI)
  std::lock_guard<std::mutex> lock(g_mu);
  require_init();
  // [dtype, rank, detail, dims...] padded to a fixed length; a rank beyond it cannot agree.
  constexpr int kMaxDims = 8;
  constexpr int kWords = 3 + kMaxDims;
  if (mine.dims.size() > kMaxDims)
    throw InvalidArgumentError(std::string("kiln.distribute: ") + mine.what + " of a tensor of rank " +
                               std::to_string(mine.dims.size()) + " (at most 8)");
  std::vector<int64_t> word(kWords, -1);
  word[0] = static_cast<int64_t>(mine.dtype);
  word[1] = static_cast<int64_t>(mine.dims.size());
  word[2] = mine.detail;
  for (size_t i = 0; i < mine.dims.size(); ++i) word[3 + i] = mine.dims[i];
  std::vector<int64_t> all(static_cast<size_t>(kWords) * g_size);
  {
    InFlight flight(mine.what);
    MPI_Allgather(word.data(), kWords, MPI_INT64_T, all.data(), kWords, MPI_INT64_T, MPI_COMM_WORLD);
  }
  auto text = [&](int r) {
    const int64_t* w = all.data() + static_cast<size_t>(r) * kWords;
    std::string s = std::string(dtype_name(static_cast<DType>(w[0]))) + " (";
    for (int64_t i = 0; i < w[1] && i < kMaxDims; ++i) s += (i ? ", " : "") + std::to_string(w[3 + i]);
    return s + (w[1] == 1 ? ",)" : ")");
  };
  std::vector<int64_t> first_dims(g_size, 0);
  for (int r = 0; r < g_size; ++r) {
    const int64_t* w = all.data() + static_cast<size_t>(r) * kWords;
    bool same = w[0] == word[0] && w[1] == word[1] && w[2] == word[2];
    for (int i = 0; same && i < w[1]; ++i) same = (i == 0 && mine.first_dim_may_differ) || w[3 + i] == word[3 + i];
    if (!same) {
      std::string all_text;
      for (int q = 0; q < g_size; ++q) all_text += "\n  rank " + std::to_string(q) + ": " + text(q);
      throw InvalidArgumentError(std::string("kiln.distribute: the ranks disagree in ") + mine.what +
                                 " (every rank must pass the same dtype, shape" +
                                 (mine.first_dim_may_differ ? " after the first dimension" : "") +
                                 " and arguments):" + all_text);
    }
    first_dims[r] = w[1] > 0 ? w[3] : 1;
  }
  return first_dims;
#else
  (void)mine;
  not_built();
#endif
}

void allreduce(const void* in, void* out, int64_t count, DType dtype, Reduction op) {
#if defined(KILN_HAVE_MPI)
  std::lock_guard<std::mutex> lock(g_mu);
  require_init();
  if (count > INT32_MAX) throw InvalidArgumentError("kiln.distribute: allreduce of more than 2^31 - 1 elements");
  MPI_Op mpi_op = op == Reduction::kSum   ? MPI_SUM
                  : op == Reduction::kMin ? MPI_MIN
                  : op == Reduction::kMax ? MPI_MAX
                                          : MPI_PROD;
  if (dtype == DType::Bool) mpi_op = op == Reduction::kMin || op == Reduction::kProd ? MPI_LAND : MPI_LOR;
  InFlight flight("allreduce");
  MPI_Allreduce(in, out, static_cast<int>(count), mpi_type(dtype), mpi_op, MPI_COMM_WORLD);
#else
  (void)in, (void)out, (void)count, (void)dtype, (void)op;
  not_built();
#endif
}

void allgather(const void* data, int64_t bytes, const std::vector<int64_t>& rank_bytes, void* out) {
#if defined(KILN_HAVE_MPI)
  std::lock_guard<std::mutex> lock(g_mu);
  require_init();
  std::vector<int> counts(g_size), offsets(g_size);
  int64_t at = 0;
  for (int r = 0; r < g_size; ++r) {
    if (rank_bytes[r] > INT32_MAX || at > INT32_MAX)
      throw InvalidArgumentError("kiln.distribute: allgather of more than 2 GiB");
    counts[r] = static_cast<int>(rank_bytes[r]);
    offsets[r] = static_cast<int>(at);
    at += rank_bytes[r];
  }
  InFlight flight("allgather");
  MPI_Allgatherv(data, static_cast<int>(bytes), MPI_BYTE, out, counts.data(), offsets.data(), MPI_BYTE, MPI_COMM_WORLD);
#else
  (void)data, (void)bytes, (void)rank_bytes, (void)out;
  not_built();
#endif
}

void broadcast(void* data, int64_t bytes, int root) {
#if defined(KILN_HAVE_MPI)
  std::lock_guard<std::mutex> lock(g_mu);
  require_init();
  if (bytes > INT32_MAX) throw InvalidArgumentError("kiln.distribute: broadcast of more than 2 GiB");
  InFlight flight("broadcast");
  MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, MPI_COMM_WORLD);
#else
  (void)data, (void)bytes, (void)root;
  not_built();
#endif
}

}  // namespace kiln::distribute::comm
