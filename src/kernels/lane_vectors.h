// Independent accumulator lanes (a pairwise sum's 8, a row max's 16) held in the level's own
// vector registers. Written as arrays (acc[k] += p[i + k]), GCC unrolls such lanes into
// scalar instructions instead of vectorizing them (a float32 row sum ran at about two
// elements a cycle); as GCC vector types of at most the level's width (`bytes`, from
// KILN_ISA_DISPATCH's kIsaVectorBytes) each lane is still one accumulator computing what it
// did, in the same order, so the results do not change, only the instructions.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>

namespace kiln::kernels {

template <class T, int kLanes, int bytes>
struct LaneVectors {
  static constexpr int kVecBytes = std::min<int>(bytes, kLanes* static_cast<int>(sizeof(T)));
  static constexpr int kPerVec = kVecBytes / static_cast<int>(sizeof(T));
  static constexpr int kVecs = kLanes / kPerVec;
  static_assert(kVecs * kPerVec == kLanes, "lanes must fill whole vectors");
  typedef T Vec __attribute__((vector_size(kVecBytes)));
  Vec v[kVecs];

  [[gnu::always_inline]] void load(const T* p) {
    for (int k = 0; k < kVecs; ++k) std::memcpy(&v[k], p + k * kPerVec, kVecBytes);
  }
  [[gnu::always_inline]] void add(const T* p) {
    for (int k = 0; k < kVecs; ++k) {
      Vec x;
      std::memcpy(&x, p + k * kPerVec, kVecBytes);
      v[k] += x;
    }
  }
  // Each lane keeps its value unless the element is larger: std::max(lane, x), NaN included.
  [[gnu::always_inline]] void max(const T* p) {
    for (int k = 0; k < kVecs; ++k) {
      Vec x;
      std::memcpy(&x, p + k * kPerVec, kVecBytes);
      v[k] = v[k] < x ? x : v[k];
    }
  }
  [[gnu::always_inline]] void store(T* out) const { std::memcpy(out, v, sizeof v); }
};

}  // namespace kiln::kernels
