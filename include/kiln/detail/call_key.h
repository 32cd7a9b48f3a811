// Internal to kiln::function (templates need it in a header): how a call's arguments become
// a cache key (KeyBuilder), the tensors it feeds (ArgTensors) and, on a miss, its signature
// (CallSignature); the non-template core a Function calls into. Not part of the API.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <forward_list>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "kiln/ops.h"
#include "kiln/tensor.h"

namespace kiln {

struct FunctionOptions;
class ConcreteFunction;
struct Resource;
namespace detail {
class ConcreteImpl;
class FunctionCore;
}  // namespace detail

namespace detail {

// ---- the call signature: what a trace key is made of ----------------------------------

// One argument as the cache sees it.
struct ArgEntry {
  enum Kind : uint8_t { kTensor, kValue, kTensorList } kind = kTensor;
  std::string name;              // argument name
  DType dtype = DType::Float32;  // kTensor
  TensorShape shape;             // kTensor (fully known for a call, partial for a spec)
  std::string value;             // kValue: printable value, also the key ("[1.0, -1.0]", "2", "'a'")
  std::string value_type;        // kValue: the C++ type, also part of the key
  int list_size = 0;             // kTensorList: how many tensor entries follow
};

// What a trace is made for: names, dtypes, shapes and printable values of the arguments.
// Built only when a call misses the cache (it allocates); the cache looks calls up by key.
struct CallSignature {
  std::vector<ArgEntry> entries;
  bool operator==(const CallSignature& o) const;
};

// ---- the call key: what the cache looks up on every call ----------------------------------

// A call's arguments encoded as 64-bit words: a tensor by dtype and shape, a number by type
// and bits, a string by its bytes, a list by its length and elements, with a running hash.
// It holds no tensors (a cached key keeps no argument alive) and is built on the stack: no
// allocation for keys of up to kInlineWords words.
class KeyBuilder {
 public:
  static constexpr size_t kInlineWords = 24;
  KeyBuilder() = default;
  KeyBuilder(const KeyBuilder&) = delete;
  KeyBuilder& operator=(const KeyBuilder&) = delete;
  void word(uint64_t w) {
    if (n_ < kInlineWords)
      inline_[n_] = w;
    else
      spill(w);
    ++n_;
    hash_ = (hash_ ^ w) * 0x100000001b3ULL + (hash_ >> 29);
  }
  const uint64_t* data() const { return n_ <= kInlineWords ? inline_ : heap_.data(); }
  size_t size() const { return n_; }
  size_t hash() const { return static_cast<size_t>(hash_); }

 private:
  uint64_t inline_[kInlineWords];
  size_t n_ = 0;
  uint64_t hash_ = 0xcbf29ce484222325ULL;
  std::vector<uint64_t> heap_;
  void spill(uint64_t w);
};

// The tensors of one call, beside its key, by address: the caller's own arguments are
// borrowed (they outlive the call; no reference count changes), tensors made for the call
// (conversions, the empty stand-in of a TensorSpec) are kept here. Inline for up to
// kInline of each.
class ArgTensors {
 public:
  static constexpr size_t kInline = 6;
  ArgTensors() = default;
  ArgTensors(const ArgTensors&) = delete;
  ArgTensors& operator=(const ArgTensors&) = delete;
  ~ArgTensors() {
    for (size_t i = 0; i < std::min(owned_, kInline); ++i) owned_inline()[i].~Tensor();
  }
  // A tensor that stays alive until the call returns.
  void borrow(const Tensor& t) { add(&t); }
  // A tensor made for this call: kept until the ArgTensors dies.
  void push_back(const Tensor& t) {
    const Tensor* p = owned_ < kInline ? new (&owned_inline()[owned_]) Tensor(t) : &overflow_.emplace_front(t);
    ++owned_;
    add(p);
  }
  const Tensor* const* data() const { return n_ <= kInline ? ptrs_ : heap_.data(); }
  size_t size() const { return n_; }

