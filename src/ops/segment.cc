// Segment reductions: UnsortedSegmentSum/Max/Min/Prod (num_segments given; rows of negative ids are dropped; an empty
// segment holds the reduction's identity: lowest, highest, one) and the sorted SegmentSum/Mean/Max/Min/Prod (ids
// non-decreasing; the output has last id + 1 rows, so the kernel makes it; an empty segment holds 0, or 1 for Prod),
// with TensorFlow's messages.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

enum class Reduce { kSum, kMean, kMax, kMin, kProd };
Reduce reduction_of(const OpDef& op) {
  if (&op == &op::UnsortedSegmentMax() || &op == &op::SegmentMax()) return Reduce::kMax;
  if (&op == &op::UnsortedSegmentMin() || &op == &op::SegmentMin()) return Reduce::kMin;
  if (&op == &op::UnsortedSegmentProd() || &op == &op::SegmentProd()) return Reduce::kProd;
  if (&op == &op::SegmentMean()) return Reduce::kMean;
  return Reduce::kSum;
}
bool sorted_op(const OpDef& op) { return op.num_inputs == 2; }

template <class T>
T identity_of(Reduce r, bool sorted) {
  if (sorted) return r == Reduce::kProd ? T(1) : T(0);
  switch (r) {
    case Reduce::kMax:
      return std::numeric_limits<T>::lowest();
    case Reduce::kMin:
      return std::numeric_limits<T>::max();
    case Reduce::kProd:
      return T(1);
    default:
      return T(0);
  }
}

template <class T>
void combine(T& acc, T v, Reduce r) {
  switch (r) {
    case Reduce::kSum:
    case Reduce::kMean:
      if constexpr (std::is_integral_v<T>)  // wraps, as TensorFlow's integer kernels
        acc = static_cast<T>(static_cast<std::make_unsigned_t<T>>(acc) + static_cast<std::make_unsigned_t<T>>(v));
      else
        acc = acc + v;
      break;
    case Reduce::kProd:
      if constexpr (std::is_integral_v<T>)
        acc = static_cast<T>(static_cast<std::make_unsigned_t<T>>(acc) * static_cast<std::make_unsigned_t<T>>(v));
      else
        acc = acc * v;
      break;
    case Reduce::kMax:  // a NaN arriving replaces the maximum; a later value replaces a NaN (TensorFlow's)
      acc = acc > v ? acc : v;
      break;
    case Reduce::kMin:
      acc = acc < v ? acc : v;
      break;
  }
}

void infer_segment(InferContext& c) {
  const bool sorted = sorted_op(c.op);
  require_int_dtype(c, 1, "segment_ids");
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  std::vector<int64_t> n;
  bool known_n = false;
  if (!sorted) {
    require_int_dtype(c, 2, "num_segments");
    if (!c.in(2).unknown_rank && !c.in(2).dims->empty())
      c.fail("num_segments should be a scalar, not shape " + dims_text(*c.in(2).dims));
    known_n = known_ints(c.in(2), &n);
    if (known_n && n[0] < 0) c.fail("num_segments must be a non-negative scalar");
  } else if (!c.in(1).unknown_rank && c.in(1).dims->size() != 1) {
    c.fail("segment_ids should be a vector.");
  }
  if (c.in(0).unknown_rank || c.in(1).unknown_rank) {
    c.out(0).shape = TensorShape::unknown();
    return;
  }
  const Dims& d = *c.in(0).dims;
  const Dims& ids = *c.in(1).dims;
  if (sorted) {
    if (d.empty()) c.fail("Shape must be at least rank 1 but is rank 0");
    if (ids[0] >= 0 && d[0] >= 0 && ids[0] != d[0])
      c.fail("segment_ids should be the same size as dimension 0 of input.");
  } else {
    if (ids.size() > d.size()) c.fail("segment_ids rank must not exceed data rank");
    for (size_t i = 0; i < ids.size(); ++i)
      if (ids[i] >= 0 && d[i] >= 0 && ids[i] != d[i])
        c.fail("data.shape = " + dims_text(d) + " does not start with segment_ids.shape = " + dims_text(ids));
  }
  Dims out;
  out.push_back(known_n ? n[0] : -1);
  for (size_t i = sorted ? 1 : ids.size(); i < d.size(); ++i) out.push_back(d[i]);
  c.out(0).shape = TensorShape(std::move(out));
}

