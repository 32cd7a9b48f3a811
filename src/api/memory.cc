#include "kiln/memory.h"

#include "core/buffer.h"

namespace kiln::config {

void trim_memory() { buffer_trim(); }

void set_memory_cache_limit(int64_t bytes) { buffer_set_cache_limit(bytes); }

MemoryStats memory_stats() {
  return MemoryStats{.cached_bytes = buffer_stats().cached_bytes, .cache_limit_bytes = buffer_cache_limit()};
}

}  // namespace kiln::config
