// Per-thread scratch memory for kernels (transposed copies, packed panels), reused across
// calls so that a small op allocates nothing. A thread's scratch lives on the heap and its
// thread-local state is one pointer: libkiln's thread-locals must stay small (core/tls.h).
#pragma once
#include <cstddef>

namespace kiln::detail {

// Slots, one per use that may be live at once: a convolution's patches stay live while its
// GEMM packs operands.
inline constexpr int kGemmScratchA = 0;
inline constexpr int kGemmScratchB = 1;
inline constexpr int kConvScratch = 2;
inline constexpr int kReduceScratch = 3;     // a reduction's transposed copy, log-softmax's exps
inline constexpr int kFusedScratch = 4;      // a fused elementwise kernel's repeated per-channel vectors
inline constexpr int kBroadcastScratch = 5;  // a binary op's repeated row (ops/binary.cc)
inline constexpr int kEpilogueScratch = 6;   // a convolution epilogue's stand-in vectors (ops/conv_epilogue.cc)
inline constexpr int kScratchSlots = 7;

// At least `bytes` bytes, 64-byte aligned, valid until this thread asks for the same slot
// again. Its contents are not kept across calls.
void* scratch_bytes(int slot, size_t bytes);

template <class T>
T* scratch(int slot, size_t count) {
  return static_cast<T*>(scratch_bytes(slot, count * sizeof(T)));
}

}  // namespace kiln::detail
