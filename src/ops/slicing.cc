// Ops that select parts of a tensor: Slice, StridedSlice, GatherV2.
#include <cstring>

#include "core/parallel.h"
#include "ops/batch_rows.h"
#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

const int kBatchDims = attr_index(op::GatherV2(), "batch_dims");
// StridedSlice's masks, where StridedSliceGrad has them too (they share strided_spec).
int mask_index(const char* name) { return attr_index({{&op::StridedSlice(), name}, {&op::StridedSliceGrad(), name}}); }
const int kBeginMask = mask_index("begin_mask");
const int kEndMask = mask_index("end_mask");
const int kEllipsisMask = mask_index("ellipsis_mask");
const int kNewAxisMask = mask_index("new_axis_mask");
const int kShrinkAxisMask = mask_index("shrink_axis_mask");

// The per-input-dim selection a slice makes.
struct SliceSpec {
  Dims begin, stride, size;  // per input dim
  Dims out_dims;             // final output dims (new axes in, shrunk dims out)
};

// Walks the selected elements of x (row-major over the selection) alongside the dense y:
// copies x's elements into y (a slice), or with kScatter y's into x (a slice's gradient).
template <class T, bool kScatter = false>
void copy_slice(const TensorImpl& x, const SliceSpec& s, TensorImpl& y) {
  const size_t r = x.dims.size();
  T* src = const_cast<T*>(x.as<T>());
  T* dst = y.as<T>();
  if (y.num_elements == 0) return;
  if (r == 0) {
    if (kScatter)
      src[0] = dst[0];
    else
      dst[0] = src[0];
    return;
  }
  const Dims xs = strides_of(x.dims);
  int64_t off = 0;
  for (size_t i = 0; i < r; ++i) off += s.begin[i] * xs[i];
  Dims idx(r, 0);
  const int64_t inner = s.size[r - 1], inner_step = s.stride[r - 1];
  const int64_t runs = y.num_elements / inner;
  for (int64_t run = 0; run < runs; ++run) {
    T* p = src + off;
    if constexpr (kScatter) {
      if (inner_step == 1)
        std::memcpy(p, dst, inner * sizeof(T));
      else
        for (int64_t j = 0; j < inner; ++j) p[j * inner_step] = dst[j];
    } else {
      if (inner_step == 1)
        std::memcpy(dst, p, inner * sizeof(T));
      else
        for (int64_t j = 0; j < inner; ++j) dst[j] = p[j * inner_step];
    }
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
      *err = "Expected begin[" + std::to_string(i) + "] in [0, " + std::to_string(d[i]) + "], but got " +
             std::to_string(b);
      return false;
    }
    if (n < 0 || b + n > d[i]) {
      *err = "Expected size[" + std::to_string(i) + "] in [0, " + std::to_string(d[i] - b) + "], but got " +
             std::to_string(size[i]);
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
  const TensorShape in = shape_of(c.in(0));
  if (!in.is_fully_defined() || !known_ints(c.in(1), &b) || !known_ints(c.in(2), &n)) {
    c.out(0).shape =
        in.unknown_rank() ? TensorShape::unknown() : TensorShape::unknown_dims(static_cast<int>(in.dims().size()));
    return;
  }
  SliceSpec s;
  std::string err;
  if (!slice_spec(&c, in.dims(), b, n, &s, &err)) c.fail(err);
  c.out(0).shape = TensorShape(Dims(s.out_dims));
}
template <class T>
struct SliceKernel {
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
  const int64_t bm = a.i(kBeginMask), em = a.i(kEndMask), elm = a.i(kEllipsisMask), nam = a.i(kNewAxisMask),
                sam = a.i(kShrinkAxisMask);
  const size_t n = begin.size();
  // The masks are 64-bit: a longer spec would shift past them (TensorFlow's limit as well).
  if (n > 64) {
    *err = "Requires the slice spec to have at most 64 entries, got " + std::to_string(n);
    return false;
  }
  if (end.size() != n || strides.size() != n) {
    *err = "Expected begin, end, and strides to be 1D equal size tensors, but got shapes [" + std::to_string(n) +
           "], [" + std::to_string(end.size()) + "], and [" + std::to_string(strides.size()) + "] instead.";
    return false;
  }
  if (elm & (elm - 1)) {
    *err = "Multiple ellipses in slice spec not allowed";
    return false;
  }
  size_t real = 0;
  for (size_t k = 0; k < n; ++k)
    if (!((elm >> k) & 1) && !((nam >> k) & 1)) ++real;
  const bool has_ellipsis = elm != 0;
  if (real > d.size()) {
    *err = "Index out of range using input dim " + std::to_string(d.size()) + "; input has only " +
           std::to_string(d.size()) + " dims";
    return false;
  }
  s->begin.clear();
  s->stride.clear();
  s->size.clear();
  s->out_dims.clear();
  size_t dim = 0;
  auto full = [&](size_t i) {
    s->begin.push_back(0);
    s->stride.push_back(1);
    s->size.push_back(d[i]);
    s->out_dims.push_back(d[i]);
  };
  for (size_t k = 0; k < n; ++k) {
    if ((elm >> k) & 1) {
      const size_t count = d.size() - real;
      for (size_t j = 0; j < count; ++j) full(dim++);
      continue;
    }
    if ((nam >> k) & 1) {
      s->out_dims.push_back(1);
      continue;
    }
    const int64_t size = d[dim], st = strides[k];
    if (st == 0) {
      *err = "strides[" + std::to_string(k) + "] must be non-zero";
      return false;
    }
    if (size < 0) {  // an unknown dim (shape inference): the spec is checked when it runs
      if (!((sam >> k) & 1)) s->out_dims.push_back(-1);
      s->begin.push_back(0);
      s->stride.push_back(st);
      s->size.push_back(-1);
      ++dim;
      continue;
    }
    if ((sam >> k) & 1) {
      int64_t i = begin[k];
      if (i < -size || i >= size) {
        *err = "slice index " + std::to_string(i) + " of dimension " + std::to_string(dim) + " out of bounds.";
        return false;
      }
      if (i < 0) i += size;
      s->begin.push_back(i);
      s->stride.push_back(1);
      s->size.push_back(1);
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
    // |stride| and the span in unsigned arithmetic: a stride of INT64_MIN or INT64_MAX
    // must not overflow (the span itself lies within [-1, size]).
    const uint64_t magnitude = st > 0 ? static_cast<uint64_t>(st) : static_cast<uint64_t>(-(st + 1)) + 1;
    const int64_t span = st > 0 ? e - b : b - e;
    const int64_t len = span > 0 ? static_cast<int64_t>((static_cast<uint64_t>(span) - 1) / magnitude + 1) : 0;
    s->begin.push_back(len == 0 ? 0 : b);
    s->stride.push_back(st);
    s->size.push_back(len);
    s->out_dims.push_back(len);
    ++dim;
  }
  (void)has_ellipsis;
  while (dim < d.size()) full(dim++);
  return true;
}
// begin, end and strides are vectors (inputs 1-3); a message in TensorFlow's words, or "".
std::string spec_rank_error(const Dims* const dims[3]) {
  for (int i = 0; i < 3; ++i)
    if (dims[i] && dims[i]->size() != 1)
      return "Expected begin, end, and strides to be 1D equal size tensors, but got shapes " + dims_text(*dims[0]) +
             ", " + dims_text(*dims[1]) + ", and " + dims_text(*dims[2]) + " instead.";
  return "";
}

void infer_strided_slice(InferContext& c) {
  for (int i = 1; i <= 3; ++i) require_int_dtype(c, i, "begin/end/strides");
  if (!c.in(1).unknown_rank && !c.in(2).unknown_rank && !c.in(3).unknown_rank) {
    const Dims* const dims[3] = {c.in(1).dims, c.in(2).dims, c.in(3).dims};
    if (std::string err = spec_rank_error(dims); !err.empty()) c.fail(err);
  }
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  std::vector<int64_t> b, e, st;
  const TensorShape in = shape_of(c.in(0));
  // Known dims give known output dims even where others are unknown ([?,24][:, :8] is [?,8]).
  if (in.unknown_rank() || !known_ints(c.in(1), &b) || !known_ints(c.in(2), &e) || !known_ints(c.in(3), &st)) {
    c.out(0).shape = TensorShape::unknown();
    return;
  }
  SliceSpec s;
  std::string err;
  if (!strided_spec(in.dims(), b, e, st, c.attrs, &s, &err)) c.fail(err);
  c.out(0).shape = TensorShape(Dims(s.out_dims));
}
template <class T>
struct StridedSliceKernel {
  static void run(KernelContext& c) {
    SliceSpec s;
    const Dims* const dims[3] = {&c.in(1).dims, &c.in(2).dims, &c.in(3).dims};
    std::string err = spec_rank_error(dims);
    if (!err.empty() ||
        !strided_spec(c.in(0).dims, int_values(c.in(1)), int_values(c.in(2)), int_values(c.in(3)), c.attrs, &s, &err))
      c.fail(err);
    copy_slice<T>(c.in(0), s, c.out(0));
  }
};

// GatherV2(params, indices, axis): attr batch_dims (0 only).
void infer_gather(InferContext& c) {
  require_int_dtype(c, 1, "indices");
  require_int_dtype(c, 2, "axis");
  if (c.attrs.i(kBatchDims) != 0) c.fail("batch_dims other than 0 is not supported");
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  std::vector<int64_t> axis_v;
  if (c.in(0).unknown_rank || c.in(1).unknown_rank || !known_ints(c.in(2), &axis_v)) {
    c.out(0).shape = TensorShape::unknown();
    return;
  }
  if (axis_v.size() != 1) c.fail("axis must be scalar, but got " + std::to_string(axis_v.size()) + " values");
  const Dims& p = *c.in(0).dims;
  if (p.empty()) c.fail("params must be at least 1 dimensional");
  const int64_t axis = normalize_axis(c, axis_v[0], static_cast<int64_t>(p.size()));
  Dims out;
  for (int64_t i = 0; i < axis; ++i) out.push_back(p[i]);
  for (int64_t d : *c.in(1).dims) out.push_back(d);
  for (size_t i = axis + 1; i < p.size(); ++i) out.push_back(p[i]);
  c.out(0).shape = TensorShape(std::move(out));
}
template <class T>
struct GatherKernel {
  static void run(KernelContext& c) {
    const TensorImpl& p = c.in(0);
    const std::vector<int64_t> idx = int_values(c.in(1));
    // Checked again here: in a graph the shape function may not have seen these values.
    const std::vector<int64_t> axis_v = int_values(c.in(2));
    if (axis_v.size() != 1) c.fail("axis must be scalar, but got " + std::to_string(axis_v.size()) + " values");
    const auto rank = static_cast<int64_t>(p.dims.size());
    int64_t axis = axis_v[0];
    if (rank == 0 || axis < -rank || axis >= rank)
      c.fail("Expected axis in the range [" + std::to_string(-rank) + ", " + std::to_string(rank) + "), but got " +
             std::to_string(axis));
    if (axis < 0) axis += rank;
    const int64_t limit = p.dims[axis];
    for (size_t i = 0; i < idx.size(); ++i)
      if (idx[i] < 0 || idx[i] >= limit)
        c.fail("indices[" + std::to_string(i) + "] = " + std::to_string(idx[i]) + " is not in [0, " +
               std::to_string(limit) + ")");
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= p.dims[i];
    for (size_t i = axis + 1; i < p.dims.size(); ++i) inner *= p.dims[i];
    const T* src = p.as<T>();
    T* dst = c.out(0).as<T>();
    // Slice k (of outer x indices) is index k % n of outer index k / n. From 256 KB the slices
    // split over the intra-op threads (an embedding lookup of a batch of sequences).
    const auto n = static_cast<int64_t>(idx.size());
    const int64_t slices = outer * n, slice_bytes = inner * static_cast<int64_t>(sizeof(T));
    auto copy = [&](int64_t lo, int64_t hi) {
      for (int64_t k = lo; k < hi; ++k)
        std::memcpy(dst + k * inner, src + ((k / n) * limit + idx[static_cast<size_t>(k % n)]) * inner,
                    static_cast<size_t>(slice_bytes));
    };
    constexpr int64_t kParallelBytes = int64_t{256} << 10;
    if (slices * slice_bytes < kParallelBytes) {
      copy(0, slices);
      return;
    }
    parallel_for(slices, std::max<int64_t>(1, (int64_t{64} << 10) / std::max<int64_t>(slice_bytes, 1)), copy);
  }
};

// StridedSliceGrad(shape, begin, end, strides, dy): the attrs of StridedSlice. A tensor of
// `shape` holding zeros except where the slice took its elements, which hold dy.
void infer_strided_slice_grad(InferContext& c) {
  for (int i = 0; i <= 3; ++i) require_int_dtype(c, i, "shape/begin/end/strides");
  if (!c.in(0).unknown_rank && c.in(0).dims->size() != 1)
    c.fail("shape must be 1-D, got shape.shape = " + dims_text(*c.in(0).dims));
  c.out(0).dtype = c.in(4).dtype;
  c.kernel_dtype = c.in(4).dtype;
  std::vector<int64_t> shape;
  if (!known_ints(c.in(0), &shape)) {
    const Dims* sd = c.in(0).dims;
    c.out(0).shape = (c.in(0).unknown_rank || sd->size() != 1 || (*sd)[0] < 0)
                         ? TensorShape::unknown()
                         : TensorShape::unknown_dims(static_cast<int>((*sd)[0]));
    return;
  }
  for (int64_t d : shape)
    if (d < 0) c.fail("StridedSliceGrad: shape must be non-negative, got " + dims_text(Dims(shape)));
  detail::checked_num_elements(shape.data(), shape.size());
  std::vector<int64_t> b, e, st;
  if (known_ints(c.in(1), &b) && known_ints(c.in(2), &e) && known_ints(c.in(3), &st)) {
    SliceSpec s;
    std::string err;
    if (!strided_spec(Dims(shape), b, e, st, c.attrs, &s, &err)) c.fail(err);
    TensorShape dy = shape_of(c.in(4));
    if (!dy.unknown_rank() && dy.is_fully_defined() && dy.dims() != s.out_dims)
      c.fail("shape of dy was " + dims_text(dy.dims()) + " instead of " + dims_text(s.out_dims));
  }
  c.out(0).shape = TensorShape(Dims(shape));
}
template <class T>
struct StridedSliceGradKernel {
  static void run(KernelContext& c) {
    SliceSpec s;
    std::string err;
    TensorImpl& x = c.out(0);
    if (!strided_spec(x.dims, int_values(c.in(1)), int_values(c.in(2)), int_values(c.in(3)), c.attrs, &s, &err))
      c.fail(err);
    if (c.in(4).dims != s.out_dims)
      c.fail("shape of dy was " + dims_text(c.in(4).dims) + " instead of " + dims_text(s.out_dims));
    std::memset(x.data, 0, x.nbytes());
    copy_slice<T, true>(x, s, const_cast<TensorImpl&>(c.in(4)));
  }
};

// ---- gradients ----
void slice_grad(GradContext& c) {
  const std::vector<int64_t> begin = grad::known_input_ints(c, 1, "begin");
  const std::vector<int64_t> size = grad::known_input_ints(c, 2, "size");
  std::vector<int64_t> end(begin.size()), strides(begin.size(), 1);
  int64_t end_mask = 0;
  for (size_t i = 0; i < begin.size(); ++i) {
    end[i] = begin[i] + size[i];
    if (size[i] == -1) end_mask |= int64_t{1} << i;
  }
  const Tensor shape = grad::shape(c.b, c.x[0]), b = grad::ints(c.b, begin), e = grad::ints(c.b, end),
               s = grad::ints(c.b, strides);
  c.dx[0] = grad::emit1(c.b, op::StridedSliceGrad(), {&shape, &b, &e, &s, &c.dy[0]},
                        Attrs{int64_t{0}, end_mask, int64_t{0}, int64_t{0}, int64_t{0}});
}
void strided_slice_grad(GradContext& c) {
  const Tensor shape = grad::shape(c.b, c.x[0]);
  c.dx[0] = grad::emit1(c.b, op::StridedSliceGrad(), {&shape, &c.x[1], &c.x[2], &c.x[3], &c.dy[0]}, c.attrs);
}
// The gradient of a gather sums dy's rows into the rows they came from; a gather along a
// later axis is transposed so the gathered axis leads.
void gather_grad(GradContext& c) {
  Dims pd, id;
  if (!grad::static_dims(c.x[0], &pd) || !grad::static_dims(c.x[1], &id))
    throw UnimplementedError("The gradient of GatherV2 needs params and indices of known rank");
  int64_t axis = grad::known_input_ints(c, 2, "axis")[0];
  const int64_t rp = static_cast<int64_t>(pd.size()), ri = static_cast<int64_t>(id.size());
  if (axis < 0) axis += rp;
  Tensor dy = c.dy[0];
  if (axis > 0) {  // dy: outer + indices + inner -> indices + outer + inner
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < ri; ++i) perm.push_back(axis + i);
    for (int64_t i = 0; i < axis; ++i) perm.push_back(i);
    for (int64_t i = axis + ri; i < axis + ri + rp - axis - 1; ++i) perm.push_back(i);
    dy = grad::transpose(c.b, dy, perm);
  }
  // num_segments: params' size along the axis.
  Tensor count;
  if (pd[axis] >= 0) {
    Tensor v(detail::make_concrete(DType::Int64, Dims{}));
    v.impl()->as<int64_t>()[0] = pd[axis];
    count = c.b.constant(v);
  } else {
    const Tensor s = grad::emit1(c.b, op::Shape(), {&c.x[0]}, Attrs{DType::Int64});
    const Tensor i = grad::int_scalar(c.b, axis), zero = grad::int_scalar(c.b, 0);
    count = grad::emit1(c.b, op::GatherV2(), {&s, &i, &zero}, Attrs{int64_t{0}});
  }
  Tensor summed = grad::emit1(c.b, op::UnsortedSegmentSum(), {&dy, &c.x[1], &count});
  if (axis > 0) {  // axis + outer + inner -> outer + axis + inner
    std::vector<int64_t> perm;
    for (int64_t i = 1; i <= axis; ++i) perm.push_back(i);
    perm.push_back(0);
    for (int64_t i = axis + 1; i < rp; ++i) perm.push_back(i);
    summed = grad::transpose(c.b, summed, perm);
  }
  c.dx[0] = summed;
}
void strided_slice_grad_grad(GradContext& c) {
  c.dx[4] = grad::emit1(c.b, op::StridedSlice(), {&c.dy[0], &c.x[1], &c.x[2], &c.x[3]}, c.attrs);
}

}  // namespace

