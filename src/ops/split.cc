// Ops that cut one tensor into several along an axis: Split (equal parts), SplitV (given
// sizes, one of them possibly -1) and Unpack (every slice, the axis removed).
#include <cstring>
#include <functional>
#include <numeric>
#include <string>

#include "ops/batch_rows.h"
#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

const int kSplitNum = attr_index(op::Split(), "num_split");
const int kSplitVNum = attr_index(op::SplitV(), "num_split");
const int kUnpackNum = attr_index(op::Unpack(), "num");
const int kUnpackAxis = attr_index(op::Unpack(), "axis");

// Where each op keeps its value and axis.
struct SplitArgs {
  int value, axis;  // input positions; axis -1: an attr (Unpack)
};
SplitArgs args_of(const OpDef& op) {
  if (&op == &op::Split()) return {1, 0};
  if (&op == &op::SplitV()) return {0, 2};
  return {0, -1};
}

// The part sizes along the axis (for SplitV, -1 resolved), given the axis's size (-1 unknown:
// sizes stay unknown where they depend on it). Fails in TensorFlow's words.
std::vector<int64_t> part_sizes(const std::function<void(const std::string&)>& fail, const OpDef& op,
                                const Attrs& attrs, int64_t axis_size, const std::vector<int64_t>* size_splits) {
  if (&op == &op::Split()) {
    const int64_t n = attrs.i(kSplitNum);
    if (axis_size >= 0 && axis_size % n != 0)
      fail("Number of ways to split should evenly divide the split dimension, but got split_dim " +
           std::to_string(axis_size) + " (size = " + std::to_string(axis_size) + ") and num_split " +
           std::to_string(n));
    return std::vector<int64_t>(n, axis_size < 0 ? -1 : axis_size / n);
  }
  if (&op == &op::Unpack()) return std::vector<int64_t>(attrs.i(kUnpackNum), 1);
  const int64_t n = attrs.i(kSplitVNum);
  if (!size_splits) return std::vector<int64_t>(n, -1);
  std::vector<int64_t> sizes = *size_splits;
  if (static_cast<int64_t>(sizes.size()) != n)
    fail("size of the split_tensor must be 1-D and have the same elements as outputs got 1 -D and " +
         std::to_string(sizes.size()) + " elements");
  int unknown = -1;
  int64_t known = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (unknown >= 0) fail("There can only be one -1 in the input.");
      unknown = static_cast<int>(i);
    } else if (sizes[i] < 0) {
      fail("size_splits must be non-negative, got " + std::to_string(sizes[i]));
    } else if (__builtin_add_overflow(known, sizes[i], &known)) {
      fail("size_splits add up to more than int64 holds");
    }
  }
  if (axis_size < 0) return sizes;  // -1 stays unknown
  if (n == 1 && sizes[0] != -1 && sizes[0] != axis_size)
    fail("If there is only one output, it must have the same size as the input. Input size: " +
         std::to_string(axis_size) + " output size: " + std::to_string(sizes[0]));
  if (unknown >= 0 && known <= axis_size) sizes[unknown] = axis_size - known;
  if ((unknown < 0 && known != axis_size) || (unknown >= 0 && known > axis_size))
    fail(
        "Determined shape must either match input shape along split_dim exactly if fully specified, or be less "
        "than the size of the input along split_dim if not fully specified.  Got: " +
        std::to_string(known));
  return sizes;
}

