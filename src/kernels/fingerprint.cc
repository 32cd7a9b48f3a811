// FarmHash's 64-bit fingerprint, written from its published algorithm: strings of up to 16,
// 32 and 64 bytes have their own mixes; longer ones are consumed 64 bytes at a time with two
// 128-bit states. Reads are little-endian whatever the machine.
#include "kernels/fingerprint.h"

#include <utility>

namespace kiln::kernels {
namespace {

constexpr uint64_t k0 = 0xc3a5c85c97cb3127ULL;
constexpr uint64_t k1 = 0xb492b66fbe98f273ULL;
constexpr uint64_t k2 = 0x9ae16a3b2f90404fULL;

uint64_t load64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
uint64_t load32(const char* p) {
  uint64_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
uint64_t rotr(uint64_t v, int shift) { return shift == 0 ? v : (v >> shift) | (v << (64 - shift)); }
uint64_t shift_mix(uint64_t v) { return v ^ (v >> 47); }

uint64_t mix16(uint64_t u, uint64_t v, uint64_t mul) {
  uint64_t a = (u ^ v) * mul;
  a ^= a >> 47;
  uint64_t b = (v ^ a) * mul;
  b ^= b >> 47;
  return b * mul;
}

uint64_t up_to_16(const char* s, size_t len) {
  if (len >= 8) {
    const uint64_t mul = k2 + len * 2;
    const uint64_t a = load64(s) + k2, b = load64(s + len - 8);
    const uint64_t c = rotr(b, 37) * mul + a, d = (rotr(a, 25) + b) * mul;
    return mix16(c, d, mul);
  }
  if (len >= 4) {
    const uint64_t mul = k2 + len * 2;
    return mix16(len + (load32(s) << 3), load32(s + len - 4), mul);
  }
  if (len > 0) {
    const uint8_t a = static_cast<uint8_t>(s[0]), b = static_cast<uint8_t>(s[len >> 1]),
                  c = static_cast<uint8_t>(s[len - 1]);
    const uint32_t y = static_cast<uint32_t>(a) + (static_cast<uint32_t>(b) << 8);
    const uint32_t z = static_cast<uint32_t>(len) + (static_cast<uint32_t>(c) << 2);
    return shift_mix(y * k2 ^ z * k0) * k2;
  }
  return k2;
}

uint64_t up_to_32(const char* s, size_t len) {
  const uint64_t mul = k2 + len * 2;
  const uint64_t a = load64(s) * k1, b = load64(s + 8);
  const uint64_t c = load64(s + len - 8) * mul, d = load64(s + len - 16) * k2;
  return mix16(rotr(a + b, 43) + rotr(c, 30) + d, a + rotr(b + k2, 18) + c, mul);
}

uint64_t up_to_64(const char* s, size_t len) {
  const uint64_t mul = k2 + len * 2;
  const uint64_t a = load64(s) * k2, b = load64(s + 8);
  const uint64_t c = load64(s + len - 8) * mul, d = load64(s + len - 16) * k2;
  const uint64_t y = rotr(a + b, 43) + rotr(c, 30) + d;
  const uint64_t z = mix16(y, a + rotr(b + k2, 18) + c, mul);
  const uint64_t e = load64(s + 16) * mul, f = load64(s + 24);
  const uint64_t g = (y + load64(s + len - 32)) * mul, h = (z + load64(s + len - 24)) * mul;
  return mix16(rotr(e + f, 43) + rotr(g, 30) + h, e + rotr(f + a, 18) + g, mul);
}

// Two 64-bit lanes mixed from 32 bytes and two seeds.
std::pair<uint64_t, uint64_t> weak32(const char* s, uint64_t a, uint64_t b) {
  const uint64_t w = load64(s), x = load64(s + 8), y = load64(s + 16), z = load64(s + 24);
  a += w;
  b = rotr(b + a + z, 21);
  const uint64_t c = a;
  a += x;
  a += y;
  b += rotr(a, 44);
  return {a + z, b + c};
}

}  // namespace

uint64_t fingerprint64(std::string_view text) {
  const char* s = text.data();
  const size_t len = text.size();
  if (len <= 16) return up_to_16(s, len);
  if (len <= 32) return up_to_32(s, len);
  if (len <= 64) return up_to_64(s, len);
  constexpr uint64_t seed = 81;
  uint64_t x = seed, y = seed * k1 + 113, z = shift_mix(y * k2 + 113) * k2;
  std::pair<uint64_t, uint64_t> v{0, 0}, w{0, 0};
  x = x * k2 + load64(s);
  const char* end = s + ((len - 1) / 64) * 64;
  const char* last64 = end + ((len - 1) & 63) - 63;
  do {
    x = rotr(x + y + v.first + load64(s + 8), 37) * k1;
    y = rotr(y + v.second + load64(s + 48), 42) * k1;
    x ^= w.second;
    y += v.first + load64(s + 40);
    z = rotr(z + w.first, 33) * k1;
    v = weak32(s, v.second * k1, x + w.first);
    w = weak32(s + 32, z + w.second, y + load64(s + 16));
    std::swap(z, x);
    s += 64;
  } while (s != end);
  const uint64_t mul = k1 + ((z & 0xff) << 1);
  s = last64;
  w.first += (len - 1) & 63;
  v.first += w.first;
  w.first += v.first;
  x = rotr(x + y + v.first + load64(s + 8), 37) * mul;
  y = rotr(y + v.second + load64(s + 48), 42) * mul;
  x ^= w.second * 9;
  y += v.first * 9 + load64(s + 40);
  z = rotr(z + w.first, 33) * mul;
  v = weak32(s, v.second * mul, x + w.first);
  w = weak32(s + 32, z + w.second, y + load64(s + 16));
  std::swap(z, x);
  return mix16(mix16(v.first, w.first, mul) + shift_mix(y) * k0 + z, mix16(v.second, w.second, mul) + x, mul);
}

}  // namespace kiln::kernels