const OpDef& op::Slice() {
  static const OpDef def = {.name = "Slice",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"input", "begin", "size"},
                            .traits = kPure | kTfjs | kMovesElements,
                            .infer = infer_slice,
                            .kernels = kernels_for<SliceKernel, KILN_EVERY_TYPE>(),
                            .index_type_attrs = {{"Index", 1}},
                            .grad = &slice_grad};
  return def;
}
namespace {

// Of a shape led by the batch size: shape[0] (the batch size), shape[:1] (a shape led by it)
// or shape[k:] for k >= 1 (the other dims: the same in every row's call).
// Of rows: a slice that keeps axis 0 whole (`x[:, :units]`, `x[..., 2:]`) keeps the rows.
RowKind sliced_rows(const RowsContext& c) {
  std::vector<int64_t> begin, end, strides;
  const int rank = c.rank(0);
  if (rank < 1 || !c.free(1) || !c.free(2) || !c.free(3) || !c.ints(1, begin) || !c.ints(2, end) ||
      !c.ints(3, strides) || begin.empty() || begin.size() != end.size() || begin.size() != strides.size())
    return RowKind::kOther;
  const int64_t ellipsis = c.attrs.i(kEllipsisMask), new_axes = c.attrs.i(kNewAxisMask);
  const auto specs = static_cast<int64_t>(begin.size());
  // A leading ellipsis covers axis 0 when the specs after it leave it at least one axis.
  if (ellipsis & 1) return ellipsis == 1 && new_axes == 0 && specs - 1 < rank ? RowKind::kRows : RowKind::kOther;
  if ((new_axes & 1) || (c.attrs.i(kShrinkAxisMask) & 1) || strides[0] != 1) return RowKind::kOther;
  const bool from_start = (c.attrs.i(kBeginMask) & 1) || begin[0] == 0;
  return from_start && (c.attrs.i(kEndMask) & 1) ? RowKind::kRows : RowKind::kOther;
}

RowKind strided_slice_rows(const RowsContext& c) {
  std::vector<int64_t> begin, end, strides;
  if (c.rows(0) && !c.sized()) return sliced_rows(c);
  if (!c.is(0, RowKind::kRowsShape) || !c.free(1) || !c.free(2) || !c.free(3) || !c.ints(1, begin) || !c.ints(2, end) ||
      !c.ints(3, strides) || begin.size() != 1 || end.size() != 1 || strides != std::vector<int64_t>{1} ||
      c.attrs.i(kEllipsisMask) != 0 || c.attrs.i(kNewAxisMask) != 0 || c.attrs.i(kBeginMask) != 0)
    return RowKind::kOther;
  if (begin[0] >= 1) return RowKind::kFree;
  const int64_t shrink = c.attrs.i(kShrinkAxisMask);
  if (begin[0] != 0 || end[0] != 1 || c.attrs.i(kEndMask) != 0) return RowKind::kOther;
  return shrink == 1 ? RowKind::kBatchSize : shrink == 0 ? RowKind::kRowsShape : RowKind::kOther;
}

}  // namespace