void infer_split(InferContext& c) {
  const SplitArgs a = args_of(c.op);
  const InputInfo& v = c.in(a.value);
  const int64_t n = c.attrs.i(&c.op == &op::Split() ? kSplitNum : &c.op == &op::SplitV() ? kSplitVNum : kUnpackNum);
  if (n < (&c.op == &op::Unpack() ? 0 : 1))
    c.fail("Value for attr '" + std::string(&c.op == &op::Unpack() ? "num" : "num_split") + "' of " +
           std::to_string(n) + " must be at least minimum " + (&c.op == &op::Unpack() ? "0" : "1"));
  if (n > (int64_t{1} << 20)) c.fail("num_split of " + std::to_string(n) + " is too large");
  if (a.axis >= 0) require_int_dtype(c, a.axis, "axis");
  if (&c.op == &op::SplitV()) require_int_dtype(c, 1, "size_splits");
  c.set_num_outputs(static_cast<int>(n));
  c.kernel_dtype = v.dtype;
  for (int i = 0; i < n; ++i) c.out(i).dtype = v.dtype;
  // TensorFlow's kernel returns before checking anything when there is nothing to unpack.
  if (n == 0) return;
  if (&c.op == &op::SplitV() && !c.in(1).unknown_rank && c.in(1).dims->size() != 1)
    c.fail("size of the split_tensor must be 1-D and have the same elements as outputs got " +
           std::to_string(c.in(1).dims->size()) + " -D and " +
           std::to_string(c.in(1).value ? c.in(1).value->num_elements : -1) + " elements");
  if (&c.op == &op::Split() && !c.in(0).unknown_rank && !c.in(0).dims->empty())
    c.fail("split_dim must be a scalar but has rank " + std::to_string(c.in(0).dims->size()));
  std::vector<int64_t> axis_v;
  const bool axis_known = a.axis < 0 || known_ints(c.in(a.axis), &axis_v);
  if (v.unknown_rank || !axis_known) {
    const int rank = v.unknown_rank ? -1 : static_cast<int>(v.dims->size()) - (&c.op == &op::Unpack() ? 1 : 0);
    for (int i = 0; i < n; ++i) c.out(i).shape = rank < 0 ? TensorShape::unknown() : TensorShape::unknown_dims(rank);
    return;
  }
  const Dims& d = *v.dims;
  const auto rank = static_cast<int64_t>(d.size());
  int64_t axis;
  if (&c.op == &op::Unpack()) {
    axis = c.attrs.i(kUnpackAxis);
    if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
      c.fail("axis = " + std::to_string(axis) + " not in [" + std::to_string(-rank) + ", " + std::to_string(rank) +
             ")");
    if (axis < 0) axis += rank;
    if (rank == 0) c.fail("axis = 0 not in [0, 0)");
    if (d[axis] >= 0 && d[axis] != n)
      c.fail("Input shape axis " + std::to_string(axis) + " must equal " + std::to_string(n) + ", got shape " +
             dims_text(d));
  } else {
    if (axis_v.size() != 1) c.fail("axis must be a scalar");
    axis = axis_v[0];
    if (axis < -rank || axis >= rank)
      c.fail("-input rank(-" + std::to_string(rank) + ") <= split_dim < input rank (" + std::to_string(rank) +
             "), but got " + std::to_string(axis));
    if (axis < 0) axis += rank;
  }
  std::vector<int64_t> splits;
  const bool splits_known = &c.op != &op::SplitV() || known_ints(c.in(1), &splits);
  const std::vector<int64_t> sizes = part_sizes([&](const std::string& m) { c.fail(m); }, c.op, c.attrs, d[axis],
                                                splits_known && &c.op == &op::SplitV() ? &splits : nullptr);
  for (int i = 0; i < n; ++i) {
    Dims out = d;
    if (&c.op == &op::Unpack())
      out.erase_at(static_cast<size_t>(axis));
    else
      out[axis] = sizes[i];
    c.out(i).shape = TensorShape(std::move(out));
  }
}

template <class T>
struct SplitKernel {
  static void run(KernelContext& c) {
    const SplitArgs a = args_of(c.op);
    const TensorImpl& v = c.in(a.value);
    if (c.num_outputs == 0) return;
    if (&c.op == &op::SplitV() && c.in(1).dims.size() != 1) c.fail("size of the split_tensor must be 1-D");
    const auto rank = static_cast<int64_t>(v.dims.size());
    int64_t axis = a.axis < 0 ? c.attrs.i(kUnpackAxis) : int_values(c.in(a.axis)).at(0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) c.fail("axis is out of range");
    const std::vector<int64_t> splits = &c.op == &op::SplitV() ? int_values(c.in(1)) : std::vector<int64_t>{};
    const std::vector<int64_t> sizes = part_sizes([&](const std::string& m) { c.fail(m); }, c.op, c.attrs, v.dims[axis],
                                                  &c.op == &op::SplitV() ? &splits : nullptr);
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= v.dims[i];
    for (int64_t i = axis + 1; i < rank; ++i) inner *= v.dims[i];
    // Checked again here: a graph's static output shapes do not prove the sizes were seen.
    if (std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) != v.dims[axis] ||
        static_cast<int>(sizes.size()) != c.num_outputs)
      c.fail("the parts do not add up to the split dimension");
    for (int k = 0; k < c.num_outputs; ++k)
      if (c.out(k).num_elements != outer * sizes[k] * inner) c.fail("an output's shape does not match its part");
    const T* src = v.as<T>();
    const int64_t row = v.dims[axis] * inner;
    int64_t offset = 0;
    for (int k = 0; k < c.num_outputs; ++k) {
      T* dst = c.out(k).as<T>();
      const int64_t part = sizes[k] * inner;
      for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + o * part, src + o * row + offset, part * sizeof(T));
      offset += part;
    }
  }
};

