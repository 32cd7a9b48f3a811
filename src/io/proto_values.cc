#include "io/proto_values.h"

#include <cstring>
#include <vector>

#include "core/dtype_table.h"
#include "core/object_value.h"
#include "core/tensor_impl.h"
#include "io/limits.h"
#include "io/varint.h"

namespace kiln::io {

bool kiln_dtype_of(int type, DType* out) { return detail::dtype_from_proto(type, out) && *out != DType::Variant; }

DType dtype_from_proto(int type, const std::string& where) {
  DType d{};
  if (!detail::dtype_from_proto(type, &d))
    throw InvalidArgumentError(where + ": unsupported dtype " + std::to_string(type));
  return d;
}

TensorShape shape_from_proto(const tensorflow::TensorShapeProto& p, const std::string& where) {
  if (p.unknown_rank()) {
    if (p.dim_size() != 0) throw InvalidArgumentError(where + ": a shape of unknown rank has dims");
    return TensorShape::unknown();
  }
  if (static_cast<size_t>(p.dim_size()) > kMaxRank)
    throw InvalidArgumentError(where + ": rank " + std::to_string(p.dim_size()) + " exceeds " +
                               std::to_string(kMaxRank));
  Dims dims;
  for (const auto& d : p.dim()) {
    if (d.size() < -1 || d.size() > static_cast<int64_t>(kMaxElements))
      throw InvalidArgumentError(where + ": bad dimension " + std::to_string(d.size()));
    dims.push_back(d.size());
  }
  return TensorShape(std::move(dims));
}

namespace {

template <class T, class Field>
void fill_from(detail::TensorImpl& t, const Field& vals, const std::string& where) {
  T* out = t.as<T>();
  const int64_t n = t.num_elements;
  if (vals.size() == n) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(vals.Get(static_cast<int>(i)));
  } else if (vals.size() >= 1 && vals.size() < n) {  // TensorFlow repeats the last value
    for (int64_t i = 0; i < n; ++i)
      out[i] = static_cast<T>(vals.Get(static_cast<int>(std::min<int64_t>(i, vals.size() - 1))));
  } else if (vals.size() == 0 && n == 0) {
  } else {
    throw InvalidArgumentError(where + ": tensor has " + std::to_string(vals.size()) + " values for " +
                               std::to_string(n) + " elements");
  }
}

// The 16-bit floats: half_val holds each value's bits in an int32.
template <class H>
void fill_bits(detail::TensorImpl& t, const google::protobuf::RepeatedField<int32_t>& vals, const std::string& where) {
  const int64_t n = t.num_elements;
  if (vals.size() == 0 && n == 0) return;
  if (vals.size() == 0 || vals.size() > n)
    throw InvalidArgumentError(where + ": tensor has " + std::to_string(vals.size()) + " values for " +
                               std::to_string(n) + " elements");
  H* out = t.as<H>();
  for (int64_t i = 0; i < n; ++i)  // TensorFlow repeats the last value
    out[i] = H::from_bits(static_cast<uint16_t>(vals.Get(static_cast<int>(std::min<int64_t>(i, vals.size() - 1)))));
}

// TensorFlow's encoded string list in tensor_content (how Tensor::AsProtoTensorContent writes
// strings, as a saved dataset's snapshot files hold them): every string's length as a varint32,
// then their bytes back to back. The lengths must account for every byte.
Tensor strings_from_content(const std::string& content, const TensorShape& shape, uint64_t elements,
                            const std::string& where) {
  const auto* p = reinterpret_cast<const unsigned char*>(content.data());
  const auto* end = p + content.size();
  if (elements > content.size())  // each string needs at least its one-byte length
    throw InvalidArgumentError(where + ": tensor_content is too short for " + std::to_string(elements) + " strings");
  std::vector<uint64_t> lengths(elements);
  uint64_t total = 0;
  for (uint64_t& n : lengths) {
    if (!get_varint64(p, end, &n) || n > 0xffffffffu)
      throw InvalidArgumentError(where + ": a string length in tensor_content is malformed");
    total += n;
  }
  if (total != static_cast<uint64_t>(end - p))
    throw InvalidArgumentError(where + ": tensor_content's string lengths add up to " + std::to_string(total) +
                               " bytes; it holds " + std::to_string(end - p));
  detail::TensorImpl* impl = detail::make_concrete(DType::String, shape.dims());
  Tensor t(impl);
  auto** out = impl->as<detail::ObjectValue*>();
  for (uint64_t i = 0; i < elements; ++i) {
    out[i] = detail::make_string(std::string_view(reinterpret_cast<const char*>(p), lengths[i]));
    p += lengths[i];
  }
  return t;
}

// string_val holds one entry per element (TensorFlow repeats the last for a shorter list, as
// for numbers), or tensor_content the encoded list.
Tensor strings_from_proto(const tensorflow::TensorProto& p, const TensorShape& shape, uint64_t elements,
                          const std::string& where) {
  const auto& vals = p.string_val();
  const uint64_t count = static_cast<uint64_t>(vals.size());
  if (!p.tensor_content().empty()) {
    if (count > 0) throw InvalidArgumentError(where + ": a string tensor has both string_val and tensor_content");
    return strings_from_content(p.tensor_content(), shape, elements, where);
  }
  if (count > elements || (count == 0 && elements > 0))
    throw InvalidArgumentError(where + ": tensor has " + std::to_string(count) + " values for " +
                               std::to_string(elements) + " elements");
  if (elements > static_cast<uint64_t>(kMaxFilledConstElements))
    throw InvalidArgumentError(where + ": a string tensor of " + std::to_string(elements) + " elements");
  detail::TensorImpl* impl = detail::make_concrete(DType::String, shape.dims());
  Tensor t(impl);
  auto** out = impl->as<detail::ObjectValue*>();
  for (uint64_t i = 0; i < elements; ++i)
    out[i] = detail::make_string(vals.Get(static_cast<int>(std::min(i, count - 1))));
  return t;
}

// scomplex_val / dcomplex_val: (real, imaginary) pairs, the last repeated for a short list.
template <class C, class Field>
void fill_complex(detail::TensorImpl& t, const Field& vals, const std::string& where) {
  const int64_t n = t.num_elements, pairs = vals.size() / 2;
  if (vals.size() % 2 != 0) throw InvalidArgumentError(where + ": complex values come in (real, imaginary) pairs");
  if (pairs == 0 && n == 0) return;
  if (pairs == 0 || pairs > n)
    throw InvalidArgumentError(where + ": tensor has " + std::to_string(pairs) + " values for " + std::to_string(n) +
                               " elements");
  C* out = t.as<C>();
  for (int64_t i = 0; i < n; ++i) {
    const int k = static_cast<int>(std::min(i, pairs - 1));
    out[i] = C(vals.Get(2 * k), vals.Get(2 * k + 1));
  }
}

}  // namespace

