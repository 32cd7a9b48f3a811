#include "data/rows.h"

#include <cstring>

#include "core/object_value.h"
#include "core/tensor_impl.h"
#include "data/dataset.h"

namespace kiln::data::detail {
namespace {

using kiln::detail::TensorImpl;

// n elements from src to dst; object elements gain a reference each (dst owns them).
void copy_elements(DType dtype, const void* src, void* dst, int64_t n) {
  if (n <= 0) return;
  if (kiln::detail::holds_objects(dtype)) {
    auto* s = static_cast<kiln::detail::ObjectValue* const*>(src);
    auto* d = static_cast<kiln::detail::ObjectValue**>(dst);
    for (int64_t i = 0; i < n; ++i) {
      kiln::detail::object_retain(s[i]);
      d[i] = s[i];
    }
    return;
  }
  std::memcpy(dst, src, static_cast<size_t>(n) * dtype_size(dtype));
}

// Fills n elements of dst with the value of the scalar `value` (same dtype).
void fill_elements(const TensorImpl& value, void* dst, int64_t n) {
  const size_t size = dtype_size(value.dtype);
  auto* out = static_cast<unsigned char*>(dst);
  for (int64_t i = 0; i < n; ++i) copy_elements(value.dtype, value.data, out + i * size, 1);
}

// Copies a row of shape `dims` into a slot of shape `slot` (each dim at least as large),
// row-major, starting at dim `d`.
void copy_padded(DType dtype, const unsigned char* src, const std::vector<int64_t>& dims, unsigned char* dst,
                 const std::vector<int64_t>& slot, size_t d) {
  const size_t size = dtype_size(dtype);
  if (d + 1 >= dims.size()) {
    copy_elements(dtype, src, dst, dims.empty() ? 1 : dims.back());
    return;
  }
  int64_t src_stride = 1, dst_stride = 1;
  for (size_t k = d + 1; k < dims.size(); ++k) {
    src_stride *= dims[k];
    dst_stride *= slot[k];
  }
  for (int64_t i = 0; i < dims[d]; ++i)
    copy_padded(dtype, src + i * src_stride * size, dims, dst + i * dst_stride * size, slot, d + 1);
}

}  // namespace

Tensor row_of(const Tensor& t, int64_t i) {
  const TensorImpl& src = kiln::detail::concrete(t);
  kiln::Dims dims(src.dims.begin() + 1, src.dims.end());
  const int64_t row = src.dims[0] == 0 ? 0 : src.num_elements / src.dims[0];
  if (src.buffer && !kiln::detail::holds_objects(src.dtype) &&
      static_cast<size_t>(row) * dtype_size(src.dtype) > kiln::detail::kInlineBytes)
    return kiln::detail::wrap(kiln::detail::make_view(&src, dims, i * row));  // a view: no copy
  TensorImpl* out = kiln::detail::make_concrete(src.dtype, dims);
  Tensor result = kiln::detail::wrap(out);
  const int64_t n = out->num_elements;
  copy_elements(src.dtype, static_cast<const unsigned char*>(src.data) + i * n * dtype_size(src.dtype), out->data, n);
  return result;
}

Tensor rows_of(const Tensor& t, int64_t begin, int64_t end) {
  const TensorImpl& src = kiln::detail::concrete(t);
  kiln::Dims dims(src.dims.begin(), src.dims.end());
  const int64_t row = dims[0] == 0 ? 0 : src.num_elements / dims[0];
  dims[0] = end - begin;
  const int64_t n = dims[0] * row;
  if (src.buffer && !kiln::detail::holds_objects(src.dtype) &&
      static_cast<size_t>(n) * dtype_size(src.dtype) > kiln::detail::kInlineBytes)
    return kiln::detail::wrap(kiln::detail::make_view(&src, dims, begin * row));
  TensorImpl* out = kiln::detail::make_concrete(src.dtype, dims);
  Tensor result = kiln::detail::wrap(out);
  copy_elements(src.dtype, static_cast<const unsigned char*>(src.data) + begin * row * dtype_size(src.dtype), out->data,
                n);
  return result;
}

Tensor stack_rows(const std::vector<Tensor>& rows, int component) {
  const TensorImpl& first = kiln::detail::concrete(rows.at(0));
  for (size_t r = 1; r < rows.size(); ++r) {
    const TensorImpl& t = kiln::detail::concrete(rows[r]);
    if (t.dtype != first.dtype || t.dims != first.dims)
      throw InvalidArgumentError("Cannot batch tensors with different shapes in component " +
                                 std::to_string(component) + ". First element had shape " +
                                 shape_text(TensorShape(first.dims)) + " and element " + std::to_string(r) +
                                 " had shape " + shape_text(TensorShape(t.dims)) + ".");
  }
  kiln::Dims dims;
  dims.push_back(static_cast<int64_t>(rows.size()));
  for (int64_t d : first.dims) dims.push_back(d);
  TensorImpl* out = kiln::detail::make_concrete(first.dtype, dims);
  Tensor result = kiln::detail::wrap(out);
  const int64_t n = first.num_elements;
  auto* dst = static_cast<unsigned char*>(out->data);
  for (size_t r = 0; r < rows.size(); ++r)
    copy_elements(first.dtype, kiln::detail::concrete(rows[r]).data, dst + r * n * dtype_size(first.dtype), n);
  return result;
}

Tensor stack_padded(const std::vector<Tensor>& rows, const std::vector<int64_t>& shape, const Tensor& padding) {
  const TensorImpl& pad = kiln::detail::concrete(padding);
  kiln::Dims dims;
  dims.push_back(static_cast<int64_t>(rows.size()));
  for (int64_t d : shape) dims.push_back(d);
  TensorImpl* out = kiln::detail::make_concrete(pad.dtype, dims);
  Tensor result = kiln::detail::wrap(out);
  fill_elements(pad, out->data, out->num_elements);
  int64_t slot_elements = 1;
  for (int64_t d : shape) slot_elements *= d;
  auto* dst = static_cast<unsigned char*>(out->data);
  const size_t size = dtype_size(pad.dtype);
  for (size_t r = 0; r < rows.size(); ++r) {
    const TensorImpl& t = kiln::detail::concrete(rows[r]);
    if (t.num_elements == 0) continue;
    unsigned char* slot = dst + r * slot_elements * size;
    if (kiln::detail::holds_objects(pad.dtype)) {
      // The fill gave every slot element a reference to the padding; the row's positions
      // trade theirs for the row's element (an empty string is null, so no mask by value).
      auto* objs = reinterpret_cast<kiln::detail::ObjectValue**>(slot);
      auto* src = static_cast<kiln::detail::ObjectValue* const*>(t.data);
      for (int64_t k = 0; k < t.num_elements; ++k) {
        int64_t rest = k, at = 0, stride = 1;
        for (size_t d = t.dims.size(); d-- > 0;) {
          at += (rest % t.dims[d]) * stride;
          rest /= t.dims[d];
          stride *= shape[d];
        }
        kiln::detail::object_release(objs[at]);
        kiln::detail::object_retain(src[k]);
        objs[at] = src[k];
      }
      continue;
    }
    copy_padded(pad.dtype, static_cast<const unsigned char*>(t.data),
                std::vector<int64_t>(t.dims.begin(), t.dims.end()), slot, shape, 0);
  }
  return result;
}

}  // namespace kiln::data::detail
