// Tensor factories: constant, zeros, ones, fill, eye, range, random_*.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "api/api_util.h"
#include "core/object_value.h"
#include "kiln/ops.h"
#include "ops/helpers.h"
#include "ops/random_common.h"

namespace kiln {
namespace api {

template <class T>
Tensor make_host(const std::vector<T>& values, const std::vector<int64_t>& dims) {
  const int64_t n = detail::checked_num_elements(dims.data(), dims.size());
  if (n != static_cast<int64_t>(values.size()))
    throw InvalidArgumentError("Expected " + std::to_string(n) + " values for shape " + TensorShape(dims).str() +
                               ", got " + std::to_string(values.size()));
  detail::TensorImpl* t = detail::make_concrete(ops::TypeOf<T>::value, dims.data(), dims.size());
  T* p = t->as<T>();
  for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  return Tensor(t);
}
template <class T>
Tensor make_host_scalar(T v) {
  detail::TensorImpl* t = detail::make_concrete(ops::TypeOf<T>::value, nullptr, 0);
  *t->as<T>() = v;
  return Tensor(t);
}
#define KILN_INSTANTIATE_MAKE_HOST(name, type)                                            \
  template Tensor make_host<type>(const std::vector<type>&, const std::vector<int64_t>&); \
  template Tensor make_host_scalar<type>(type);
KILN_DTYPE_TYPES(KILN_INSTANTIATE_MAKE_HOST)
#undef KILN_INSTANTIATE_MAKE_HOST

Tensor int_list(const std::vector<int64_t>& values, const char* name_hint) {
  std::vector<int32_t> v;
  v.reserve(values.size());
  for (int64_t x : values) {
    if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max())
      return trace::as_graph_constant(make_host<int64_t>(values, {static_cast<int64_t>(values.size())}), name_hint);
    v.push_back(static_cast<int32_t>(x));
  }
  return trace::as_graph_constant(make_host<int32_t>(v, {static_cast<int64_t>(v.size())}), name_hint);
}

Tensor int_scalar(int64_t v, const char* name_hint) {
  if (v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max())
    return trace::as_graph_constant(make_host_scalar<int32_t>(static_cast<int32_t>(v)), name_hint);
  return trace::as_graph_constant(make_host_scalar<int64_t>(v), name_hint);
}

Tensor host_scalar(double v, DType d, const char* op) {
  auto context = [op] { return op ? std::string(" [Op:") + op + "]" : std::string(); };
  return ops::visit_dtype(d, [&](auto x) -> Tensor {
    using T = decltype(x);
    if constexpr (std::is_same_v<T, bool>) {
      if (v != 0 && v != 1)
        throw InvalidArgumentError(std::string("Cannot convert ") + std::to_string(v) + " to a bool tensor" +
                                   context());
    } else if constexpr (std::is_integral_v<T>) {
      if (std::isnan(v) || v != std::floor(v))
        throw InvalidArgumentError("Cannot convert " + std::to_string(v) + " to EagerTensor of dtype " +
                                   std::string(dtype_name(d)) + context());
      if (v < static_cast<double>(std::numeric_limits<T>::min()) ||
          v > static_cast<double>(std::numeric_limits<T>::max()))
        throw InvalidArgumentError("Can't convert " + std::to_string(v) + " to " + std::string(dtype_name(d)) +
                                   ": out of range" + context());
    }
    return make_host_scalar<T>(static_cast<T>(v));
  });
}
}  // namespace api

using api::make_host;
using api::make_host_scalar;

Tensor constant(double v) { return trace::as_graph_constant(make_host_scalar<double>(v)); }
Tensor constant(float v) { return trace::as_graph_constant(make_host_scalar<float>(v)); }
Tensor constant(int32_t v) { return trace::as_graph_constant(make_host_scalar<int32_t>(v)); }
Tensor constant(int64_t v) { return trace::as_graph_constant(make_host_scalar<int64_t>(v)); }
Tensor constant(bool v) { return trace::as_graph_constant(make_host_scalar<bool>(v)); }
Tensor constant(double v, DType dtype) { return trace::as_graph_constant(api::host_scalar(v, dtype, nullptr)); }

