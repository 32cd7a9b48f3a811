#include "ops/helpers.h"

#include <algorithm>

#include "core/object_value.h"
#include "core/tls.h"

namespace kiln::ops {

TensorShape shape_of(const InputInfo& in) { return in.unknown_rank ? TensorShape::unknown() : TensorShape(*in.dims); }

void infer_unary(InferContext& c) {
  c.out(0).dtype = c.in(0).dtype;
  c.out(0).shape = shape_of(c.in(0));
  c.kernel_dtype = c.in(0).dtype;
}

void infer_binary(InferContext& c) {
  require_same_dtypes(c, 0, 1);
  c.out(0).dtype = c.in(0).dtype;
  c.out(0).shape = broadcast_shapes(c, c.in(0), c.in(1));
  c.kernel_dtype = c.in(0).dtype;
}

void infer_compare(InferContext& c) {
  infer_binary(c);
  c.out(0).dtype = DType::Bool;
}

bool agreeing_elementwise(const OpDef& op, const TensorImpl* const* in, int n, DType* out_dtype) {
  if (op.infer == &infer_unary) {
    *out_dtype = in[0]->dtype;
    return n == 1;
  }
  if (op.infer != &infer_binary && op.infer != &infer_compare) return false;
  if (n != 2 || in[0]->dtype != in[1]->dtype || in[0]->dims != in[1]->dims) return false;
  *out_dtype = op.infer == &infer_compare ? DType::Bool : in[0]->dtype;
  return true;
}

TensorShape broadcast_shapes(const InferContext& c, const InputInfo& a, const InputInfo& b) {
  if (a.unknown_rank || b.unknown_rank) return TensorShape::unknown();
  const Dims& x = *a.dims;
  const Dims& y = *b.dims;
  if (x == y) return TensorShape(Dims(x));
  const size_t r = std::max(x.size(), y.size());
  Dims out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t dx = i < r - x.size() ? 1 : x[i - (r - x.size())];
    const int64_t dy = i < r - y.size() ? 1 : y[i - (r - y.size())];
    int64_t d;
    if (dx == dy)
      d = dx;
    else if (dx == 1)
      d = dy;
    else if (dy == 1)
      d = dx;
    else if (dx < 0)
      d = dy;  // unknown vs n>1: must be n (or 1)
    else if (dy < 0)
      d = dx;
    else
      c.fail("Incompatible shapes: " + dims_text(x) + " vs. " + dims_text(y));
    out[i] = d;
  }
  return TensorShape(std::move(out));
}

const char* tf_type_name(DType d) { return detail::dtype_info(d).tf_name; }

void require_type_in(const InferContext& c, const char* attr, DType t, std::initializer_list<DType> allowed) {
  std::string list;
  for (DType a : allowed) {
    if (a == t) return;
    list += std::string(list.empty() ? "" : ", ") + tf_type_name(a);
  }
  c.fail(std::string("Value for attr '") + attr + "' of " + tf_type_name(t) +
         " is not in the list of allowed values: " + list);
}

void require_string_in(const InferContext& c, const char* attr, const std::string& value,
                       std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (value == a) return;
    list += std::string(list.empty() ? "" : ", ") + "\"" + a + "\"";
  }
  c.fail(std::string("Value for attr '") + attr + "' of \"" + value +
         "\" is not in the list of allowed values: " + list);
}

void require_same_dtypes(const InferContext& c, int first, int last) {
  const DType want = c.in(first).dtype;
  for (int i = first + 1; i <= last; ++i)
    if (c.in(i).dtype != want)
      c.fail(std::string("cannot compute ") + c.op.name + " as input #" + std::to_string(i) +
             "(zero-based) was expected to be a " + tf_type_name(want) + " tensor but is a " +
             tf_type_name(c.in(i).dtype) + " tensor");
}

int64_t normalize_axis(const InferContext& c, int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank) {
    const int64_t lo = -rank, hi = rank;
    c.fail(std::string("Expected ") + what + " to be in the range [" + std::to_string(lo) + ", " + std::to_string(hi) +
           "), but got " + std::to_string(axis));
  }
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> int_values(const TensorImpl& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.num_elements));
  if (t.dtype == DType::Int32) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = t.as<int32_t>()[i];
  } else {
    for (size_t i = 0; i < v.size(); ++i) v[i] = t.as<int64_t>()[i];
  }
  return v;
}

namespace {
KILN_TLS thread_local bool t_unseen_value = false;
}

UnseenValueProbe::UnseenValueProbe() : previous_(t_unseen_value) { t_unseen_value = false; }
UnseenValueProbe::~UnseenValueProbe() { t_unseen_value = previous_ || t_unseen_value; }
bool UnseenValueProbe::saw_unseen_value() const { return t_unseen_value; }

bool known_ints(const InputInfo& in, std::vector<int64_t>* out) {
  if (!in.value) {
    t_unseen_value = true;
    return false;
  }
  *out = int_values(*in.value);
  return true;
}

void require_int_dtype(const InferContext& c, int input, const char* what) {
  const DType d = c.in(input).dtype;
  if (d != DType::Int32 && d != DType::Int64)
    c.fail(std::string(what) + " must be an int32 or int64 tensor, got " + tf_type_name(d));
}

Dims strides_of(const Dims& dims) {
  Dims s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

std::array<KernelFn, kNumDTypes> string_kernel(KernelFn k) {
  std::array<KernelFn, kNumDTypes> t{};
  t[static_cast<int>(DType::String)] = k;
  return t;
}

std::string_view str_at(const TensorImpl& t, int64_t i) { return detail::string_of(t.as<detail::ObjectValue*>()[i]); }

void require_string_input(const InferContext& c, int i) {
  if (c.in(i).dtype != DType::String)
    c.fail(std::string("cannot compute ") + c.op.name + " as input #" + std::to_string(i) +
           "(zero-based) was expected to be a string tensor but is a " + tf_type_name(c.in(i).dtype) + " tensor");
}

}  // namespace kiln::ops