const OpDef& op::StridedSlice() {
  static const OpDef def = {
      .name = "StridedSlice",
      .num_inputs = 4,
      .num_outputs = 1,
      .input_args = {"input", "begin", "end", "strides"},
      .traits = kPure | kTfjs | kMovesElements,
      .attr_specs = {int_attr("begin_mask", 0), int_attr("end_mask", 0), int_attr("ellipsis_mask", 0),
                     int_attr("new_axis_mask", 0), int_attr("shrink_axis_mask", 0)},
      .infer = infer_strided_slice,
      .kernels = kernels_for<StridedSliceKernel, KILN_EVERY_TYPE>(),
      .index_type_attrs = {{"Index", 1}},
      .grad = &strided_slice_grad,
      .rows = &strided_slice_rows};
  return def;
}
const OpDef& op::StridedSliceGrad() {
  static const OpDef def = {
      .name = "StridedSliceGrad",
      .num_inputs = 5,
      .num_outputs = 1,
      .input_args = {"shape", "begin", "end", "strides", "dy"},
      .traits = kPure,
      .attr_specs = {int_attr("begin_mask", 0), int_attr("end_mask", 0), int_attr("ellipsis_mask", 0),
                     int_attr("new_axis_mask", 0), int_attr("shrink_axis_mask", 0)},
      .infer = infer_strided_slice_grad,
      .kernels = kernels_for<StridedSliceGradKernel, KILN_EVERY_TYPE>(),
      .type_attr_input = 4,
      .index_type_attrs = {{"Index", 0}},
      .grad = &strided_slice_grad_grad};
  return def;
}
const OpDef& op::GatherV2() {
  static const OpDef def = {.name = "GatherV2",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"params", "indices", "axis"},
                            .traits = kPure | kTfjs | kMovesElements,
                            .attr_specs = {int_attr("batch_dims", 0)},
                            .infer = infer_gather,
                            .kernels = kernels_for<GatherKernel, KILN_EVERY_TYPE>(),
                            .type_attr = "Tparams",
                            .index_type_attrs = {{"Tindices", 1}, {"Taxis", 2}},
                            .grad = &gather_grad};
  return def;
}

}  // namespace kiln::ops
