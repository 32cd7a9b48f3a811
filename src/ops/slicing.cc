// Ops that select parts of a tensor: Slice, StridedSlice, GatherV2.
#include <cstring>

#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

// The per-input-dim selection a slice makes.
struct SliceSpec {
  Dims begin, stride, size;  // per input dim
  Dims out_dims;             // final output dims (new axes in, shrunk dims out)
};

// Copies the selected elements (row-major over the input dims' sizes).
template <class T> void copy_slice(const TensorImpl& x, const SliceSpec& s, TensorImpl& y) {
  const size_t r = x.dims.size();
  const T* src = x.as<T>();
  T* dst = y.as<T>();
  if (y.num_elements == 0) return;
  if (r == 0) { dst[0] = src[0]; return; }
  const Dims xs = strides_of(x.dims);
  int64_t off = 0;
  for (size_t i = 0; i < r; ++i) off += s.begin[i] * xs[i];
  Dims idx(r, 0);
  const int64_t inner = s.size[r - 1], inner_step = s.stride[r - 1];
  const int64_t runs = y.num_elements / inner;
  for (int64_t run = 0; run < runs; ++run) {
    const T* p = src + off;
    if (inner_step == 1) std::memcpy(dst, p, inner * sizeof(T));
    else for (int64_t j = 0; j < inner; ++j) dst[j] = p[j * inner_step];
    dst += inner;
    for (int i = static_cast<int>(r) - 2; i >= 0; --i) {
      off += s.stride[i] * xs[i];
      if (++idx[i] < s.size[i]) break;
      off -= s.stride[i] * xs[i] * s.size[i];
      idx[i] = 0;
    }
  }
}

// Slice(input, begin, size).
bool slice_spec(const InferContext* c, const Dims& d, const std::vector<int64_t>& begin,
                const std::vector<int64_t>& size, SliceSpec* s, std::string* err) {
  if (begin.size() != d.size() || size.size() != d.size()) {
    *err = "Expected begin and size arguments to be 1-D tensors of size " + std::to_string(d.size()) +
           ", but got shapes [" + std::to_string(begin.size()) + "] and [" + std::to_string(size.size()) + "] instead.";
    return false;
  }
  s->begin = Dims(begin);
  s->stride = Dims(d.size(), 1);
  s->size.clear();
  for (size_t i = 0; i < d.size(); ++i) {
    const int64_t b = begin[i];
    int64_t n = size[i] == -1 ? d[i] - b : size[i];
    if (b < 0 || b > d[i]) {
      *err = "Expected begin[" + std::to_string(i) + "] in [0, " + std::to_string(d[i]) + "], but got " + std::to_string(b);
      return false;
    }
    if (n < 0 || b + n > d[i]) {
      *err = "Expected size[" + std::to_string(i) + "] in [0, " + std::to_string(d[i] - b) + "], but got " + std::to_string(size[i]);
      return false;
    }
    s->size.push_back(n);
  }
  s->out_dims = s->size;
  (void)c;
  return true;
}
void infer_slice(InferContext& c) {
  require_int_dtype(c, 1, "begin");
  require_int_dtype(c, 2, "size");
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  std::vector<int64_t> b, n;
  const PartialShape in = shape_of(c.in(0));
  if (!in.fully_defined() || !known_ints(c.in(1), &b) || !known_ints(c.in(2), &n)) {
    c.out(0).shape = in.unknown_rank ? PartialShape{{}, true} : PartialShape{Dims(in.dims.size(), -1), false};
    return;
  }
  SliceSpec s;
  std::string err;
  if (!slice_spec(&c, in.dims, b, n, &s, &err)) c.fail(err);
  c.out(0).shape = PartialShape{s.out_dims, false};
}
template <class T> struct SliceKernel {
  static void run(KernelContext& c) {
    SliceSpec s;
    std::string err;
    if (!slice_spec(nullptr, c.in(0).dims, int_values(c.in(1)), int_values(c.in(2)), &s, &err)) c.fail(err);
    copy_slice<T>(c.in(0), s, c.out(0));
  }
};