Tensor adopt_external(DType dtype, std::vector<int64_t> shape, const void* data, void (*release)(void*) noexcept,
                      void* context) {
  Buffer* buffer = nullptr;
  detail::TensorImpl* t = nullptr;
  try {
    if (!detail::has_values(dtype)) detail::fail_has_no_values(dtype);
    const int64_t n = detail::checked_num_elements(shape.data(), shape.size());
    const int64_t bytes = checked_mul(n, static_cast<int64_t>(dtype_size(dtype)), "a buffer size");
    if (n > 0 && (data == nullptr || reinterpret_cast<uintptr_t>(data) % dtype_size(dtype) != 0))
      throw InvalidArgumentError("adopt_external: the data of a " + std::string(dtype_name(dtype)) +
                                 " tensor must be aligned to " + std::to_string(dtype_size(dtype)) + " bytes");
    if (static_cast<size_t>(bytes) <= detail::kInlineBytes) {
      // Small values live inside the handle: copying them is cheaper than tracking the owner.
      t = detail::make_concrete_checked(dtype, shape.data(), shape.size(), n, bytes);
      if (bytes > 0) std::memcpy(t->data, data, static_cast<size_t>(bytes));
    } else {
      buffer = buffer_adopt(const_cast<void*>(data), static_cast<size_t>(bytes), release, context);
      t = new detail::TensorImpl;
      t->dtype = dtype;
      t->dims.assign(shape.data(), shape.data() + shape.size());
      t->num_elements = n;
      t->buffer = std::exchange(buffer, nullptr);
      t->data = t->buffer->data;
    }
  } catch (...) {
    if (buffer) {
      buffer_release(buffer);  // gives the memory back through `release`
    } else {
      release(context);
    }
    throw;
  }
  Tensor result(t);
  if (!t->buffer) release(context);  // copied inline: the owner's memory is no longer needed
  return trace::as_graph_constant(std::move(result));
}

template <class T>
Tensor constant(std::vector<T> values, std::vector<int64_t> shape) {
  return trace::as_graph_constant(make_host<T>(values, shape));
}
#define KILN_INSTANTIATE_CONSTANT(name, type) template Tensor constant<type>(std::vector<type>, std::vector<int64_t>);
KILN_DTYPE_TYPES(KILN_INSTANTIATE_CONSTANT)
#undef KILN_INSTANTIATE_CONSTANT

template <>
Tensor constant<std::string>(std::vector<std::string> values, std::vector<int64_t> shape) {
  const int64_t n = detail::checked_num_elements(shape.data(), shape.size());
  if (n != static_cast<int64_t>(values.size()))
    throw InvalidArgumentError("constant: " + std::to_string(values.size()) + " strings for a shape of " +
                               std::to_string(n) + " elements");
  detail::TensorImpl* t = detail::make_concrete(DType::String, shape.data(), shape.size());
  Tensor result(t);
  auto** out = t->as<detail::ObjectValue*>();
  for (int64_t i = 0; i < n; ++i) {
    if (static_cast<int64_t>(values[i].size()) > detail::kMaxStringBytes)
      throw InvalidArgumentError("constant: a string of " + std::to_string(values[i].size()) + " bytes");
    out[i] = detail::make_string(std::move(values[i]));
  }
  return trace::as_graph_constant(std::move(result));
}
Tensor constant(std::string_view v) { return constant<std::string>({std::string(v)}, {}); }

Tensor fill(std::vector<int64_t> shape, double value, DType dtype) {
  Tensor v = api::host_scalar(value, dtype, "Fill");
  Tensor dims = api::int_list(shape, "Fill/dims");
  Tensor vv = trace::as_graph_constant(v, "Fill/value");
  return trace::dispatch1(api::op::Fill(), {&dims, &vv}, trace::no_attrs(), "Fill");
}
Tensor zeros(std::vector<int64_t> shape, DType dtype) { return fill(std::move(shape), 0, dtype); }
Tensor ones(std::vector<int64_t> shape, DType dtype) { return fill(std::move(shape), 1, dtype); }

Tensor eye(int64_t n, DType dtype) {
  if (n < 0) throw InvalidArgumentError("eye: num_rows must be non-negative, got " + std::to_string(n));
  const int64_t total = checked_mul(n, n, "eye");
  if (total > (int64_t{1} << 32)) throw InvalidArgumentError("eye: " + std::to_string(n) + " rows is too large");
  detail::TensorImpl* t = detail::make_concrete(dtype, std::vector<int64_t>{n, n}.data(), 2);
  std::memset(t->data, 0, t->nbytes());
  ops::visit_dtype(dtype, [&](auto x) {
    using T = decltype(x);
    for (int64_t i = 0; i < n; ++i) t->as<T>()[i * n + i] = T(1);
  });
  return trace::as_graph_constant(Tensor(t), "eye");
}

