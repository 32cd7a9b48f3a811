// Loads OpenBLAS at first use. OpenBLAS picks its core type when it is loaded, reading
// OPENBLAS_CORETYPE; a value that names an older core (Haswell on an AVX-512 machine)
// halves its speed. And its own detection can fail on CPUs newer than the library (Debian
// 12's OpenBLAS takes some current Xeons for a Prescott, its SSE3 fallback: 4.5x slower than
// Eigen). So kiln does not link it: it sets the variable to the core for the level kiln's
// own kernels run at (SkylakeX at avx512, Haswell at avx2; OpenBLAS's own choice below),
// dlopens the library, and restores the variable. If the process already had OpenBLAS loaded
// with another core, kiln keeps it only if it reports that core; otherwise it uses Eigen.
// KILN_OPENBLAS_LIBRARY names a library to try first: the Python wheel points it at the
// scipy-openblas32 wheel's (symbols with a "scipy_" prefix), so an installed wheel runs the
// same OpenBLAS on every machine, with or without a system one.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "core/cpu_isa.h"
#include "kernels/blas.h"

namespace kiln::kernels {
namespace {

// Sets (or, given null, removes) an environment variable while alive; restores it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) saved_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, saved_.c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string saved_;
  bool had_ = false;
};

Blas load() {
  Blas b{};
  void* h = nullptr;
  {
    // The core for kiln's level (or OpenBLAS's own choice, the variable unset), and one
    // thread: OpenBLAS starts its thread pool when it loads, and the pool's threads spin for
    // about 0.1 s before they sleep, taking a core from kiln's helpers (an LSTM's steps on two
    // threads ran 15x slower for its first ten calls). Setting one thread after loading came
    // too late for that.
    const ScopedEnv core("OPENBLAS_CORETYPE", Blas::core_for_this_cpu());
    const ScopedEnv threads("OPENBLAS_NUM_THREADS", "1");
    if (const char* path = std::getenv("KILN_OPENBLAS_LIBRARY"); path && *path) h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    for (const char* name : {"libopenblas.so.0", "libopenblas.so", "libopenblasp.so.0"}) {
      if (h) break;
      h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    }
  }
  if (!h) return b;
  // OpenBLAS's own names, or scipy-openblas's prefixed ones: the first prefix with sgemm wins.
  std::string prefix;
  for (const char* p : {"", "scipy_"}) {
    if (dlsym(h, (std::string(p) + "cblas_sgemm").c_str())) {
      prefix = p;
      break;
    }
  }
  auto sym = [&](const char* name) { return dlsym(h, (prefix + name).c_str()); };
  b.sgemm = reinterpret_cast<Blas::Sgemm>(sym("cblas_sgemm"));
  b.dgemm = reinterpret_cast<Blas::Dgemm>(sym("cblas_dgemm"));
  auto set_threads = reinterpret_cast<void (*)(int)>(sym("openblas_set_num_threads"));
  auto corename = reinterpret_cast<char* (*)()>(sym("openblas_get_corename"));
  if (set_threads) set_threads(1);  // kiln owns threading; OpenBLAS's pool would oversubscribe
  if (corename) b.core = corename();
  if (b.core_is_pinned()) {
    // The process had loaded it already, pinned to an older core: Eigen is faster then.
    b.sgemm = nullptr;
    b.dgemm = nullptr;
  }
  return b;
}

}  // namespace

// OpenBLAS's core for the level kiln's own kernels run at (cpu_isa(): the CPU's, or lower
// under KILN_CPU_ISA), so one CPU detection serves both, and a suite run at a lower level
// runs OpenBLAS's kernels of that level too. Below AVX2 OpenBLAS picks its own.
const char* Blas::core_for_this_cpu() {
  switch (cpu_isa()) {
    case CpuIsa::kAvx512:
      return "SkylakeX";
    case CpuIsa::kAvx2:
      return "Haswell";
    case CpuIsa::kBaseline:
      break;
  }
  return nullptr;
}

bool Blas::core_is_pinned() const {
  // The library reports another core than the one this CPU should use: it was loaded before
  // kiln (pinned by the process, or detected wrongly), and Eigen is faster than it then.
  const char* wanted = core_for_this_cpu();
  return core && wanted && strcasecmp(core, wanted) != 0;
}

const Blas& blas() {
  static const Blas b = load();
  return b;
}

}  // namespace kiln::kernels