Tensor tensor_from_proto(const tensorflow::TensorProto& p, const std::string& where) {
  const DType dtype = dtype_from_proto(p.dtype(), where);
  if (dtype == DType::Variant)
    throw UnimplementedError(where + ": a variant tensor value (kiln makes variants only by running ops)");
  const TensorShape shape = shape_from_proto(p.tensor_shape(), where);
  if (!shape.is_fully_defined()) throw InvalidArgumentError(where + ": a tensor value needs a fully defined shape");
  uint64_t elements = 1;
  for (int64_t d : shape.dims()) {
    if (d != 0 && elements > kMaxElements / static_cast<uint64_t>(d))
      throw InvalidArgumentError(where + ": tensor is too large");
    elements *= static_cast<uint64_t>(d);
  }
  if (dtype == DType::String) return strings_from_proto(p, shape, elements, where);
  const uint64_t nbytes = elements * dtype_size(dtype);
  if (!p.tensor_content().empty()) {
    if (p.tensor_content().size() != nbytes)
      throw InvalidArgumentError(where + ": tensor_content has " + std::to_string(p.tensor_content().size()) +
                                 " bytes; dtype and shape need " + std::to_string(nbytes));
  } else if (elements > static_cast<uint64_t>(kMaxFilledConstElements)) {
    throw InvalidArgumentError(where + ": a tensor of " + std::to_string(elements) +
                               " elements must store its bytes in tensor_content");
  }
  detail::TensorImpl* impl = detail::make_concrete(dtype, shape.dims());
  Tensor t(impl);
  if (!p.tensor_content().empty()) {
    std::memcpy(impl->data, p.tensor_content().data(), nbytes);
    if (dtype == DType::Bool)
      for (uint64_t i = 0; i < elements; ++i) static_cast<unsigned char*>(impl->data)[i] &= 1;
    return t;
  }
  switch (dtype) {
    case DType::Float32:
      fill_from<float>(*impl, p.float_val(), where);
      break;
    case DType::Float64:
      fill_from<double>(*impl, p.double_val(), where);
      break;
    case DType::Int32:
      fill_from<int32_t>(*impl, p.int_val(), where);
      break;
    case DType::Int64:
      fill_from<int64_t>(*impl, p.int64_val(), where);
      break;
    case DType::Bool:
      fill_from<bool>(*impl, p.bool_val(), where);
      break;
    case DType::UInt8:  // TensorFlow keeps the narrow integers in int_val
      fill_from<uint8_t>(*impl, p.int_val(), where);
      break;
    case DType::Int8:
      fill_from<int8_t>(*impl, p.int_val(), where);
      break;
    case DType::Int16:
      fill_from<int16_t>(*impl, p.int_val(), where);
      break;
    case DType::UInt16:
      fill_from<uint16_t>(*impl, p.int_val(), where);
      break;
    case DType::Float16:
      fill_bits<float16>(*impl, p.half_val(), where);
      break;
    case DType::BFloat16:
      fill_bits<bfloat16>(*impl, p.half_val(), where);
      break;
    case DType::Complex64:
      fill_complex<complex64>(*impl, p.scomplex_val(), where);
      break;
    case DType::Complex128:
      fill_complex<complex128>(*impl, p.dcomplex_val(), where);
      break;
    case DType::Variant:  // refused above
    case DType::String:   // read above
      break;
    case DType::UInt32:
      fill_from<uint32_t>(*impl, p.uint32_val(), where);
      break;
    case DType::UInt64:
      fill_from<uint64_t>(*impl, p.uint64_val(), where);
      break;
  }
  return t;
}