// StridedSlice(input, begin, end, strides): attrs begin_mask, end_mask, ellipsis_mask,
// new_axis_mask, shrink_axis_mask (bit i applies to spec entry i).
bool strided_spec(const Dims& d, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                  const std::vector<int64_t>& strides, const Attrs& a, SliceSpec* s, std::string* err) {
  const int64_t bm = a.i(0), em = a.i(1), elm = a.i(2), nam = a.i(3), sam = a.i(4);
  const size_t n = begin.size();
  if (end.size() != n || strides.size() != n) {
    *err = "Expected begin, end, and strides to be 1D equal size tensors, but got shapes [" + std::to_string(n) +
           "], [" + std::to_string(end.size()) + "], and [" + std::to_string(strides.size()) + "] instead.";
    return false;
  }
  if (elm & (elm - 1)) { *err = "Multiple ellipses in slice spec not allowed"; return false; }
  size_t real = 0;
  for (size_t k = 0; k < n; ++k) if (!((elm >> k) & 1) && !((nam >> k) & 1)) ++real;
  const bool has_ellipsis = elm != 0;
  if (real > d.size()) { *err = "Index out of range using input dim " + std::to_string(d.size()) + "; input has only " + std::to_string(d.size()) + " dims"; return false; }
  s->begin.clear(); s->stride.clear(); s->size.clear(); s->out_dims.clear();
  size_t dim = 0;
  auto full = [&](size_t i) {
    s->begin.push_back(0); s->stride.push_back(1); s->size.push_back(d[i]); s->out_dims.push_back(d[i]);
  };
  for (size_t k = 0; k < n; ++k) {
    if ((elm >> k) & 1) {
      const size_t count = d.size() - real;
      for (size_t j = 0; j < count; ++j) full(dim++);
      continue;
    }
    if ((nam >> k) & 1) { s->out_dims.push_back(1); continue; }
    const int64_t size = d[dim], st = strides[k];
    if (st == 0) { *err = "strides[" + std::to_string(k) + "] must be non-zero"; return false; }
    if ((sam >> k) & 1) {
      int64_t i = begin[k];
      if (i < -size || i >= size) {
        *err = "slice index " + std::to_string(i) + " of dimension " + std::to_string(dim) + " out of bounds.";
        return false;
      }
      if (i < 0) i += size;
      s->begin.push_back(i); s->stride.push_back(1); s->size.push_back(1);
      ++dim;
      continue;
    }
    const int64_t lower = st > 0 ? 0 : -1, upper = st > 0 ? size : size - 1;
    auto canon = [&](int64_t v, bool masked, bool is_begin) {
      if (masked) return (st > 0) == is_begin ? lower : upper;
      if (v < 0) v += size;
      return v < lower ? lower : (v > upper ? upper : v);
    };
    const int64_t b = canon(begin[k], (bm >> k) & 1, true), e = canon(end[k], (em >> k) & 1, false);
    int64_t len = st > 0 ? (e - b + st - 1) / st : (b - e + (-st) - 1) / (-st);
    if (len < 0) len = 0;
    s->begin.push_back(len == 0 ? 0 : b); s->stride.push_back(st); s->size.push_back(len); s->out_dims.push_back(len);
    ++dim;
  }
  (void)has_ellipsis;
  while (dim < d.size()) full(dim++);
  return true;
}
void infer_strided_slice(InferContext& c) {
  for (int i = 1; i <= 3; ++i) require_int_dtype(c, i, "begin/end/strides");
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  std::vector<int64_t> b, e, st;
  const PartialShape in = shape_of(c.in(0));
  if (!in.fully_defined() || !known_ints(c.in(1), &b) || !known_ints(c.in(2), &e) || !known_ints(c.in(3), &st)) {
    c.out(0).shape = PartialShape{{}, true};
    return;
  }
  SliceSpec s;
  std::string err;
  if (!strided_spec(in.dims, b, e, st, c.attrs, &s, &err)) c.fail(err);
  c.out(0).shape = PartialShape{s.out_dims, false};
}
template <class T> struct StridedSliceKernel {
  static void run(KernelContext& c) {
    SliceSpec s;
    std::string err;
    if (!strided_spec(c.in(0).dims, int_values(c.in(1)), int_values(c.in(2)), int_values(c.in(3)), c.attrs, &s, &err))
      c.fail(err);
    copy_slice<T>(c.in(0), s, c.out(0));
  }
};

// GatherV2(params, indices, axis): attr batch_dims (0 only).
void infer_gather(InferContext& c) {
  require_int_dtype(c, 1, "indices");
  require_int_dtype(c, 2, "axis");
  if (c.attrs.i(0) != 0) c.fail("batch_dims other than 0 is not supported");
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  std::vector<int64_t> axis_v;
  if (c.in(0).unknown_rank || c.in(1).unknown_rank || !known_ints(c.in(2), &axis_v)) {
    c.out(0).shape = PartialShape{{}, true};
    return;
  }
  const Dims& p = *c.in(0).dims;
  if (p.empty()) c.fail("params must be at least 1 dimensional");
  const int64_t axis = normalize_axis(c, axis_v[0], static_cast<int64_t>(p.size()));
  PartialShape out;
  for (int64_t i = 0; i < axis; ++i) out.dims.push_back(p[i]);
  for (int64_t d : *c.in(1).dims) out.dims.push_back(d);
  for (size_t i = axis + 1; i < p.size(); ++i) out.dims.push_back(p[i]);
  c.out(0).shape = out;
}
template <class T> struct GatherKernel {
  static void run(KernelContext& c) {
    const TensorImpl& p = c.in(0);
    const std::vector<int64_t> idx = int_values(c.in(1));
    int64_t axis = int_values(c.in(2))[0];
    if (axis < 0) axis += static_cast<int64_t>(p.dims.size());
    const int64_t limit = p.dims[axis];
    for (size_t i = 0; i < idx.size(); ++i)
      if (idx[i] < 0 || idx[i] >= limit)
        c.fail("indices[" + std::to_string(i) + "] = " + std::to_string(idx[i]) + " is not in [0, " + std::to_string(limit) + ")");
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= p.dims[i];
    for (size_t i = axis + 1; i < p.dims.size(); ++i) inner *= p.dims[i];
    const T* src = p.as<T>();
    T* dst = c.out(0).as<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i : idx) {
        std::memcpy(dst, src + (o * limit + i) * inner, inner * sizeof(T));
        dst += inner;
      }
  }
};

}  // namespace

const OpDef& op::Slice() {
  static const OpDef def{"Slice", 3, 1, kPure, {}, infer_slice, kernels_for<SliceKernel, KILN_ALL_TYPES>(), "T", 0, false, {{"Index", 1}}};
  return def;
}
const OpDef& op::StridedSlice() {
  static const OpDef def{"StridedSlice", 4, 1, kPure,
                         {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"},
                         infer_strided_slice, kernels_for<StridedSliceKernel, KILN_ALL_TYPES>(), "T", 0, false, {{"Index", 1}}};
  return def;
}
const OpDef& op::GatherV2() {
  static const OpDef def{"GatherV2", 3, 1, kPure, {"batch_dims"}, infer_gather, kernels_for<GatherKernel, KILN_ALL_TYPES>(), "Tparams", 0, false, {{"Tindices", 1}, {"Taxis", 2}}};
  return def;
}

}  // namespace kiln::ops