 private:
  void add(const Tensor* p) {
    if (n_ < kInline) {
      ptrs_[n_] = p;
    } else {
      if (n_ == kInline) heap_.assign(ptrs_, ptrs_ + kInline);
      heap_.push_back(p);
    }
    ++n_;
  }
  Tensor* owned_inline() { return reinterpret_cast<Tensor*>(storage_); }
  const Tensor* ptrs_[kInline];
  std::vector<const Tensor*> heap_;
  size_t n_ = 0, owned_ = 0;
  alignas(Tensor) unsigned char storage_[kInline * sizeof(Tensor)];
  std::forward_list<Tensor> overflow_;  // owned beyond kInline: stable addresses
};

enum KeyTag : uint64_t { kKeyTensor = 1, kKeySpec, kKeyNumber, kKeyNumbers, kKeyString, kKeyList };
// The type of a number argument: floating or not, signedness, bool, and size.
template <class T>
constexpr uint64_t number_type_code() {
  return (std::is_floating_point_v<T> ? 1u : 0u) | (std::is_signed_v<T> ? 2u : 0u) |
         (std::is_same_v<T, bool> ? 4u : 0u) | (sizeof(T) << 3);
}
template <class T>
uint64_t number_bits(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    const double d = static_cast<double>(v);
    uint64_t b;
    std::memcpy(&b, &d, sizeof b);
    return b;
  } else {
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  }
}
void key_tensor(KeyBuilder& k, const Tensor& t);  // dtype and dims, read without copying the shape
void key_spec(KeyBuilder& k, const TensorSpec& s);
void key_string(KeyBuilder& k, std::string_view s);
template <class T>
void key_value(KeyBuilder& k, const T& v) {
  using D = std::decay_t<T>;
  if constexpr (std::is_arithmetic_v<D>) {
    k.word(kKeyNumber | number_type_code<D>() << 8);
    k.word(number_bits(v));
  } else if constexpr (std::is_same_v<D, std::string> || std::is_same_v<D, const char*> || std::is_same_v<D, char*>) {
    key_string(k, v);
  } else {
    using V = typename D::value_type;
    k.word(kKeyNumbers | number_type_code<V>() << 8);
    k.word(v.size());
    for (const auto& e : v) k.word(number_bits(static_cast<V>(e)));
  }
}

// Text of a value argument, Python-like: 2, 2.5, True, 'text', [1.0, -1.0].
inline std::string value_text(bool v) { return v ? "True" : "False"; }
inline std::string value_text(const std::string& v) { return "'" + v + "'"; }
inline std::string value_text(const char* v) { return value_text(std::string(v)); }
template <class T>
requires std::is_arithmetic_v<T> std::string value_text(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    std::ostringstream os;
    os.precision(17);
    os << v;
    std::string s = os.str();
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
    return s;
  } else {
    return std::to_string(v);
  }
}
template <class T>
std::string value_text(const std::vector<T>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + value_text(static_cast<T>(v[i]));
  return s + "]";
}

template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {
  using value_type = T;
};
template <class T>
struct is_tuple_like : std::false_type {};
template <class... Ts>
struct is_tuple_like<std::tuple<Ts...>> : std::true_type {};
template <class A, class B>
struct is_tuple_like<std::pair<A, B>> : std::true_type {};

template <class T>
constexpr bool is_number_v = std::is_arithmetic_v<std::decay_t<T>>;
template <class T>
constexpr bool is_number_vector_v = [] {
  if constexpr (is_vector<std::decay_t<T>>::value)
    return std::is_arithmetic_v<typename is_vector<std::decay_t<T>>::value_type>;
  else
    return false;
}();

// The parameter types of a callable.
template <class F>
struct callable_traits : callable_traits<decltype(&std::decay_t<F>::operator())> {};
template <class R, class... A>
struct callable_traits<R (*)(A...)> {
  using result = R;
  using args = std::tuple<A...>;
};
template <class R, class... A>
struct callable_traits<R(A...)> : callable_traits<R (*)(A...)> {};
template <class C, class R, class... A>
struct callable_traits<R (C::*)(A...) const> : callable_traits<R (*)(A...)> {};
template <class C, class R, class... A>
struct callable_traits<R (C::*)(A...)> : callable_traits<R (*)(A...)> {};
template <class C, class R, class... A>
struct callable_traits<R (C::*)(A...) const noexcept> : callable_traits<R (*)(A...)> {};
template <class C, class R, class... A>
struct callable_traits<R (C::*)(A...) noexcept> : callable_traits<R (*)(A...)> {};

