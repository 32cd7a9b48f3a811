// Fingerprint64: the 64-bit string fingerprint TensorFlow uses (FarmHash's Fingerprint64, the
// "na" variant of its 64-bit hash) for tf.strings.to_hash_bucket_fast and tf.fingerprint. The
// bits are part of the contract: a model's hash buckets must not move between frameworks.
#pragma once
#include <cstdint>
#include <string_view>

namespace kiln::kernels {

uint64_t fingerprint64(std::string_view s);

}  // namespace kiln::kernels
