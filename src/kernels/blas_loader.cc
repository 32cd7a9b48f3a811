// Loads OpenBLAS at first use. OpenBLAS picks its core type when it is loaded, reading
// OPENBLAS_CORETYPE; a value that names an older core (Haswell on an AVX-512 machine)
// halves its speed. So kiln does not link it: it clears the variable, dlopens the library,
// and restores the variable. If the process already had OpenBLAS loaded with another core,
// kiln keeps it only if it reports the core this CPU should use; otherwise it uses Eigen.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "kernels/blas.h"

namespace kiln::kernels {
namespace {

Blas load() {
  Blas b{};
  const char* old = std::getenv("OPENBLAS_CORETYPE");
  std::string saved = old ? old : "";
  if (old) unsetenv("OPENBLAS_CORETYPE");
  void* h = nullptr;
  for (const char* name : {"libopenblas.so.0", "libopenblas.so", "libopenblasp.so.0"}) {
    h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (h) break;
  }
  if (old) setenv("OPENBLAS_CORETYPE", saved.c_str(), 1);
  if (!h) return b;
  b.sgemm = reinterpret_cast<Blas::Sgemm>(dlsym(h, "cblas_sgemm"));
  b.dgemm = reinterpret_cast<Blas::Dgemm>(dlsym(h, "cblas_dgemm"));
  auto set_threads = reinterpret_cast<void (*)(int)>(dlsym(h, "openblas_set_num_threads"));
  auto corename = reinterpret_cast<char* (*)()>(dlsym(h, "openblas_get_corename"));
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

bool Blas::core_is_pinned() const {
  // A pinned core that is older than what the CPU supports; today: Haswell on AVX-512.
  return core && strcasecmp(core, "haswell") == 0 && __builtin_cpu_supports("avx512f");
}

const Blas& blas() {
  static const Blas b = load();
  return b;
}

}  // namespace kiln::kernels
