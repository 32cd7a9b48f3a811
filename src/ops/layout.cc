// Ops that move data: Transpose, ConcatV2, Pack, Tile.
#include <cstring>

#include "core/parallel.h"
#include "ops/batch_rows.h"
#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"
#include "ops/strided_copy.h"

namespace kiln::ops {
namespace {

const int kPackAxis = attr_index(op::Pack(), "axis");

// Transpose(x, perm).
void infer_transpose(InferContext& c) {
  require_int_dtype(c, 1, "perm");
  if (!c.in(1).unknown_rank && c.in(1).dims->size() != 1)
    c.fail("perm must be rank 1, got shape " + dims_text(*c.in(1).dims));
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  std::vector<int64_t> perm;
  if (c.in(0).unknown_rank || !known_ints(c.in(1), &perm)) {
    c.out(0).shape = c.in(0).unknown_rank ? TensorShape::unknown()
                                          : TensorShape::unknown_dims(static_cast<int>(c.in(0).dims->size()));
    return;
  }
  const Dims& d = *c.in(0).dims;
  if (perm.size() != d.size())
    c.fail("transpose expects a vector of size " + std::to_string(d.size()) + ". But input(1) is a vector of size " +
           std::to_string(perm.size()));
  std::vector<bool> seen(d.size(), false);
  Dims out;
  const auto r = static_cast<int64_t>(d.size());
  for (int64_t p : perm) {
    if (p < 0) p += r;  // negative entries count from the end, as TensorFlow's do
    if (p < 0 || p >= r) c.fail(std::to_string(p) + " is out of range [0 .. " + std::to_string(r) + ")");
    if (seen[p]) c.fail(std::to_string(p) + " is duplicated in the input.");
    seen[p] = true;
    out.push_back(d[p]);
  }
  c.out(0).shape = TensorShape(std::move(out));
}
template <class T>
struct TransposeKernel {
  static void run(KernelContext& c) {
    const TensorImpl& x = c.in(0);
    TensorImpl& y = c.out(0);
    std::vector<int64_t> perm = int_values(c.in(1));
    const size_t r = perm.size();
    // Checked again here: a graph's static output shape does not prove perm was seen.
    if (r != x.dims.size())
      c.fail("transpose expects a vector of size " + std::to_string(x.dims.size()) +
             ". But input(1) is a vector of size " + std::to_string(r));
    std::vector<char> seen(r, 0);
    const auto rank = static_cast<int64_t>(r);
    for (size_t i = 0; i < r; ++i) {
      if (perm[i] < 0) perm[i] += rank;
      if (perm[i] < 0 || perm[i] >= rank)
        c.fail(std::to_string(perm[i]) + " is out of range [0 .. " + std::to_string(rank) + ")");
      if (seen[perm[i]]) c.fail(std::to_string(perm[i]) + " is duplicated in the input.");
      seen[perm[i]] = 1;
    }
    for (size_t i = 0; i < r; ++i)
      if (c.out(0).dims[i] != x.dims[perm[i]]) c.fail("the output's shape does not match the permutation");
    const Dims st = strides_of(x.dims);
    std::vector<int64_t> sizes(r), strides(r);
    for (size_t i = 0; i < r; ++i) {
      sizes[i] = y.dims[i];
      strides[i] = st[perm[i]];
    }
    // Collapsed, an identity permutation (or one that moves only dims of size 1) is one copy,
    // and one that keeps the innermost dim copies runs. From 256 KB the runs split over the
    // intra-op threads (a recurrent layer's batch-major sequence made time-major, 1.6 MB for
    // an LSTM classifier at batch 32, had left the second core waiting).
    const StridedWalk walk = collapse_walk(sizes.data(), strides.data(), r);
    const int64_t rows = walk_rows(walk);
    constexpr int64_t kParallelBytes = int64_t{256} << 10;
    if (walk.contiguous() || walk.is_matrix_transpose() ||
        walk.total * static_cast<int64_t>(sizeof(T)) < kParallelBytes || rows < 2) {
      strided_copy(x.as<T>(), walk, y.as<T>());
      return;
    }
    const int64_t row_bytes = walk.total / rows * static_cast<int64_t>(sizeof(T));
    parallel_for(rows, std::max<int64_t>(1, (int64_t{64} << 10) / row_bytes),
                 [&](int64_t lo, int64_t hi) { strided_copy_rows(x.as<T>(), walk, y.as<T>(), lo, hi); });
  }
};

// Copies n inputs into an output, joining along `axis` (shared by ConcatV2 and Pack). The
// output splits over the intra-op threads by element ranges: a single thread copying
// DenseNet's growing concatenations left the other core waiting (9% of a two-thread profile).
template <class T>
void join(const KernelContext& c, int n, int64_t axis, const TensorImpl& out) {
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= out.dims[i];
  T* dst = const_cast<TensorImpl&>(out).as<T>();
  std::vector<int64_t> chunk(n);
  int64_t row = 0;  // output elements per outer index: every input's chunk once
  for (int k = 0; k < n; ++k) row += chunk[k] = outer == 0 ? 0 : c.in(k).num_elements / outer;
  if (row == 0) return;
  constexpr int64_t kParallelBytes = int64_t{256} << 10;
  parallel_for(outer * row, std::max<int64_t>(2, kParallelBytes / static_cast<int64_t>(sizeof(T))),
               [&](int64_t lo, int64_t hi) {
                 // Output element lo is input k's element (lo / row) * chunk[k] + at.
                 int64_t o = lo / row, at = lo % row;
                 int k = 0;
                 while (at >= chunk[k]) at -= chunk[k++];
                 while (lo < hi) {
                   const int64_t len = std::min(chunk[k] - at, hi - lo);
                   std::memcpy(dst + lo, c.in(k).as<T>() + o * chunk[k] + at, len * sizeof(T));
                   lo += len;
                   at = 0;
                   do {
                     if (++k == n) k = 0, ++o;
                   } while (chunk[k] == 0 && lo < hi);
                 }
               });
}

// ConcatV2(values..., axis): attr N.
void infer_concat(InferContext& c) {
  const int n = c.num_inputs - 1;
  if (n < 2) c.fail("Value for attr 'N' of " + std::to_string(n) + " must be at least minimum 2");
  require_same_dtypes(c, 0, n - 1);
  require_int_dtype(c, n, "axis");
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  std::vector<int64_t> axis_v;
  int rank = -1;
  for (int i = 0; i < n; ++i)
    if (!c.in(i).unknown_rank) rank = static_cast<int>(c.in(i).dims->size());
  if (rank < 0 || !known_ints(c.in(n), &axis_v)) {
    c.out(0).shape = rank < 0 ? TensorShape::unknown() : TensorShape::unknown_dims(static_cast<int>(rank));
    return;
  }
  if (axis_v.size() != 1)
    c.fail("Concat dim tensor should be a scalar integer, but got shape " + dims_text(*c.in(n).dims));
  if (rank == 0) c.fail("Can't concatenate scalars (use tf.stack instead)");
  const int64_t axis = normalize_axis(c, axis_v[0], rank);
  Dims out(rank, 0);
  for (int i = 0; i < n; ++i) {
    if (c.in(i).unknown_rank) {
      out[axis] = -1;
      continue;
    }
    const Dims& d = *c.in(i).dims;
    if (static_cast<int>(d.size()) != rank)
      c.fail("ConcatOp : Ranks of all input tensors should match: shape[0] = " + dims_text(*c.in(0).dims) +
             " vs. shape[" + std::to_string(i) + "] = " + dims_text(d));
    for (int j = 0; j < rank; ++j) {
      if (j == axis) {
        out[j] = (out[j] < 0 || d[j] < 0) ? -1 : out[j] + d[j];
      } else if (i == 0 || out[j] < 0) {
        out[j] = d[j];
      } else if (d[j] >= 0 && d[j] != out[j]) {
        c.fail("ConcatOp : Dimension " + std::to_string(j) + " in both shapes must be equal: shape[0] = " +
               dims_text(*c.in(0).dims) + " vs. shape[" + std::to_string(i) + "] = " + dims_text(d));
      }
    }
  }
  c.out(0).shape = TensorShape(std::move(out));
}
template <class T>
struct ConcatKernel {
  static void run(KernelContext& c) {
    const int n = c.num_inputs - 1;
    int64_t axis = int_values(c.in(n))[0];
    if (axis < 0) axis += static_cast<int64_t>(c.out(0).dims.size());
    join<T>(c, n, axis, c.out(0));
  }
};

// Pack(values...): attrs (N, axis).
void infer_pack(InferContext& c) {
  const int n = c.num_inputs;
  if (n < 1) c.fail("Pack needs at least one value");
  require_same_dtypes(c, 0, n - 1);
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  // The dims every input agrees on, -1 where none is known yet; unknown rank until one is.
  bool rank_known = false;
  Dims common;
  for (int i = 0; i < n; ++i) {
    if (c.in(i).unknown_rank) continue;
    const Dims& s = *c.in(i).dims;
    if (!rank_known) {
      common = s;
      rank_known = true;
      continue;
    }
    const auto mismatch = [&] {
      c.fail("Shapes of all inputs must match: values[0].shape = " + shape_text(shape_of(c.in(0))) + " != values[" +
             std::to_string(i) + "].shape = " + dims_text(s));
    };
    if (s.size() != common.size()) mismatch();
    for (size_t j = 0; j < s.size(); ++j) {
      if (common[j] < 0)
        common[j] = s[j];
      else if (s[j] >= 0 && s[j] != common[j])
        mismatch();
    }
  }
  if (!rank_known) {
    c.out(0).shape = TensorShape::unknown();
    return;
  }
  const int64_t axis = normalize_axis(c, c.attrs.i(kPackAxis), static_cast<int64_t>(common.size()) + 1);
  common.insert_at(static_cast<size_t>(axis), n);
  c.out(0).shape = TensorShape(std::move(common));
}
template <class T>
struct PackKernel {
  static void run(KernelContext& c) {
    int64_t axis = c.attrs.i(kPackAxis);
    if (axis < 0) axis += static_cast<int64_t>(c.out(0).dims.size());
    join<T>(c, c.num_inputs, axis, c.out(0));
  }
};

// Tile(input, multiples).
void infer_tile(InferContext& c) {
  require_int_dtype(c, 1, "multiples");
  if (!c.in(1).unknown_rank && c.in(1).dims->size() != 1)
    c.fail("Expected multiples to be 1-D, but got shape " + dims_text(*c.in(1).dims));
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  std::vector<int64_t> m;
  if (c.in(0).unknown_rank || !known_ints(c.in(1), &m)) {
    c.out(0).shape = c.in(0).unknown_rank ? TensorShape::unknown()
                                          : TensorShape::unknown_dims(static_cast<int>(c.in(0).dims->size()));
    return;
  }
  const Dims& d = *c.in(0).dims;
  if (m.size() != d.size())
    c.fail("Expected multiples argument to be a vector of length " + std::to_string(d.size()) + " but got length " +
           std::to_string(m.size()));
  Dims dims;
  for (size_t i = 0; i < d.size(); ++i) {
    if (m[i] < 0) c.fail("Expected multiples[" + std::to_string(i) + "] >= 0, but got " + std::to_string(m[i]));
    dims.push_back(d[i] < 0 ? -1 : checked_mul(d[i], m[i], "the tiled shape"));
  }
  c.out(0).shape = TensorShape(std::move(dims));
  if (c.out(0).shape.is_fully_defined()) detail::checked_num_elements(c.out(0).shape.dims().data(), d.size());
}
template <class T>
struct TileKernel {
  static void run(KernelContext& c) {
    const TensorImpl& x = c.in(0);
    TensorImpl& y = c.out(0);
    const size_t r = x.dims.size();
    // Checked again here: a scalar's output shape is static before multiples are known.
    const std::vector<int64_t> m = int_values(c.in(1));
    if (m.size() != r)
      c.fail("Expected multiples argument to be a vector of length " + std::to_string(r) + " but got length " +
             std::to_string(m.size()));
    for (size_t i = 0; i < r; ++i)
      if (m[i] < 0 || y.dims[i] != x.dims[i] * m[i]) c.fail("Expected multiples[" + std::to_string(i) + "] >= 0");
    const Dims xs = strides_of(x.dims);
    const T* src = x.as<T>();
    T* dst = y.as<T>();
    Dims idx(r, 0);
    for (int64_t o = 0; o < y.num_elements; ++o) {
      int64_t off = 0;
      for (size_t i = 0; i < r; ++i) off += (idx[i] % x.dims[i]) * xs[i];
      dst[o] = src[off];
      for (int i = static_cast<int>(r) - 1; i >= 0; --i) {
        if (++idx[i] < y.dims[i]) break;
        idx[i] = 0;
      }
    }
  }
};

// ---- gradients ----
void transpose_grad(GradContext& c) {
  const std::vector<int64_t> perm = grad::known_input_ints(c, 1, "perm");
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  c.dx[0] = grad::transpose(c.b, c.dy[0], inverse);
}
// Each input gets its own slab of dy along the axis.
void concat_grad(GradContext& c) {
  const int n = static_cast<int>(c.x.size()) - 1;
  Dims d0;
  if (!grad::static_dims(c.x[0], &d0)) throw UnimplementedError("The gradient of ConcatV2 needs inputs of known rank");
  int64_t axis = grad::known_input_ints(c, n, "axis")[0];
  const int64_t rank = static_cast<int64_t>(d0.size());
  if (axis < 0) axis += rank;
  int64_t offset = 0;
  for (int i = 0; i < n; ++i) {
    Dims d;
    grad::static_dims(c.x[i], &d);
    if (d[axis] < 0)
      throw UnimplementedError("The gradient of ConcatV2 needs each input's size along the axis to be known");
    if (c.needs[i]) {
      std::vector<int64_t> begin(rank, 0), size(rank, -1);
      begin[axis] = offset;
      size[axis] = d[axis];
      const Tensor b = grad::ints(c.b, begin), s = grad::ints(c.b, size);
      c.dx[i] = grad::emit1(c.b, op::Slice(), {&c.dy[0], &b, &s});
    }
    offset += d[axis];
  }
}
// Input i is dy's slice i along the packed axis.
void pack_grad(GradContext& c) {
  Dims d;
  if (!grad::static_dims(c.dy[0], &d)) throw UnimplementedError("The gradient of Pack needs a result of known rank");
  const int64_t rank = static_cast<int64_t>(d.size());
  int64_t axis = c.attrs.i(kPackAxis);
  if (axis < 0) axis += rank;
  const int64_t all = (int64_t{1} << rank) - 1, others = all & ~(int64_t{1} << axis);
  const Tensor strides = grad::ints(c.b, std::vector<int64_t>(rank, 1));
  for (size_t i = 0; i < c.x.size(); ++i) {
    if (!c.needs[i]) continue;
    std::vector<int64_t> begin(rank, 0), end(rank, 0);
    begin[axis] = static_cast<int64_t>(i);
    end[axis] = static_cast<int64_t>(i) + 1;
    const Tensor b = grad::ints(c.b, begin), e = grad::ints(c.b, end);
    c.dx[i] = grad::emit1(c.b, op::StridedSlice(), {&c.dy[0], &b, &e, &strides},
                          Attrs{others, others, int64_t{0}, int64_t{0}, int64_t{1} << axis});
  }
}
// dy viewed as [m0, d0, m1, d1, ...], summed over the copies.
void tile_grad(GradContext& c) {
  Dims d;
  if (!grad::static_dims(c.x[0], &d) || std::any_of(d.begin(), d.end(), [](int64_t v) { return v < 0; }))
    throw UnimplementedError("The gradient of Tile needs an input of known shape");
  const std::vector<int64_t> m = grad::known_input_ints(c, 1, "multiples");
  std::vector<int64_t> split, axes;
  for (size_t i = 0; i < d.size(); ++i) {
    axes.push_back(static_cast<int64_t>(split.size()));
    split.push_back(m[i]);
    split.push_back(d[i]);
  }
  const Tensor s = grad::ints(c.b, split);
  c.dx[0] = grad::sum(c.b, grad::emit1(c.b, op::Reshape(), {&c.dy[0], &s}), axes, false);
}

// A permutation that keeps axis 0 first.
RowKind transpose_rows(const RowsContext& c) {
  std::vector<int64_t> perm;
  return !c.sized() && c.rows(0) && c.free(1) && c.ints(1, perm) && !perm.empty() && perm[0] == 0 ? RowKind::kRows
                                                                                                  : RowKind::kOther;
}

// Batched values joined along another axis; or, the way Keras's Reshape layer builds its
// target, [batch size, other dims...] joined along axis 0: a shape led by the batch size.
RowKind concat_rows(const RowsContext& c) {
  const int axis_input = c.num_inputs - 1;
  std::vector<int64_t> axis;
  if (!c.free(axis_input) || !c.ints(axis_input, axis) || axis.size() != 1) return RowKind::kOther;
  if (c.sized()) {
    if (axis[0] != 0 || !c.is(0, RowKind::kRowsShape)) return RowKind::kOther;
    for (int i = 1; i < axis_input; ++i)
      if (!c.free(i)) return RowKind::kOther;
    return RowKind::kRowsShape;
  }
  if (touches_batch(axis, c.out_rank)) return RowKind::kOther;
  for (int i = 0; i < axis_input; ++i)
    if (!c.rows(i)) return RowKind::kOther;
  return RowKind::kRows;
}

// [batch size, other dims...] packed along axis 0: a shape led by the batch size.
RowKind pack_rows(const RowsContext& c) {
  if (c.attrs.i(kPackAxis) != 0 || !c.is(0, RowKind::kBatchSize)) return RowKind::kOther;
  for (int i = 1; i < c.num_inputs; ++i)
    if (!c.free(i)) return RowKind::kOther;
  return RowKind::kRowsShape;
}

}  // namespace

const OpDef& op::Transpose() {
  static const OpDef def = {.name = "Transpose",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"x", "perm"},
                            .traits = kPure | kTfjs | kMovesElements,
                            .infer = infer_transpose,
                            .kernels = kernels_for<TransposeKernel, KILN_EVERY_TYPE>(),
                            .index_type_attrs = {{"Tperm", 1}},
                            .grad = &transpose_grad,
                            .rows = &transpose_rows,
                            .output_args = {"y"}};
  return def;
}
const OpDef& op::ConcatV2() {
  static const OpDef def = {.name = "ConcatV2",
                            .num_inputs = -1,
                            .num_outputs = 1,
                            .input_args = {list_arg("values", "N"), "axis"},
                            .traits = kPure | kTfjs | kMovesElements,
                            .attr_specs = {int_attr("N")},
                            .infer = infer_concat,
                            .kernels = kernels_for<ConcatKernel, KILN_EVERY_TYPE>(),
                            .index_type_attrs = {{"Tidx", -1}},
                            .grad = &concat_grad,
                            .rows = &concat_rows};
  return def;
}
const OpDef& op::Pack() {
  static const OpDef def = {.name = "Pack",
                            .num_inputs = -1,
                            .num_outputs = 1,
                            .input_args = {list_arg("values", "N")},
                            .traits = kPure | kTfjs | kMovesElements,
                            .attr_specs = {int_attr("N"), int_attr("axis", 0)},
                            .infer = infer_pack,
                            .kernels = kernels_for<PackKernel, KILN_EVERY_TYPE>(),
                            .grad = &pack_grad,
                            .rows = &pack_rows};
  return def;
}
const OpDef& op::Tile() {
  static const OpDef def = {.name = "Tile",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"input", "multiples"},
                            .traits = kPure | kTfjs | kMovesElements,
                            .infer = infer_tile,
                            .kernels = kernels_for<TileKernel, KILN_EVERY_TYPE>(),
                            .index_type_attrs = {{"Tmultiples", 1}},
                            .grad = &tile_grad};
  return def;
}

}  // namespace kiln::ops
