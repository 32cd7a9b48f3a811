// TensorFlow's random bits: the Philox4x32-10 counter-based generator (Salmon et al., SC 2011)
// and the transforms TensorFlow's CPU kernels apply to its 32-bit words, so that a seed gives
// kiln the numbers it gives TensorFlow. Each call of the generator turns the 128-bit counter
// and 64-bit key into four 32-bit words and advances the counter by one.
//
// A distribution consumes the stream in groups as TensorFlow's FillPhiloxRandom does: each
// fixed-size group (4 floats, 2 doubles, 4 int32, 2 int64) takes one generator call, and a
// short last group uses the first words of its call. Truncated normal values take a variable
// number of words, so each group of them starts `kTruncatedSkip` calls after the previous one.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kiln/half.h"

namespace kiln::kernels {

struct Philox {
  uint32_t counter[4] = {0, 0, 0, 0};
  uint32_t key[2] = {0, 0};

  struct Block {
    uint32_t w[4];
  };

  // TensorFlow's PhiloxRandom(seed_lo, seed_hi): the key from seed_lo, the counter's upper
  // half from seed_hi (what a stateful op's seed and seed2 attrs make).
  static Philox from_seeds(uint64_t seed_lo, uint64_t seed_hi) {
    Philox p;
    p.key[0] = static_cast<uint32_t>(seed_lo);
    p.key[1] = static_cast<uint32_t>(seed_lo >> 32);
    p.counter[2] = static_cast<uint32_t>(seed_hi);
    p.counter[3] = static_cast<uint32_t>(seed_hi >> 32);
    return p;
  }
  // The V2 stateless ops' layout: counter as two uint64 (low first), key as one.
  static Philox from_key_counter(uint64_t key, uint64_t counter_lo, uint64_t counter_hi) {
    Philox p;
    p.key[0] = static_cast<uint32_t>(key);
    p.key[1] = static_cast<uint32_t>(key >> 32);
    p.counter[0] = static_cast<uint32_t>(counter_lo);
    p.counter[1] = static_cast<uint32_t>(counter_lo >> 32);
    p.counter[2] = static_cast<uint32_t>(counter_hi);
    p.counter[3] = static_cast<uint32_t>(counter_hi >> 32);
    return p;
  }
  // The stateless ops' seed scrambling (TensorFlow's GenerateKey): the seed pair is the
  // counter of one call under a fixed key, whose words become the key and the counter's
  // upper half, so neither seed needs to be strong.
  static Philox from_stateless_seed(uint64_t seed0, uint64_t seed1) {
    Philox mixer;
    mixer.key[0] = 0x3ec8f720u;
    mixer.key[1] = 0x02461e29u;
    mixer.counter[0] = static_cast<uint32_t>(seed0);
    mixer.counter[1] = static_cast<uint32_t>(seed0 >> 32);
    mixer.counter[2] = static_cast<uint32_t>(seed1);
    mixer.counter[3] = static_cast<uint32_t>(seed1 >> 32);
    const Block mix = mixer.next();
    Philox p;
    p.key[0] = mix.w[0];
    p.key[1] = mix.w[1];
    p.counter[2] = mix.w[2];
    p.counter[3] = mix.w[3];
    return p;
  }
  uint64_t key64() const { return key[0] | uint64_t{key[1]} << 32; }
  uint64_t counter64(int half) const { return counter[2 * half] | uint64_t{counter[2 * half + 1]} << 32; }

  // Advances the 128-bit counter by `n` calls.
  void skip(uint64_t n) {
    const uint64_t lo = counter64(0), sum = lo + n;
    counter[0] = static_cast<uint32_t>(sum);
    counter[1] = static_cast<uint32_t>(sum >> 32);
    if (sum < lo && ++counter[2] == 0) ++counter[3];
  }