Tensor range(double start, double limit, double delta, DType dtype) {
  if (dtype == DType::Bool) throw InvalidArgumentError("range does not support bool [Op:Range]");
  Tensor s = trace::as_graph_constant(api::host_scalar(start, dtype, "Range"), "Range/start");
  Tensor l = trace::as_graph_constant(api::host_scalar(limit, dtype, "Range"), "Range/limit");
  Tensor d = trace::as_graph_constant(api::host_scalar(delta, dtype, "Range"), "Range/delta");
  return trace::dispatch1(api::op::Range(), {&s, &l, &d}, trace::no_attrs(), "Range");
}

Tensor range(const Tensor& start, const Tensor& limit, const Tensor& delta) {
  return trace::dispatch1(api::op::Range(), {&start, &limit, &delta}, trace::no_attrs(), "Range");
}

namespace {
// A seeded call runs the stateless op (same numbers every call); an unseeded one the
// stateful op with seeds (0, 0), which draws a fresh stream.
Tensor seed_pair(uint64_t seed, const char* what) { return api::int_list({static_cast<int64_t>(seed), 0}, what); }
Tensor random_op(const ops::OpDef& stateful, const ops::OpDef& stateless, const Tensor& shape, DType dtype,
                 std::optional<uint64_t> seed, const char* what) {
  if (!seed) return trace::dispatch1(stateful, {&shape}, api::Attrs{dtype, int64_t{0}, int64_t{0}}, what);
  const Tensor s = seed_pair(*seed, what);
  return trace::dispatch1(stateless, {&shape, &s}, api::Attrs{dtype}, what);
}
}  // namespace

void reset_random_streams() { ops::reset_random_streams(); }

Tensor random_uniform(std::vector<int64_t> shape, double minval, double maxval, DType dtype,
                      std::optional<uint64_t> seed) {
  if (is_integer(dtype))
    return random_uniform_int(std::move(shape), static_cast<int64_t>(minval), static_cast<int64_t>(maxval), dtype,
                              seed);
  if (!is_floating(dtype))
    throw InvalidArgumentError("random_uniform: unsupported dtype " + std::string(dtype_name(dtype)));
  if (!(minval < maxval)) throw InvalidArgumentError("random_uniform: need minval < maxval");
  Tensor s = api::int_list(shape, "random_uniform/shape");
  Tensor u = random_op(api::op::RandomUniform(), api::op::StatelessRandomUniform(), s, dtype, seed, "random_uniform");
  if (minval == 0 && maxval == 1) return u;
  return u * (maxval - minval) + minval;
}

Tensor random_uniform_int(std::vector<int64_t> shape, int64_t minval, int64_t maxval, DType dtype,
                          std::optional<uint64_t> seed) {
  if (!is_integer(dtype)) throw InvalidArgumentError("random_uniform_int: dtype must be int32 or int64");
  Tensor s = api::int_list(shape, "random_uniform/shape");
  Tensor lo = trace::as_graph_constant(api::host_scalar(static_cast<double>(minval), dtype, "RandomUniformInt"),
                                       "random_uniform/min");
  Tensor hi = trace::as_graph_constant(api::host_scalar(static_cast<double>(maxval), dtype, "RandomUniformInt"),
                                       "random_uniform/max");
  if (!seed)
    return trace::dispatch1(api::op::RandomUniformInt(), {&s, &lo, &hi}, api::Attrs{int64_t{0}, int64_t{0}},
                            "random_uniform");
  const Tensor pair = seed_pair(*seed, "random_uniform/seed");
  return trace::dispatch1(api::op::StatelessRandomUniformInt(), {&s, &pair, &lo, &hi}, trace::no_attrs(),
                          "random_uniform");
}

Tensor random_normal(std::vector<int64_t> shape, double mean, double stddev, DType dtype,
                     std::optional<uint64_t> seed) {
  if (!is_floating(dtype)) throw InvalidArgumentError("random_normal: dtype must be float32 or float64");
  Tensor s = api::int_list(shape, "random_normal/shape");
  Tensor z =
      random_op(api::op::RandomStandardNormal(), api::op::StatelessRandomNormal(), s, dtype, seed, "random_normal");
  if (mean == 0 && stddev == 1) return z;
  return z * stddev + mean;
}

}  // namespace kiln
