#include "kiln/memory.h"

#include "core/buffer.h"

namespace kiln::config {

void trim_memory() { buffer_trim(); }

MemoryStats memory_stats() { return MemoryStats{.cached_bytes = buffer_stats().cached_bytes}; }

}  // namespace kiln::config
