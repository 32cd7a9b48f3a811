// kiln: the Tensor handle. One type for both modes: a concrete value (eager) or a
// symbolic output of a node in a graph being traced.
#pragma once
#include <atomic>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/dtype.h"
#include "kiln/errors.h"
#include "kiln/half.h"
#include "kiln/shape.h"

namespace kiln {

namespace detail {
// The refcount lives in the public base so copying a Tensor is inline. The rest of the
// implementation (src/core/tensor_impl.h) is private.
struct TensorImplBase {
  std::atomic<int32_t> refs{1};
};
struct TensorImpl;
void destroy_tensor_impl(TensorImplBase*) noexcept;
}  // namespace detail

class Tensor {
 public:
  Tensor() = default;  // an empty handle; most operations on it throw
  Tensor(const Tensor& o) noexcept : impl_(o.impl_) { retain(); }
  Tensor(Tensor&& o) noexcept : impl_(o.impl_) { o.impl_ = nullptr; }
  Tensor& operator=(const Tensor& o) noexcept {
    if (o.impl_ != impl_) {
      Tensor tmp(o);
      swap(tmp);
    }
    return *this;
  }
  Tensor& operator=(Tensor&& o) noexcept {
    Tensor tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  ~Tensor() { release(); }
  void swap(Tensor& o) noexcept { std::swap(impl_, o.impl_); }

  DType dtype() const;
  TensorShape shape() const;  // fully known for concrete tensors
  int rank() const;
  int64_t num_elements() const;  // -1 when unknown (symbolic)
  bool is_symbolic() const;
  bool defined() const { return impl_ != nullptr; }
  std::string name() const;  // "x:0" for symbolic tensors, "" for concrete ones

  template <class T>
  std::vector<T> to_vector() const;  // concrete only, row-major; std::string for a string tensor
  template <class T>
  T item() const;  // concrete, exactly one element
  explicit operator bool() const;
  // The elements of a concrete tensor of a numeric dtype, row-major; valid while a handle to
  // it lives. kiln does not change a tensor's elements once it is made, so this memory is
  // read-only. (A string tensor's elements are objects: read them with to_vector<std::string>.)
  const void* data() const;
  // kiln.Tensor([[12.]], shape=(1, 1), dtype=float32) / Tensor("x:0", shape=(), dtype=float64)
  std::string str() const;

  // Internal: adopt a reference to an implementation object.
  explicit Tensor(detail::TensorImpl* impl) noexcept;
  detail::TensorImpl* impl() const noexcept;

 private:
  void retain() const noexcept {
    if (impl_) impl_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  // A sole owner skips the atomic decrement (the costliest step of a small eager op): with
  // one reference, held here, no other thread can be adding or dropping one.
  void release() noexcept {
    if (impl_ &&
        (impl_->refs.load(std::memory_order_acquire) == 1 || impl_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1))
      detail::destroy_tensor_impl(impl_);
  }
  detail::TensorImplBase* impl_ = nullptr;
};

template <>
std::vector<std::string> Tensor::to_vector<std::string>() const;
template <>
std::string Tensor::item<std::string>() const;

std::ostream& operator<<(std::ostream&, const Tensor&);

Tensor constant(double v);
Tensor constant(float v);
Tensor constant(int32_t v);
Tensor constant(int64_t v);
Tensor constant(bool v);
Tensor constant(double v, DType dtype);  // as tf.constant(4, dtype=...)
Tensor constant(std::string_view v);     // a scalar string tensor (bytes, not necessarily UTF-8)
inline Tensor constant(const char* v) { return constant(std::string_view(v)); }
// T is a numeric element type (float, double, int32_t, int64_t, bool, uint8_t, ...) or
// std::string (a string tensor); the shape's product must equal the count.
template <class T>
Tensor constant(std::vector<T> values, std::vector<int64_t> shape);
template <>
Tensor constant<std::string>(std::vector<std::string> values, std::vector<int64_t> shape);
// A 1-D tensor.
template <class T>
Tensor constant(std::vector<T> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return constant<T>(std::move(values), std::vector<int64_t>{n});
}

// A concrete tensor over memory kiln does not own (a numpy array, a DLPack tensor), with no
// copy. `data` is row-major and aligned to the element size (InvalidArgumentError if not);
// kiln never writes to it. The memory is kiln's to give back from the call on, whether it
// returns or throws: `release(context)` runs exactly once, when no tensor uses the memory
// any more (at once for a small tensor, which is copied), on whichever thread drops the
// last handle.
Tensor adopt_external(DType dtype, std::vector<int64_t> shape, const void* data, void (*release)(void*) noexcept,
                      void* context);

Tensor zeros(std::vector<int64_t> shape, DType = DType::Float32);
Tensor ones(std::vector<int64_t> shape, DType = DType::Float32);
Tensor fill(std::vector<int64_t> shape, double value, DType = DType::Float32);
Tensor eye(int64_t n, DType = DType::Float32);
Tensor range(double start, double limit, double delta, DType dtype);
// Range over scalar tensors of one dtype: symbolic ones inside a trace (the length is known
// when the function runs).
Tensor range(const Tensor& start, const Tensor& limit, const Tensor& delta);
// Random numbers. With a seed, every call gives the same numbers (the stateless ops
// StatelessRandomUniform/-Normal with seed pair (seed, 0), TensorFlow's bits); without one,
// every call draws new ones.
Tensor random_uniform(std::vector<int64_t> shape, double minval, double maxval, DType = DType::Float32,
                      std::optional<uint64_t> seed = {});
Tensor random_normal(std::vector<int64_t> shape, double mean = 0, double stddev = 1, DType = DType::Float32,
                     std::optional<uint64_t> seed = {});
// Restarts the streams of the stateful random ops run with nonzero (seed, seed2) attrs
// (RandomUniform and its kin advance theirs on every call, as TensorFlow's kernels do);
// tf.random.set_seed does this.
void reset_random_streams();

}  // namespace kiln
