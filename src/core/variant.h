// The objects a Variant tensor's elements point to (TensorFlow's DT_VARIANT: today the
// TensorList of a While loop). Each element of a Variant tensor holds one reference; the
// tensor's impl releases them when it dies and an alias retains them, so the objects live
// exactly as long as some tensor holds them. Objects are immutable once shared: an op that
// "changes" one makes a new one, unless it holds the only reference (then it may reuse it).
#pragma once
#include <atomic>
#include <cstdint>
#include <string>

namespace kiln::detail {

struct TensorImpl;

struct VariantValue {
  std::atomic<int32_t> refs{1};
  virtual ~VariantValue() = default;
  // TensorFlow's name of what it holds ("tensorflow::TensorList"), for messages.
  virtual const char* type_name() const = 0;
  // A short description for reprs and messages.
  virtual std::string summary() const = 0;
};

inline void variant_retain(VariantValue* v) {
  if (v) v->refs.fetch_add(1, std::memory_order_relaxed);
}
inline void variant_release(VariantValue* v) noexcept {
  if (v && v->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete v;
}

// Variant tensors keep their element pointers inline, so they hold at most this many
// elements (kInlineBytes / 8); TensorFlow's TensorList ops make scalars.
inline constexpr int64_t kMaxVariantElements = 8;

}  // namespace kiln::detail
