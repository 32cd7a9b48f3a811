// Little-endian integer encodings of LevelDB tables and TensorBundles, read from untrusted
// bytes: every read is bounded by `end`.
#pragma once
#include <cstdint>

namespace kiln::io {

// A base-128 varint at p (advanced past it); false if it runs past end or beyond 64 bits.
inline bool get_varint64(const unsigned char*& p, const unsigned char* end, uint64_t* out) {
  uint64_t v = 0;
  for (int shift = 0; shift <= 63; shift += 7) {
    if (p >= end) return false;
    const unsigned char b = *p++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = v;
      return true;
    }
  }
  return false;
}

// Four bytes at p (the caller checked they exist).
inline uint32_t get_fixed32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

}  // namespace kiln::io
