// Tensor handle methods that need only the core layer.
#include <cstring>
#include <string>

#include "core/dtype_table.h"
#include "core/format.h"
#include "core/object_value.h"
#include "core/tensor_impl.h"

namespace kiln {

using detail::TensorImpl;

Tensor::Tensor(TensorImpl* impl) noexcept : impl_(impl) {}
TensorImpl* Tensor::impl() const noexcept { return static_cast<TensorImpl*>(impl_); }

DType Tensor::dtype() const { return detail::concrete(*this).dtype; }
TensorShape Tensor::shape() const { return detail::shape_of_impl(detail::concrete(*this)); }
int Tensor::rank() const {
  const TensorImpl& t = detail::concrete(*this);
  return t.unknown_rank ? -1 : static_cast<int>(t.dims.size());
}
int64_t Tensor::num_elements() const {
  const TensorImpl& t = detail::concrete(*this);
  return t.symbolic ? shape().num_elements() : t.num_elements;
}
bool Tensor::is_symbolic() const { return detail::concrete(*this).symbolic; }

namespace {

const TensorImpl& checked_concrete(const Tensor& t, DType want, const char* what) {
  const TensorImpl& impl = detail::concrete(t);
  if (impl.symbolic)
    throw InvalidArgumentError(std::string(what) + "() needs a concrete tensor; " + t.str() +
                               " is symbolic (inside a traced function values exist only at run time)");
  if (impl.dtype != want)
    throw InvalidArgumentError(std::string(what) + "<" + std::string(dtype_name(want)) + ">() called on a " +
                               std::string(dtype_name(impl.dtype)) + " tensor");
  return impl;
}
}  // namespace

template <class T>
std::vector<T> Tensor::to_vector() const {
  const TensorImpl& impl = checked_concrete(*this, detail::TypeOf<T>::value, "to_vector");
  const T* p = impl.as<T>();
  return std::vector<T>(p, p + impl.num_elements);
}

template <class T>
T Tensor::item() const {
  const TensorImpl& impl = checked_concrete(*this, detail::TypeOf<T>::value, "item");
  if (impl.num_elements != 1)
    throw InvalidArgumentError("item() needs a tensor with exactly one element, got shape " + shape().str());
  return impl.as<T>()[0];
}

#define KILN_INSTANTIATE(T)                             \
  template std::vector<T> Tensor::to_vector<T>() const; \
  template T Tensor::item<T>() const;
#define KILN_INSTANTIATE_DTYPE(name, type) KILN_INSTANTIATE(type)
KILN_DTYPE_TYPES(KILN_INSTANTIATE_DTYPE)
#undef KILN_INSTANTIATE_DTYPE
#undef KILN_INSTANTIATE

template <>
std::vector<std::string> Tensor::to_vector<std::string>() const {
  const TensorImpl& impl = checked_concrete(*this, DType::String, "to_vector");
  std::vector<std::string> v;
  v.reserve(static_cast<size_t>(impl.num_elements));
  for (int64_t i = 0; i < impl.num_elements; ++i) v.emplace_back(detail::string_of(impl.as<detail::ObjectValue*>()[i]));
  return v;
}

template <>
std::string Tensor::item<std::string>() const {
  const TensorImpl& impl = checked_concrete(*this, DType::String, "item");
  if (impl.num_elements != 1)
    throw InvalidArgumentError("item() needs a tensor with exactly one element, got shape " + shape().str());
  return std::string(detail::string_of(impl.as<detail::ObjectValue*>()[0]));
}

Tensor::operator bool() const {
  const TensorImpl& impl = detail::concrete(*this);
  if (impl.symbolic)
    throw OperatorNotAllowedInGraphError(
        "Using a symbolic kiln::Tensor (" + name() +
        ") as a C++ bool is not allowed: its value is only known when the traced function runs. "
        "Write data-dependent branches with kiln::cond(pred, then_fn, else_fn) and loops with "
        "kiln::while_loop.");
  if (impl.num_elements != 1)
    throw InvalidArgumentError("The truth value of a tensor with " + std::to_string(impl.num_elements) +
                               " elements is ambiguous; reduce it first (e.g. reduce_any)");
  return detail::visit_any_dtype(impl.dtype, [&](auto zero) { return impl.as<decltype(zero)>()[0] != zero; });
}

const void* Tensor::data() const {
  const TensorImpl& impl = detail::concrete(*this);
  if (impl.symbolic)
    throw InvalidArgumentError("data() needs a concrete tensor; " + str() +
                               " is symbolic (inside a traced function values exist only at run time)");
  return impl.data;
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.str(); }

}  // namespace kiln
