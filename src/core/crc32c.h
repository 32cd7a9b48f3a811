// CRC-32C (Castagnoli), as TensorFlow's checkpoint and table formats use it, and the "mask"
// those formats store instead of the raw value (a CRC of data that holds CRCs is weak).
#pragma once
#include <cstddef>
#include <cstdint>

namespace kiln {

// Extends `crc` (the CRC of earlier bytes; 0 to start) over n more bytes.
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t n);
inline uint32_t crc32c(const void* data, size_t n) { return crc32c_extend(0, data, n); }

inline constexpr uint32_t kCrcMaskDelta = 0xa282ead8u;
inline uint32_t crc32c_mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kCrcMaskDelta; }
inline uint32_t crc32c_unmask(uint32_t masked) {
  const uint32_t r = masked - kCrcMaskDelta;
  return (r >> 17) | (r << 15);
}

}  // namespace kiln
