// The instruction-set level kiln's kernels run at, picked once per process: one binary
// carries every hot loop compiled for x86-64 baseline, AVX2+FMA and AVX-512, and runs the
// best the CPU has (as oneDNN and ONNX Runtime do), so no build needs -march=native to be
// fast. KILN_CPU_ISA=baseline|avx2|avx512 lowers the level (never raises it past the CPU's):
// CI runs the sanitizer suites at the lower levels, so every variant stays tested.
#pragma once

namespace kiln {

enum class CpuIsa : int { kBaseline = 0, kAvx2 = 1, kAvx512 = 2 };

// The level this CPU supports (AVX2: x86-64-v3, AVX2 with FMA, BMI1/2, F16C, LZCNT, MOVBE and
// POPCNT; AVX-512: that and AVX-512 F, BW, DQ, VL, CD).
CpuIsa cpu_isa_supported();
// The level kernels run at: the CPU's, or lower when KILN_CPU_ISA asks (read once).
CpuIsa cpu_isa();
const char* cpu_isa_name(CpuIsa isa);  // "baseline", "avx2", "avx512"

namespace detail {
// The level for a CPU supporting `cpu` under KILN_CPU_ISA=`requested` (null or empty: unset);
// an unknown name leaves the CPU's level and sets *unknown.
CpuIsa pick_cpu_isa(CpuIsa cpu, const char* requested, bool* unknown);
// cpu_isa(), cached: read on every dispatched kernel call (a load and a switch).
extern const CpuIsa g_cpu_isa;
}  // namespace detail

}  // namespace kiln
