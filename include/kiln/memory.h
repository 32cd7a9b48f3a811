// Memory kiln keeps for reuse, and giving it back.
#pragma once
#include <cstdint>

namespace kiln::config {

// kiln recycles tensor buffers through caches that together keep at most the cache limit;
// anything beyond goes back to the system when it is released. The limit is, by default, an
// eighth of the machine's memory, at most 1 GiB and at least 64 MiB (the environment variable
// KILN_MEMORY_CACHE_BYTES sets another at start-up): large enough that a model's activations
// (at batch 32, 50-150 MB each) are reused from call to call instead of taken fresh from the
// system, which zeroes every page. trim_memory() also gives back what the caches hold (the
// calling thread's and the shared one: another thread's cache is returned when that thread
// ends), and asks malloc to return its free memory.
void trim_memory();

// Sets the cache limit in bytes (0: keep nothing); what the shared caches hold beyond it is
// given back now.
void set_memory_cache_limit(int64_t bytes);

struct MemoryStats {
  int64_t cached_bytes;       // buffers held for reuse, over all caches
  int64_t cache_limit_bytes;  // what they may hold together
};
MemoryStats memory_stats();

}  // namespace kiln::config