template <class T>
struct SegmentKernel {
  static void run(KernelContext& c) {
    const bool sorted = sorted_op(c.op);
    const Reduce r = reduction_of(c.op);
    const TensorImpl& data = c.in(0);
    const std::vector<int64_t> ids = int_values(c.in(1));
    int64_t segments;
    TensorImpl* out;
    if (sorted) {
      if (data.dims.empty()) c.fail("Shape must be at least rank 1 but is rank 0");
      if (c.in(1).dims.size() != 1) c.fail("segment_ids should be a vector.");
      if (static_cast<int64_t>(ids.size()) != data.dims[0])
        c.fail("segment_ids should be the same size as dimension 0 of input.");
      segments = ids.empty() ? 0 : ids.back() + 1;
      for (size_t j = 1; j < ids.size(); ++j)
        if (ids[j] < ids[j - 1]) c.fail("segment ids are not increasing");
      if (!ids.empty() && ids[0] < 0)
        c.fail("Segment id " + std::to_string(ids[0]) + " out of range [0, " + std::to_string(segments) +
               "), possibly because 'segment_ids' input is not sorted.");
      Dims dims = data.dims;
      dims[0] = segments;
      out = detail::make_concrete(data.dtype, dims);
      c.outputs[0] = out;
    } else {
      out = &c.out(0);
      segments = out->dims[0];
    }
    const int64_t rows = static_cast<int64_t>(ids.size());
    const int64_t inner = rows ? data.num_elements / rows : 0;
    T* o = out->as<T>();
    std::fill(o, o + out->num_elements, identity_of<T>(r, sorted));
    if (!sorted && out->num_elements == 0) return;  // TensorFlow checks no ids when nothing is written
    std::vector<int64_t> count(r == Reduce::kMean ? static_cast<size_t>(segments) : 0, 0);
    std::vector<char> touched(sorted ? static_cast<size_t>(segments) : 0, 0);
    const T* src = data.as<T>();
    for (int64_t j = 0; j < rows; ++j) {
      const int64_t id = ids[static_cast<size_t>(j)];
      if (id < 0) continue;  // unsorted: TensorFlow drops the rows of negative ids
      if (id >= segments)
        c.fail("segment_ids[" + std::to_string(j) + "] = " + std::to_string(id) + " is out of range [0, " +
               std::to_string(segments) + ")");
      T* row = o + id * inner;
      const T* in = src + j * inner;
      if (sorted && !touched[static_cast<size_t>(id)]) {  // a segment starts from its first row
        touched[static_cast<size_t>(id)] = 1;
        std::copy_n(in, inner, row);
      } else {
        for (int64_t k = 0; k < inner; ++k) combine(row[k], in[k], r);
      }
      if (r == Reduce::kMean) ++count[static_cast<size_t>(id)];
    }
    if (r == Reduce::kMean)
      for (int64_t s = 0; s < segments; ++s)
        if (count[static_cast<size_t>(s)] > 1)
          for (int64_t k = 0; k < inner; ++k) o[s * inner + k] /= static_cast<T>(count[static_cast<size_t>(s)]);
  }
};

// The rows of t the ids name (GatherV2 on axis 0). An unsorted reduction drops rows with a
// negative id, so their gradient is zero: those ids gather row 0 and are masked out
// (TensorFlow's _GatherDropNegatives).
Tensor gather_rows(GradContext& c, const Tensor& t) {
  const Tensor& ids = c.x[1];
  const Tensor axis = grad::int_scalar(c.b, 0);
  if (c.x.size() != 3) return grad::emit1(c.b, op::GatherV2(), {&t, &ids, &axis}, Attrs{int64_t{0}});
  const Tensor zero = grad::scalar(c.b, ids, 0);
  const Tensor clipped = grad::emit1(c.b, op::Maximum(), {&ids, &zero});
  const Tensor rows = grad::emit1(c.b, op::GatherV2(), {&t, &clipped, &axis}, Attrs{int64_t{0}});
  Dims id_dims, row_dims;
  if (!grad::static_dims(ids, &id_dims) || !grad::static_dims(rows, &row_dims))
    throw UnimplementedError(std::string(c.op.name) + "'s gradient needs the ranks of its inputs when tracing");
  Tensor kept = grad::greater_equal(c.b, ids, zero);
  const Tensor last = grad::int_scalar(c.b, -1);
  for (size_t d = id_dims.size(); d < row_dims.size(); ++d)  // broadcast over each row's elements
    kept = grad::emit1(c.b, op::ExpandDims(), {&kept, &last});
  return grad::where(c.b, kept, rows, grad::zeros_like(c.b, rows));
}

// SegmentSum's and UnsortedSegmentSum's gradient: each row takes its segment's gradient
// (TensorFlow's _SegmentSumGrad).
void segment_sum_grad(GradContext& c) { c.dx[0] = gather_rows(c, c.dy[0]); }

// The other reductions' gradients (TensorFlow's _SegmentMeanGrad, _SegmentMinOrMaxGrad,
// _SegmentProdGrad and their unsorted forms), in ops. Integer data has none.
// Sums rows of t by segment: SegmentSum, or UnsortedSegmentSum with the forward's num_segments.
Tensor segment_sum(GradContext& c, const Tensor& t) {
  if (c.x.size() == 3) return grad::emit1(c.b, op::UnsortedSegmentSum(), {&t, &c.x[1], &c.x[2]});
  return grad::emit1(c.b, op::SegmentSum(), {&t, &c.x[1]});
}