  Block next() {
    uint32_t c[4] = {counter[0], counter[1], counter[2], counter[3]};
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; ++round) {
      const uint64_t p0 = uint64_t{0xD2511F53u} * c[0], p1 = uint64_t{0xCD9E8D57u} * c[2];
      const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
      const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
      c[0] = hi1 ^ c[1] ^ k0;
      c[1] = lo1;
      c[2] = hi0 ^ c[3] ^ k1;
      c[3] = lo0;
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    skip(1);
    return Block{{c[0], c[1], c[2], c[3]}};
  }
};

// [0, 1) from the low mantissa bits of the words, as TensorFlow builds them: a value in [1, 2)
// with random mantissa, minus one.
inline float word_to_float(uint32_t x) {
  const uint32_t bits = (127u << 23) | (x & 0x7fffffu);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f - 1.0f;
}
inline double words_to_double(uint32_t hi, uint32_t lo) {
  const uint64_t bits = (uint64_t{1023} << 52) | (uint64_t{hi & 0xfffffu} << 32) | lo;
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d - 1.0;
}
// The 16-bit floats take the word's low 16 bits: 10 mantissa bits (float16), 7 (bfloat16).
inline float16 word_to_half(uint32_t x) {
  return float16(float(float16::from_bits(static_cast<uint16_t>((15u << 10) | (x & 0x3ffu)))) - 1.0f);
}
inline bfloat16 word_to_bfloat16(uint32_t x) {
  return bfloat16(float(bfloat16::from_bits(static_cast<uint16_t>((127u << 7) | (x & 0x7fu)))) - 1.0f);
}

// Box-Muller on two words (float) or four (double), with TensorFlow's guard against log(0).
inline void box_muller(uint32_t x0, uint32_t x1, float* f0, float* f1) {
  float u1 = word_to_float(x0);
  if (u1 < 1.0e-7f) u1 = 1.0e-7f;
  const float v1 = static_cast<float>(2.0 * M_PI * static_cast<double>(word_to_float(x1)));
  const float u2 = std::sqrt(-2.0f * std::log(u1));
  ::sincosf(v1, f0, f1);
  *f0 *= u2;
  *f1 *= u2;
}
inline void box_muller(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3, double* d0, double* d1) {
  double u1 = words_to_double(x0, x1);
  if (u1 < 1.0e-7) u1 = 1.0e-7;
  const double v1 = 2 * M_PI * words_to_double(x2, x3);
  const double u2 = std::sqrt(-2.0 * std::log(u1));
  ::sincos(v1, d0, d1);
  *d0 *= u2;
  *d1 *= u2;
}

template <class T>
inline constexpr bool kWide = std::is_same_v<T, double> || std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>;

// Fills out[0, n) group by group: `group(block, values)` turns one generator call into a
// group of G values.
template <int G, class T, class F>
void fill_groups(Philox gen, T* out, int64_t n, F group) {
  T values[G];
  for (int64_t i = 0; i < n; i += G) {
    group(gen.next(), values);
    const int64_t take = n - i < G ? n - i : G;
    for (int64_t j = 0; j < take; ++j) out[i + j] = values[j];
  }
}

// Uniform [0, 1) floats of T.
template <class T>
void fill_uniform(const Philox& gen, T* out, int64_t n) {
  if constexpr (std::is_same_v<T, double>) {
    fill_groups<2>(gen, out, n, [](const Philox::Block& b, double* v) {
      v[0] = words_to_double(b.w[0], b.w[1]);
      v[1] = words_to_double(b.w[2], b.w[3]);
    });
  } else {
    fill_groups<4>(gen, out, n, [](const Philox::Block& b, T* v) {
      for (int i = 0; i < 4; ++i) {
        if constexpr (std::is_same_v<T, float>)
          v[i] = word_to_float(b.w[i]);
        else if constexpr (std::is_same_v<T, float16>)
          v[i] = word_to_half(b.w[i]);
        else
          v[i] = word_to_bfloat16(b.w[i]);
      }
    });
  }
}

// Standard normal values of T (16-bit floats: computed in float, rounded once).
template <class T>
void fill_normal(const Philox& gen, T* out, int64_t n) {
  if constexpr (std::is_same_v<T, double>) {
    fill_groups<2>(gen, out, n,
                   [](const Philox::Block& b, double* v) { box_muller(b.w[0], b.w[1], b.w[2], b.w[3], &v[0], &v[1]); });
  } else {
    fill_groups<4>(gen, out, n, [](const Philox::Block& b, T* v) {
      float f[4];
      box_muller(b.w[0], b.w[1], &f[0], &f[1]);
      box_muller(b.w[2], b.w[3], &f[2], &f[3]);
      for (int i = 0; i < 4; ++i) v[i] = static_cast<T>(f[i]);
    });
  }
}

// Generator calls reserved per group of truncated normal values (TensorFlow reserves 256
// words per value; a group is 4 floats or 2 doubles, 4 words per call).
inline constexpr uint64_t kTruncatedSkip = 256;

// Standard normal values of T with magnitude below 2: pairs outside are drawn again. Each
// group of values reads words from its own reserved stretch of the stream.
template <class T>
void fill_truncated_normal(const Philox& base, T* out, int64_t n) {
  constexpr int G = std::is_same_v<T, double> ? 2 : 4;
  for (int64_t g = 0; g * G < n; ++g) {
    Philox gen = base;
    gen.skip(static_cast<uint64_t>(g) * G * kTruncatedSkip / 4);
    Philox::Block block{};
    int used = 4;
    auto word = [&]() {
      if (used == 4) {
        block = gen.next();
        used = 0;
      }
      return block.w[used++];
    };
    const int64_t take = n - g * G < G ? n - g * G : G;
    int64_t got = 0;
    while (got < take) {
      T pair[2];
      if constexpr (std::is_same_v<T, double>) {
        const uint32_t x0 = word(), x1 = word(), x2 = word(), x3 = word();
        box_muller(x0, x1, x2, x3, &pair[0], &pair[1]);
        for (double d : pair)
          if (std::fabs(d) < 2.0 && got < take) out[g * G + got++] = d;
      } else {
        const uint32_t x0 = word(), x1 = word();
        float f[2];
        box_muller(x0, x1, &f[0], &f[1]);
        for (float v : f)
          if (std::fabs(v) < 2.0f && got < take) out[g * G + got++] = static_cast<T>(v);
      }
    }
  }
}

// Integers lo + (bits mod range) with range = hi - lo > 0 (int32: one word each; int64: two).
template <class T>
void fill_uniform_int(const Philox& gen, T* out, int64_t n, T lo, T hi) {
  using U = std::make_unsigned_t<T>;
  const U range = static_cast<U>(static_cast<U>(hi) - static_cast<U>(lo));
  if constexpr (kWide<T>) {
    fill_groups<2>(gen, out, n, [&](const Philox::Block& b, T* v) {
      for (int i = 0; i < 2; ++i)
        v[i] = static_cast<T>(static_cast<U>(lo) + (b.w[2 * i] | uint64_t{b.w[2 * i + 1]} << 32) % range);
    });
  } else {
    fill_groups<4>(gen, out, n, [&](const Philox::Block& b, T* v) {
      for (int i = 0; i < 4; ++i) v[i] = static_cast<T>(static_cast<U>(lo) + b.w[i] % range);
    });
  }
}

// Integers over the whole range of T (32-bit: a word; 64-bit: two, the first low).
template <class T>
void fill_full_int(const Philox& gen, T* out, int64_t n) {
  if constexpr (kWide<T>) {
    fill_groups<2>(gen, out, n, [](const Philox::Block& b, T* v) {
      for (int i = 0; i < 2; ++i) v[i] = static_cast<T>(b.w[2 * i] | uint64_t{b.w[2 * i + 1]} << 32);
    });
  } else {
    fill_groups<4>(gen, out, n, [](const Philox::Block& b, T* v) {
      for (int i = 0; i < 4; ++i) v[i] = static_cast<T>(b.w[i]);
    });
  }
}

}  // namespace kiln::kernels