ops::AttrValue attr_from_proto(const tensorflow::AttrValue& p, AttrKind kind, const std::string& where) {
  using V = tensorflow::AttrValue;
  auto wrong = [&]() -> ops::AttrValue {
    throw InvalidArgumentError(where + " has the wrong type: expected " + attr_kind_name(kind));
  };
  const bool is_list = p.value_case() == V::kList;
  switch (kind) {
    case AttrKind::kInt:
      return p.value_case() == V::kI ? ops::AttrValue(int64_t{p.i()}) : wrong();
    case AttrKind::kFloat:
      return p.value_case() == V::kF ? ops::AttrValue(static_cast<double>(p.f())) : wrong();
    case AttrKind::kBool:
      return p.value_case() == V::kB ? ops::AttrValue(p.b()) : wrong();
    case AttrKind::kType:
      return p.value_case() == V::kType ? ops::AttrValue(dtype_from_proto(p.type(), where)) : wrong();
    case AttrKind::kString:
      return p.value_case() == V::kS ? ops::AttrValue(p.s()) : wrong();
    case AttrKind::kShape:
      return p.value_case() == V::kShape ? ops::AttrValue(shape_from_proto(p.shape(), where)) : wrong();
    case AttrKind::kTensor:
      return p.value_case() == V::kTensor ? ops::AttrValue(tensor_from_proto(p.tensor(), where)) : wrong();
    case AttrKind::kIntList: {
      if (!is_list || p.list().func_size() || p.list().type_size() || p.list().s_size()) return wrong();
      if (static_cast<size_t>(p.list().i_size()) > kMaxRank * 8) throw InvalidArgumentError(where + ": list too long");
      return ops::AttrValue(std::vector<int64_t>(p.list().i().begin(), p.list().i().end()));
    }
    case AttrKind::kFunc:
      return p.value_case() == V::kFunc ? ops::AttrValue(ops::FuncRef{p.func().name()}) : wrong();
    case AttrKind::kFuncList: {
      if (!is_list || p.list().i_size() || p.list().type_size()) return wrong();
      std::vector<ops::FuncRef> refs;
      for (const auto& f : p.list().func()) refs.push_back(ops::FuncRef{f.name()});
      return ops::AttrValue(std::move(refs));
    }
    case AttrKind::kResource:
      break;
  }
  return wrong();
}

}  // namespace kiln::io