// A host number or vector of numbers as a tensor (a Const node when tracing).
template <class A>
Tensor host_value_tensor(const A& a) {
  using D = std::decay_t<A>;
  if constexpr (std::is_same_v<D, bool>)
    return constant(a);
  else if constexpr (std::is_floating_point_v<D>)
    return std::is_same_v<D, float> ? constant(static_cast<float>(a)) : constant(static_cast<double>(a));
  else if constexpr (std::is_integral_v<D>)
    return sizeof(D) <= 4 ? constant(static_cast<int32_t>(a)) : constant(static_cast<int64_t>(a));
  else {
    using V = typename is_vector<D>::value_type;
    if constexpr (std::is_same_v<V, bool>)
      return constant<bool>(std::vector<bool>(a.begin(), a.end()));
    else if constexpr (std::is_floating_point_v<V>) {
      if constexpr (std::is_same_v<V, float>)
        return constant<float>(std::vector<float>(a.begin(), a.end()));
      else
        return constant<double>(std::vector<double>(a.begin(), a.end()));
    } else if constexpr (sizeof(V) <= 4)
      return constant<int32_t>(std::vector<int32_t>(a.begin(), a.end()));
    else
      return constant<int64_t>(std::vector<int64_t>(a.begin(), a.end()));
  }
}

// Records one argument into the signature. P is the callable's parameter type, A the
// caller's argument type.
template <class P, class A>
void record_arg(CallSignature& sig, const std::string& name, const A& a) {
  using PD = std::decay_t<P>;
  using AD = std::decay_t<A>;
  ArgEntry e;
  e.name = name;
  if constexpr (std::is_same_v<PD, Tensor>) {
    if constexpr (std::is_same_v<AD, Tensor>) {
      e.kind = ArgEntry::kTensor;
      e.dtype = a.dtype();
      e.shape = a.shape();
    } else if constexpr (std::is_same_v<AD, TensorSpec>) {
      e.kind = ArgEntry::kTensor;
      e.dtype = a.dtype;
      e.shape = a.shape;
    } else {
      static_assert(is_number_v<AD> || is_number_vector_v<AD>,
                    "a Tensor parameter takes a Tensor, a TensorSpec, a number or a std::vector of numbers");
      e.kind = ArgEntry::kValue;
      e.value = value_text(a);
      e.value_type = typeid(AD).name();
    }
  } else if constexpr (is_vector<PD>::value && std::is_same_v<typename is_vector<PD>::value_type, Tensor>) {
    e.kind = ArgEntry::kTensorList;
    e.list_size = static_cast<int>(a.size());
    sig.entries.push_back(e);
    for (size_t i = 0; i < a.size(); ++i) record_arg<Tensor>(sig, name + "_" + std::to_string(i), a[i]);
    return;
  } else {
    e.kind = ArgEntry::kValue;
    e.value = value_text(static_cast<const PD&>(a));
    e.value_type = typeid(PD).name();
  }
  sig.entries.push_back(std::move(e));
}

// Encodes one argument into the call key, and collects the tensors to feed (a TensorSpec
// feeds nothing: it only asks for a concrete function). Mirrors record_arg.
template <class P, class A>
void encode_arg(KeyBuilder& k, ArgTensors& tensors, const A& a) {
  using PD = std::decay_t<P>;
  using AD = std::decay_t<A>;
  if constexpr (std::is_same_v<PD, Tensor>) {
    if constexpr (std::is_same_v<AD, Tensor>) {
      key_tensor(k, a);
      tensors.borrow(a);  // the caller's argument: alive until the call returns
    } else if constexpr (std::is_same_v<AD, TensorSpec>) {
      key_spec(k, a);
      tensors.push_back(Tensor());
    } else {
      key_value(k, a);
    }
  } else if constexpr (is_vector<PD>::value && std::is_same_v<typename is_vector<PD>::value_type, Tensor>) {
    k.word(kKeyList);
    k.word(a.size());
    for (const auto& t : a) encode_arg<Tensor>(k, tensors, t);
  } else {
    key_value(k, static_cast<const PD&>(a));
  }
}

// Builds the argument f sees for parameter P while tracing, from the caller's argument and
// the placeholders made for tensor arguments (consumed in order).
template <class P, class A>
decltype(auto) traced_arg(const A& a, const std::vector<Tensor>& ph, size_t& next) {
  using PD = std::decay_t<P>;
  using AD = std::decay_t<A>;
  if constexpr (std::is_same_v<PD, Tensor>) {
    if constexpr (std::is_same_v<AD, Tensor> || std::is_same_v<AD, TensorSpec>)
      return Tensor(ph[next++]);
    else
      return host_value_tensor(a);
  } else if constexpr (is_vector<PD>::value && std::is_same_v<typename is_vector<PD>::value_type, Tensor>) {
    std::vector<Tensor> v;
    for (size_t i = 0; i < a.size(); ++i) v.push_back(ph[next++]);
    return v;
  } else {
    return static_cast<const PD&>(a);
  }
}

