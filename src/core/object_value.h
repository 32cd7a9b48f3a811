// The objects the elements of kiln's object dtypes point to: String (TensorFlow's
// DT_STRING: byte strings) and Variant (DT_VARIANT: today the TensorList of a While loop).
// Each element of such a tensor holds one reference or is null (an empty string, an unset
// variant); the tensor's impl owns those references: it starts with every element null,
// an alias retains them, and the impl's death releases them, so an object lives exactly as
// long as some tensor holds it. Objects are immutable once shared: an op that "changes" one
// makes a new one, unless it holds the only reference (then it may reuse it).
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/dtype_table.h"

namespace kiln::detail {

struct ObjectValue {
  std::atomic<int32_t> refs{1};
  virtual ~ObjectValue() = default;
  // TensorFlow's name of what it holds ("tensorflow::TensorList"), for messages.
  virtual const char* type_name() const = 0;
  // A short description for reprs and messages.
  virtual std::string summary() const = 0;
};

inline void object_retain(ObjectValue* v) {
  if (v) v->refs.fetch_add(1, std::memory_order_relaxed);
}
inline void object_release(ObjectValue* v) noexcept {
  if (v && v->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete v;
}

// True for the dtypes whose elements are ObjectValue pointers.
constexpr bool holds_objects(DType d) { return d == DType::String || d == DType::Variant; }

// One element of a String tensor: immutable bytes (not necessarily UTF-8).
struct StringValue final : ObjectValue {
  explicit StringValue(std::string b) : bytes(std::move(b)) {}
  std::string bytes;
  const char* type_name() const override { return "string"; }
  std::string summary() const override { return bytes; }
};

// The bytes of a String element (null is the empty string).
inline std::string_view string_of(const ObjectValue* v) {
  return v ? std::string_view(static_cast<const StringValue*>(v)->bytes) : std::string_view();
}
// A new String element holding `bytes` (null for the empty string), one reference owned by
// the caller, who stores it in an element.
inline ObjectValue* make_string(std::string bytes) {
  return bytes.empty() ? nullptr : new StringValue(std::move(bytes));
}
inline ObjectValue* make_string(std::string_view bytes) { return make_string(std::string(bytes)); }

// A String element as kernels templated on the element type see it (Equal, AddV2): a view
// of the object, which compares by bytes. A kernel that stores a new one makes it with
// make_string, the output element owning that reference.
struct StringElement {
  const ObjectValue* p = nullptr;
  std::string_view view() const { return string_of(p); }
  friend bool operator==(StringElement a, StringElement b) { return a.view() == b.view(); }
  friend bool operator!=(StringElement a, StringElement b) { return a.view() != b.view(); }
};
static_assert(sizeof(StringElement) == sizeof(ObjectValue*));
template <>
struct TypeOf<StringElement> {
  static constexpr DType value = DType::String;
};

// Strings longer than this are refused (TensorFlow's limit for one element of a proto is
// 2 GiB; a hostile shape times this would exceed any memory budget anyway).
inline constexpr int64_t kMaxStringBytes = int64_t{1} << 31;

}  // namespace kiln::detail
