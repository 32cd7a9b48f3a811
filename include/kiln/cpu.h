// Which instruction set kiln's kernels run on this CPU. One binary carries its hot kernels
// for x86-64 baseline, AVX2+FMA and AVX-512, and picks the best the CPU has when the library
// loads; the environment variable KILN_CPU_ISA=baseline|avx2|avx512 lowers the level (never
// past what the CPU has), to compare levels or reproduce a result from another machine.
#pragma once

namespace kiln::config {

// "avx512", "avx2" or "baseline": the level kernels run at in this process.
const char* cpu_isa();
// The highest level this CPU supports (cpu_isa() unless KILN_CPU_ISA lowered it).
const char* cpu_isa_supported();
// The library large float32/float64 products run on: "openblas (<its core>)" when OpenBLAS
// loaded (the file KILN_OPENBLAS_LIBRARY names if set — the Python wheel points it at
// scipy-openblas32's — else the system's libopenblas), "eigen" otherwise.
const char* gemm_library();
// The library float32 convolutions run on: "onednn <version> (<its ISA>)" when oneDNN 2.x
// (libdnnl.so.2) loaded and KILN_ONEDNN is not 0, else "kiln" with the reason in parentheses.
// oneDNN runs at most the level of cpu_isa(), so KILN_CPU_ISA lowers it too.
const char* convolution_library();

}  // namespace kiln::config