// The argument f sees when it is called directly (eager mode, or inlined into an outer trace).
template <class P, class A>
decltype(auto) direct_arg(const A& a) {
  using PD = std::decay_t<P>;
  using AD = std::decay_t<A>;
  if constexpr (std::is_same_v<PD, Tensor> && !std::is_same_v<AD, Tensor>)
    return host_value_tensor(a);
  else
    return static_cast<const PD&>(a);
}

// Flattens f's result into tensors, and rebuilds it from the graph's outputs.
template <class R>
void flatten_result(const R& r, std::vector<Tensor>& out) {
  if constexpr (std::is_same_v<R, Tensor>)
    out.push_back(r);
  else if constexpr (is_vector<R>::value)
    for (const Tensor& t : r) out.push_back(t);
  else if constexpr (is_tuple_like<R>::value)
    std::apply([&](const auto&... e) { (flatten_result(e, out), ...); }, r);
  else
    static_assert(sizeof(R) == 0,
                  "a kiln::function may return Tensor, std::vector<Tensor>, a tuple or pair of those, or void");
}
// Moves the tensors out of v: the caller's results are their sole owners.
template <class R>
R unflatten_result(std::vector<Tensor>& v, size_t& i) {
  if constexpr (std::is_same_v<R, Tensor>)
    return std::move(v.at(i++));
  else if constexpr (is_vector<R>::value) {
    R r(std::make_move_iterator(v.begin() + static_cast<std::ptrdiff_t>(i)), std::make_move_iterator(v.end()));
    i = v.size();
    return r;
  } else {
    return std::apply([&](auto... e) { return R{unflatten_result<decltype(e)>(v, i)...}; }, R{});
  }
}

// Non-template core of a Function: the trace cache, tracing, retrace diagnostics.
using TraceBody = std::function<std::vector<Tensor>(const std::vector<Tensor>& placeholders)>;
using SignatureBuilder = std::function<CallSignature()>;
std::shared_ptr<FunctionCore> make_function_core(FunctionOptions options, std::string default_name);
// The hot path: if this call key is cached, runs its concrete function into *out and returns
// true (no lock, no reference count, no allocation but the results).
bool call_cached(FunctionCore& core, const KeyBuilder& key, const ArgTensors& tensors, std::vector<Tensor>* out);
// The concrete function cached for this call key, or null.
std::shared_ptr<ConcreteImpl> cached_concrete(FunctionCore& core, const KeyBuilder& key);
// On a miss: finds a trace that serves the call, or traces one (see FunctionCore in src/trace).
std::shared_ptr<ConcreteImpl> concrete_for(FunctionCore& core, const KeyBuilder& key, const SignatureBuilder& signature,
                                           const TraceBody& body);
std::vector<Tensor> call_concrete(const ConcreteImpl& cf, const ArgTensors& tensors);
// A copy of `cf` that reads and writes to[i] wherever it used from[i]: a function traced with
// some variables as arguments, called with others of the same dtypes and shapes (no retrace:
// the graph as optimized, rebound, with a plan of its own).
std::shared_ptr<ConcreteImpl> rebind_resources(const ConcreteImpl& cf, const std::vector<const Resource*>& from,
                                               const std::vector<std::shared_ptr<Resource>>& to);
int tracing_count(const FunctionCore& core);
std::vector<ConcreteFunction> concrete_functions(const FunctionCore& core);
std::string pretty_printed_signatures(const FunctionCore& core);
std::vector<std::string> trace_log(const FunctionCore& core);
void clear_cache(FunctionCore& core);
const FunctionOptions& options_of(const FunctionCore& core);
// True while some trace is being built on this thread (a nested Function call is inlined).
bool tracing_active();
// A number unique to the trace being built on this thread; 0 when none (front ends number
// the random ops of one trace, as TensorFlow numbers a graph's op seeds).
uint64_t trace_serial();
// A Function call runs its C++ directly instead of a graph: functions run eagerly, or a trace
// is being built on this thread (the call is inlined), or an eager tape records here.
bool call_directly_now();
// True while an eager GradientTape records on this thread: a Function call then runs its
// C++ directly, so the tape sees (and can differentiate) each op.
bool eager_tape_recording();
// The input_signature, applied to a call: converts and checks tensor arguments.
void apply_input_signature(const FunctionCore& core, CallSignature& sig);

}  // namespace detail

}  // namespace kiln
