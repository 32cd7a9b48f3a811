// OpenBLAS, loaded at run time (see blas_loader.cc for why).
#pragma once

namespace kiln::kernels {

struct Blas {
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
  using Dgemm = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*,
                         int);
  Sgemm sgemm = nullptr;
  Dgemm dgemm = nullptr;
  const char* core = nullptr;
  bool core_is_pinned() const;
  // The OpenBLAS core for the level kiln's kernels run at (cpu_isa()): "SkylakeX", "Haswell",
  // or null (below AVX2: OpenBLAS decides).
  static const char* core_for_this_cpu();
};

// The loaded library; members are null when OpenBLAS is unavailable.
const Blas& blas();

inline constexpr int kCblasRowMajor = 101, kCblasNoTrans = 111, kCblasTrans = 112;

}  // namespace kiln::kernels