// Each row gets its segment's gradient over the segment's row count.
void segment_mean_grad(GradContext& c) {
  if (!is_floating(c.x[0].dtype())) return;
  Dims dims;
  if (!grad::static_dims(c.x[0], &dims))
    throw UnimplementedError("SegmentMean's gradient needs the rank of its data when tracing");
  const Tensor ones = grad::emit1(c.b, op::OnesLike(), {&c.x[1]});
  const Tensor counts = segment_sum(c, grad::cast(c.b, ones, c.x[0].dtype()));
  std::vector<int64_t> column(dims.size(), 1);
  column[0] = -1;
  const Tensor shape = grad::ints(c.b, column);
  const Tensor counts_column = grad::emit1(c.b, op::Reshape(), {&counts, &shape});
  c.dx[0] = gather_rows(c, grad::div(c.b, c.dy[0], counts_column));
}

// The gradient goes to the elements equal to their segment's result, shared among ties.
void segment_min_max_grad(GradContext& c) {
  if (!is_floating(c.x[0].dtype())) return;
  const Tensor selected = grad::equal(c.b, c.x[0], gather_rows(c, c.y[0]));
  const Tensor count = segment_sum(c, grad::cast(c.b, selected, c.x[0].dtype()));
  const Tensor shared = gather_rows(c, grad::div(c.b, c.dy[0], count));
  c.dx[0] = grad::where(c.b, selected, shared, grad::zeros_like(c.b, c.x[0]));
}

// d prod / d x = the product of the segment's other elements: the product over x where x is
// not zero; the product of the nonzero others where x is the segment's one zero; zero where
// the segment has two zeros or more.
void segment_prod_grad(GradContext& c) {
  if (!is_floating(c.x[0].dtype())) return;
  const Tensor& x = c.x[0];
  const Tensor zero = grad::scalar(c.b, x, 0), one = grad::scalar(c.b, x, 1);
  const Tensor is_zero = grad::equal(c.b, x, zero);
  const Tensor zeros_in_segment = segment_sum(c, grad::cast(c.b, is_zero, x.dtype()));
  const Tensor dy =
      grad::where(c.b, grad::greater(c.b, zeros_in_segment, one), grad::zeros_like(c.b, c.dy[0]), c.dy[0]);
  const Tensor non_zero = grad::where(c.b, is_zero, grad::emit1(c.b, op::OnesLike(), {&x}), x);
  const Tensor non_zero_prod = c.x.size() == 3
                                   ? grad::emit1(c.b, op::UnsortedSegmentProd(), {&non_zero, &c.x[1], &c.x[2]})
                                   : grad::emit1(c.b, op::SegmentProd(), {&non_zero, &c.x[1]});
  const Tensor others =
      grad::where(c.b, is_zero, gather_rows(c, non_zero_prod), grad::div(c.b, gather_rows(c, c.y[0]), non_zero));
  c.dx[0] = grad::mul(c.b, gather_rows(c, dy), others);
}

#define KILN_SEGMENT_ROW(Name, Inputs, Traits, Types, Grad)                                                       \
  const OpDef& op::Name() {                                                                                       \
    static const OpDef def = {                                                                                    \
        .name = #Name,                                                                                            \
        .num_inputs = Inputs,                                                                                     \
        .num_outputs = 1,                                                                                         \
        .input_args = Inputs == 2 ? std::vector<ArgSpec>{"data", "segment_ids"}                                   \
                                  : std::vector<ArgSpec>{"data", "segment_ids", "num_segments"},                  \
        .traits = Traits,                                                                                         \
        .infer = infer_segment,                                                                                   \
        .kernels = kernels_for<SegmentKernel, Types>(),                                                           \
        .index_type_attrs = Inputs == 2                                                                           \
                                ? std::vector<std::pair<const char*, int>>{{"Tindices", 1}}                       \
                                : std::vector<std::pair<const char*, int>>{{"Tindices", 1}, {"Tnumsegments", 2}}, \
        .grad = Grad};                                                                                            \
    return def;                                                                                                   \
  }

}  // namespace

KILN_SEGMENT_ROW(UnsortedSegmentSum, 3, kPure, KILN_NUMERIC, &segment_sum_grad)
KILN_SEGMENT_ROW(UnsortedSegmentMax, 3, kPure, KILN_NUMERIC, &segment_min_max_grad)
KILN_SEGMENT_ROW(UnsortedSegmentMin, 3, kPure, KILN_NUMERIC, &segment_min_max_grad)
KILN_SEGMENT_ROW(UnsortedSegmentProd, 3, kPure, KILN_NUMERIC, &segment_prod_grad)
KILN_SEGMENT_ROW(SegmentSum, 2, kOwnOutputs, KILN_NUMERIC, &segment_sum_grad)
KILN_SEGMENT_ROW(SegmentMean, 2, kOwnOutputs, KILN_NUMERIC, &segment_mean_grad)
KILN_SEGMENT_ROW(SegmentMax, 2, kOwnOutputs, KILN_NUMERIC, &segment_min_max_grad)
KILN_SEGMENT_ROW(SegmentMin, 2, kOwnOutputs, KILN_NUMERIC, &segment_min_max_grad)
KILN_SEGMENT_ROW(SegmentProd, 2, kOwnOutputs, KILN_NUMERIC, &segment_prod_grad)

}  // namespace kiln::ops