// ---- gradients: the parts joined back; a part nothing used contributes zeros ----
using namespace grad;  // NOLINT: the shorthands read as math
std::vector<Tensor> parts_or_zeros(GradContext& c) {
  std::vector<Tensor> parts;
  for (size_t i = 0; i < c.dy.size(); ++i) parts.push_back(c.dy[i].defined() ? c.dy[i] : zeros_like(c.b, c.y[i]));
  return parts;
}
Tensor join(GradContext& c, const OpDef& op, std::vector<Tensor> parts, const Tensor* axis, Attrs attrs) {
  std::vector<const Tensor*> in;
  for (const Tensor& p : parts) in.push_back(&p);
  if (axis) in.push_back(axis);
  return c.b.emit(op, in.data(), static_cast<int>(in.size()), with_defaults(op, std::move(attrs)))[0];
}
void split_grad(GradContext& c) {
  const SplitArgs a = args_of(c.op);
  std::vector<Tensor> parts = parts_or_zeros(c);
  const auto n = static_cast<int64_t>(parts.size());
  if (n == 1) {
    c.dx[a.value] = parts[0];
    return;
  }
  c.dx[a.value] = join(c, op::ConcatV2(), std::move(parts), &c.x[a.axis], Attrs{n});
}
void unpack_grad(GradContext& c) {
  std::vector<Tensor> parts = parts_or_zeros(c);
  const auto n = static_cast<int64_t>(parts.size());
  c.dx[0] = join(c, op::Pack(), std::move(parts), nullptr, Attrs{n, c.attrs.i(kUnpackAxis)});
}

// Cut along an axis other than the batch's, every part keeps the rows.
RowKind split_rows(const RowsContext& c) {
  const SplitArgs a = args_of(c.op);
  const int rank = c.rank(a.value);
  if (c.sized() || !c.rows(a.value) || rank < 1) return RowKind::kOther;
  for (int i = 0; i < c.num_inputs; ++i)
    if (i != a.value && !c.free(i)) return RowKind::kOther;
  std::vector<int64_t> axis;
  if (a.axis < 0)
    axis = {c.attrs.i(kUnpackAxis)};
  else if (!c.ints(a.axis, axis) || axis.size() != 1)
    return RowKind::kOther;
  return touches_batch(axis, rank) ? RowKind::kOther : RowKind::kRows;
}

}  // namespace

const OpDef& op::Split() {
  static const OpDef def = {.name = "Split",
                            .num_inputs = 2,
                            .num_outputs = -1,
                            .input_args = {renamed_arg("split_dim", "axis"), "value"},
                            .traits = kTfjs | kMovesElements,
                            .attr_specs = {int_attr("num_split")},
                            .infer = infer_split,
                            .kernels = kernels_for<SplitKernel, KILN_EVERY_TYPE>(),
                            .type_attr_input = 1,
                            .grad = &split_grad,
                            .rows = &split_rows};
  return def;
}

const OpDef& op::SplitV() {
  static const OpDef def = {.name = "SplitV",
                            .num_inputs = 3,
                            .num_outputs = -1,
                            .input_args = {"value", "size_splits", "axis"},
                            .traits = kTfjs | kMovesElements,
                            .attr_specs = {int_attr("num_split")},
                            .infer = infer_split,
                            .kernels = kernels_for<SplitKernel, KILN_EVERY_TYPE>(),
                            .index_type_attrs = {{"Tlen", 1}},
                            .grad = &split_grad,
                            .rows = &split_rows};
  return def;
}

const OpDef& op::Unpack() {
  static const OpDef def = {.name = "Unpack",
                            .num_inputs = 1,
                            .num_outputs = -1,
                            .input_args = {"value"},
                            .traits = kTfjs | kMovesElements,
                            .attr_specs = {int_attr("num"), int_attr("axis", 0)},
                            .infer = infer_split,
                            .kernels = kernels_for<SplitKernel, KILN_EVERY_TYPE>(),
                            .grad = &unpack_grad,
                            .rows = &split_rows};
  return def;
}

}  // namespace kiln::ops
