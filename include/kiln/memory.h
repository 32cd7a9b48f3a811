// Memory kiln keeps for reuse, and giving it back.
#pragma once
#include <cstdint>

namespace kiln::config {

// kiln recycles tensor buffers through caches that together keep at most 64 MiB; anything
// beyond goes back to the system when it is released. trim_memory() also gives back what the
// caches hold (the calling thread's and the shared one: another thread's cache is returned
// when that thread ends), and asks malloc to return its free memory.
void trim_memory();

struct MemoryStats {
  int64_t cached_bytes;  // buffers held for reuse, over all caches
};
MemoryStats memory_stats();

}  // namespace kiln::config
