#include "core/tensor_impl.h"

#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "core/object_value.h"
#include "core/tls.h"

namespace kiln::detail {
namespace {
// TensorImpl objects are recycled per thread: an eager op creates one per output, and a trace
// one per recorded output, all freed together when the trace ends (2,000 for a 1,000-op
// function: with 256 kept, the next trace took the rest from the aligned allocator's slow
// path, 4% of tracing). At most 2,048 kept: 384 KB a thread.
constexpr size_t kImplCacheMax = 2048;
KILN_TLS thread_local int t_impl_cache_state = 0;  // 0: not built, 1: alive, 2: destroyed
struct ImplCache {
  std::vector<void*> free;
  ImplCache() { t_impl_cache_state = 1; }
  ~ImplCache() {
    t_impl_cache_state = 2;
    for (void* p : free) ::operator delete(p, std::align_val_t(alignof(TensorImpl)));
  }
};
KILN_TLS thread_local ImplCache t_impls;
}  // namespace

void* TensorImpl::operator new(size_t n) {
  if (t_impl_cache_state != 2 && !t_impls.free.empty()) {
    void* p = t_impls.free.back();
    t_impls.free.pop_back();
    return p;
  }
  return ::operator new(n, std::align_val_t(alignof(TensorImpl)));
}

void TensorImpl::operator delete(void* p) noexcept {
  if (t_impl_cache_state != 2 && t_impls.free.size() < kImplCacheMax) {
    t_impls.free.push_back(p);
    return;
  }
  ::operator delete(p, std::align_val_t(alignof(TensorImpl)));
}

void fail_negative_dim(size_t i, int64_t d) {
  throw InvalidArgumentError("Dimension " + std::to_string(i) + " must be >= 0, got " + std::to_string(d));
}

TensorImpl* make_concrete(DType dtype, const int64_t* dims, size_t rank) {
  const int64_t n = checked_num_elements(dims, rank);
  return make_concrete_checked(dtype, dims, rank, n,
                               checked_mul(n, static_cast<int64_t>(dtype_size(dtype)), "a buffer size"));
}

TensorImpl* make_concrete_checked(DType dtype, const int64_t* dims, size_t rank, int64_t n, int64_t bytes) {
  auto* t = new TensorImpl;  // no value-initialization: inline_data is written by the kernel
  t->dtype = dtype;
  t->dims.assign(dims, dims + rank);
  t->num_elements = n;
  if (static_cast<size_t>(bytes) <= kInlineBytes) {
    t->data = t->inline_data;
  } else {
    try {
      t->buffer = buffer_allocate(static_cast<size_t>(bytes));
    } catch (...) {
      delete t;
      throw;
    }
    t->data = t->buffer->data;
  }
  // Object elements start null (an empty string, no object), so that an impl dropped
  // before its kernel filled it releases nothing.
  if (holds_objects(dtype)) std::memset(t->data, 0, static_cast<size_t>(bytes));
  return t;
}

TensorImpl* make_alias(const TensorImpl* src, const Dims& dims) {
  if (holds_objects(src->dtype)) {
    // Each impl owns its elements' references, so an alias is a copy of the pointers that
    // retains each (a shared buffer would be released by two owners).
    TensorImpl* t = make_concrete(src->dtype, dims);
    auto* const* from = src->as<ObjectValue*>();
    ObjectValue** to = t->as<ObjectValue*>();
    for (int64_t i = 0; i < t->num_elements; ++i) {
      object_retain(from[i]);
      to[i] = from[i];
    }
    return t;
  }
  if (!src->buffer && src->nbytes() > kInlineBytes) {
    // Data that is neither in a shared buffer nor inline (a view into another impl's inline
    // bytes, memory the source manages itself): copy it into a buffer of the alias's own. An
    // inline copy would overrun the alias's 64 inline bytes.
    TensorImpl* t = make_concrete(src->dtype, dims);
    std::memcpy(t->data, src->data, src->nbytes());
    return t;
  }
  auto* t = new TensorImpl;  // no value-initialization: inline_data is written by the kernel
  t->dtype = src->dtype;
  t->dims = dims;
  t->num_elements = src->num_elements;
  if (src->buffer) {
    buffer_retain(src->buffer);
    t->buffer = src->buffer;
    t->data = src->data;
  } else {
    t->data = t->inline_data;
    std::memcpy(t->inline_data, src->data, src->nbytes());
  }
  return t;
}

TensorImpl* make_view(const TensorImpl* src, const Dims& dims, int64_t first) {
  auto* t = new TensorImpl;
  t->dtype = src->dtype;
  t->dims = dims;
  t->num_elements = checked_num_elements(dims.data(), dims.size());
  buffer_retain(src->buffer);
  t->buffer = src->buffer;
  t->data = static_cast<unsigned char*>(src->data) + first * static_cast<int64_t>(dtype_size(src->dtype));
  return t;
}

TensorImpl* make_symbolic(DType dtype, const Dims& dims, bool unknown_rank, graph::Node* node, int index,
                          uint64_t graph_serial) {
  auto* t = new TensorImpl;  // no value-initialization: inline_data is written by the kernel
  t->dtype = dtype;
  t->symbolic = true;
  t->unknown_rank = unknown_rank;
  t->dims = dims;
  t->num_elements = -1;
  t->node = node;
  t->index = index;
  t->graph_serial = graph_serial;
  return t;
}

const TensorImpl& concrete(const Tensor& t) {
  const TensorImpl* p = t.impl();
  if (!p) throw InvalidArgumentError("Use of an empty (default-constructed) Tensor");
  return *p;
}

TensorShape shape_of_impl(const TensorImpl& t) {
  if (t.unknown_rank) return TensorShape::unknown();
  return TensorShape(t.dims);
}

void destroy_tensor_impl(TensorImplBase* base) noexcept {
  auto* t = static_cast<TensorImpl*>(base);
  if (holds_objects(t->dtype) && !t->symbolic)
    for (int64_t i = 0; i < t->num_elements; ++i) object_release(t->as<ObjectValue*>()[i]);
  if (t->buffer) buffer_release(t->buffer);
  delete t;
}

}  // namespace kiln::detail
