// The private side of a Tensor handle: a concrete value (dtype, dims, data) or a symbolic
// output of a graph node (dtype, partial dims, node, output index).
#pragma once
#include <cstring>

#include "core/buffer.h"
#include "kiln/detail/small_vec.h"
#include "kiln/tensor.h"

namespace kiln::graph {
class Node;
}

namespace kiln::detail {

// Tensors of at most this many bytes keep their data inside the impl: one allocation
// for a scalar op instead of two.
inline constexpr size_t kInlineBytes = 64;

struct alignas(64) TensorImpl : TensorImplBase {
  DType dtype = DType::Float32;
  bool symbolic = false;
  bool unknown_rank = false;    // symbolic only
  Dims dims;                    // concrete: the shape; symbolic: -1 for an unknown dim
  int64_t num_elements = 0;     // concrete only
  void* data = nullptr;         // concrete: inline_data or buffer->data (+ offset)
  Buffer* buffer = nullptr;     // null when the data is inline
  graph::Node* node = nullptr;  // symbolic only
  int index = 0;
  uint64_t graph_serial = 0;  // symbolic only: node's graph (graph::graph_alive says if it still exists)
  alignas(64) unsigned char inline_data[kInlineBytes];

  size_t nbytes() const { return static_cast<size_t>(num_elements) * dtype_size(dtype); }
  template <class T>
  T* as() {
    return static_cast<T*>(data);
  }
  template <class T>
  const T* as() const {
    return static_cast<const T*>(data);
  }

  static void* operator new(size_t n);
  static void operator delete(void* p) noexcept;
};

// True when nothing but `t`'s one handle holds it or its memory, and that memory is kiln's:
// then an op may write its result over it (buffer forwarding, in-place variable updates).
inline bool exclusively_owned(const TensorImpl& t) {
  if (t.refs.load(std::memory_order_acquire) != 1) return false;
  if (!t.buffer) return true;
  return t.buffer->refs.load(std::memory_order_acquire) == 1 && !t.buffer->external_release;
}

// Element count of `dims`, with overflow and negative-dim checks (InvalidArgumentError).
[[noreturn]] void fail_negative_dim(size_t i, int64_t d);
inline int64_t checked_num_elements(const int64_t* dims, size_t rank) {
  int64_t n = 1;
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] < 0) fail_negative_dim(i, dims[i]);
    n = checked_mul(n, dims[i], "the number of elements of a shape");
  }
  return n;
}

// A new concrete tensor with uninitialized data.
TensorImpl* make_concrete(DType dtype, const int64_t* dims, size_t rank);
inline TensorImpl* make_concrete(DType dtype, const Dims& dims) {
  return make_concrete(dtype, dims.data(), dims.size());
}
// The same, for a shape whose element count `n` and byte size were checked already (plans
// check static shapes once, at compile time).
TensorImpl* make_concrete_checked(DType dtype, const int64_t* dims, size_t rank, int64_t n, int64_t bytes);
// A concrete tensor sharing `src`'s data with new dims (same element count).
TensorImpl* make_alias(const TensorImpl* src, const Dims& dims);
// A concrete tensor of `dims` over src's elements from `first` on, sharing src's buffer (no
// copy): src holds plain values (not objects) in a buffer, and the view fits inside it. Its
// data is aligned to the element size only, as adopted external memory is.
TensorImpl* make_view(const TensorImpl* src, const Dims& dims, int64_t first);
// A new symbolic tensor.
TensorImpl* make_symbolic(DType dtype, const Dims& dims, bool unknown_rank, graph::Node* node, int index,
                          uint64_t graph_serial);

inline Tensor wrap(TensorImpl* impl) { return Tensor(impl); }
inline TensorImpl* impl_of(const Tensor& t) { return t.impl(); }
// The impl of a concrete tensor; throws InvalidArgumentError for empty handles.
const TensorImpl& concrete(const Tensor& t);

TensorShape shape_of_impl(const TensorImpl& t);

}  // namespace kiln::detail
