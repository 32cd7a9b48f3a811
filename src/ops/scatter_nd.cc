// Indexing by coordinate tuples: GatherNd reads the slices `indices` name, ScatterNd writes
// updates into zeros, and TensorScatterUpdate/Add/Sub/Max/Min write them into a copy of a
// tensor. indices has shape [..., r]: each innermost row is a coordinate into the first r
// dims, and the slice there (the remaining dims) is what moves. A coordinate outside the
// shape is an InvalidArgumentError naming it, as TensorFlow's CPU kernels report it.
#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

// The layout of one indexing: `count` coordinates of `depth` dims into `dims`, each naming a
// slice of `slice` elements.
struct NdIndex {
  int64_t count = 0, depth = 0, slice = 1;
  std::vector<int64_t> offsets;  // per coordinate: the slice's first element (in elements)
};

std::string coordinate_text(const std::vector<int64_t>& idx, int64_t k, int64_t depth) {
  std::string s = "[";
  for (int64_t j = 0; j < depth; ++j) s += (j ? ", " : "") + std::to_string(idx[k * depth + j]);
  return s + "]";
}
std::string flat_index_text(const Dims& index_dims, int64_t k) {
  // TensorFlow names a coordinate by its position among the rows: indices[1,0].
  std::string s;
  int64_t rest = k;
  for (int i = static_cast<int>(index_dims.size()) - 2; i >= 0; --i) {
    const int64_t d = index_dims[i] ? index_dims[i] : 1;
    s = std::to_string(rest % d) + (s.empty() ? "" : ",") + s;
    rest /= d;
  }
  return s.empty() ? "0" : s;
}

const int kPolicy = attr_index({{&op::GatherNd(), "bad_indices_policy"},
                                {&op::ScatterNd(), "bad_indices_policy"},
                                {&op::TensorScatterUpdate(), "bad_indices_policy"},
                                {&op::TensorScatterAdd(), "bad_indices_policy"},
                                {&op::TensorScatterSub(), "bad_indices_policy"},
                                {&op::TensorScatterMax(), "bad_indices_policy"},
                                {&op::TensorScatterMin(), "bad_indices_policy"}});

// bad_indices_policy: "" and DEFAULT (on CPU) and ERROR fail on a coordinate outside the
// shape; IGNORE skips it (a gather gives zeros there).
bool ignores_bad_indices(const KernelContext& c) {
  const std::string& p = c.attrs.s(kPolicy);
  if (p.empty() || p == "DEFAULT" || p == "ERROR") return false;
  if (p == "IGNORE") return true;
  c.fail("bad_indices_policy must be one of DEFAULT, ERROR, IGNORE, got '" + p + "'");
}

// Validates `indices` against `dims`; fails naming the first coordinate outside (what says
// how TensorFlow words it: "param shape" for GatherNd, "shape" for the scatters), or with
// IGNORE gives it the offset -1.
NdIndex nd_index(const KernelContext& c, const TensorImpl& indices, const Dims& dims, const char* what) {
  const bool ignore = ignores_bad_indices(c);
  if (indices.dims.empty()) c.fail("indices must be at least a vector, got shape " + dims_text(indices.dims));
  NdIndex ix;
  ix.depth = indices.dims.back();
  if (ix.depth > static_cast<int64_t>(dims.size()))
    c.fail("index innermost dimension length must be <= params rank; saw: " + std::to_string(ix.depth) + " vs. " +
           std::to_string(dims.size()));
  ix.count = ix.depth ? indices.num_elements / ix.depth : 0;
  if (ix.depth == 0) {
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < indices.dims.size(); ++i) rows *= indices.dims[i];
    ix.count = rows;
  }
  for (size_t i = static_cast<size_t>(ix.depth); i < dims.size(); ++i) ix.slice *= dims[i];
  const std::vector<int64_t> idx = int_values(indices);
  const Dims strides = strides_of(dims);
  ix.offsets.resize(static_cast<size_t>(ix.count));
  for (int64_t k = 0; k < ix.count; ++k) {
    int64_t off = 0;
    for (int64_t j = 0; j < ix.depth; ++j) {
      const int64_t v = idx[k * ix.depth + j];
      if ((v < 0 || v >= dims[j]) && ignore) {
        off = -1;
        break;
      }
      if (v < 0 || v >= dims[j])
        c.fail("indices[" + flat_index_text(indices.dims, k) + "] = " + coordinate_text(idx, k, ix.depth) +
               " does not index into " + what + " " + dims_text(dims));
      off += v * strides[j];
    }
    ix.offsets[static_cast<size_t>(k)] = off;
  }
  return ix;
}

// ---- validation, in TensorFlow's kernels' order and words ------------------------------

using Fail = std::function<void(const std::string&)>;

bool fully_known(const Dims& d) {
  return std::all_of(d.begin(), d.end(), [](int64_t x) { return x >= 0; });
}
int64_t count_of(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}
// Nothing to scatter, or somewhere to scatter it: TensorFlow's ValidEmptyOutputShape.
bool valid_empty(const Dims& out, const Dims& indices, const Dims& updates) {
  const int64_t ni = count_of(indices), nu = count_of(updates);
  return (ni == 0 && nu == 0) || (count_of(out) != 0 && ni != 0 && nu != 0);
}

// ScatterNd's checks, in its kernel's order and words: updates must have shape
// indices.shape[:-1] + out.shape[indices.shape[-1]:].
void validate_scatter_nd(const Fail& fail, const Dims& out, const Dims& indices, const Dims& updates) {
  if (indices.empty()) fail("Indices shape must have rank at least one. Found:" + dims_text(indices));
  if (updates.empty()) fail("Updates shape must have rank at least one. Found:" + dims_text(updates));
  if (!valid_empty(out, indices, updates)) fail("Indices and updates specified for empty output shape");
  const auto outer = static_cast<int64_t>(indices.size()) - 1;
  const int64_t depth = indices.back();
  const auto urank = static_cast<int64_t>(updates.size()), rank = static_cast<int64_t>(out.size());
  bool prefix = urank >= outer;
  for (int64_t i = 0; prefix && i < outer; ++i) prefix = indices[i] == updates[i];
  if (!prefix)
    fail("Dimensions [0," + std::to_string(outer) + ") of indices[shape=" + dims_text(indices) +
         "] must match dimensions [0," + std::to_string(outer) + ") of updates[shape=" + dims_text(updates) + "]");
  bool suffix = depth <= rank && rank - depth == urank - outer;
  for (int64_t i = 0; suffix && i < urank - outer; ++i) suffix = out[depth + i] == updates[outer + i];
  if (!suffix)
    fail("Dimensions [" + std::to_string(depth) + "," + std::to_string(rank) + ") of input[shape=" + dims_text(out) +
         "] must match dimensions [" + std::to_string(outer) + "," + std::to_string(urank) +
         ") of updates[shape=" + dims_text(updates) + "]");
}

// The TensorScatter ops' checks, in their kernel's order and words.
void validate_tensor_scatter(const Fail& fail, const Dims& out, const Dims& indices, const Dims& updates) {
  if (indices.empty()) fail("Indices shape must have rank at least one. Found:" + dims_text(indices));
  const auto outer = static_cast<int64_t>(indices.size()) - 1;
  const auto urank = static_cast<int64_t>(updates.size()), rank = static_cast<int64_t>(out.size());
  for (int64_t i = 0; i < outer; ++i)
    if (i >= urank || indices[i] != updates[i])
      fail("Outer dimensions of indices and update must match. Indices shape: " + dims_text(indices) +
           ", updates shape:" + dims_text(updates));
  const int64_t depth = indices.back();
  if (urank - outer != rank - depth)
    fail("Inner dimensions of output shape must match inner dimensions of updates shape. Output: " + dims_text(out) +
         " updates: " + dims_text(updates));
  for (int64_t i = 0; i + outer < urank; ++i)
    if (updates[outer + i] != out[depth + i])
      fail("The inner " + std::to_string(rank - depth) + " dimensions of output.shape=" + dims_text(out) +
           " must match the inner " + std::to_string(urank - outer) +
           " dimensions of updates.shape=" + dims_text(updates));
  if (updates.empty()) fail("Updates shape must have rank at least one. Found:" + dims_text(updates));
  if (out.empty()) fail("Output must be at least 1-D, got shape: " + dims_text(out));
  if (!valid_empty(out, indices, updates)) fail("Indices and updates specified for empty output shape");
  if (updates[0] != indices[0])
    fail("Dimensions [0,1) of indices[shape=" + dims_text(indices) + "] = " + std::to_string(indices[0]) +
         " must match dimensions [0,1) of updates[shape=" + dims_text(updates) + "] = " + std::to_string(updates[0]));
}

void validate_scatter(const OpDef& op, const Fail& fail, const Dims& out, const Dims& indices, const Dims& updates) {
  if (&op == &op::ScatterNd())
    validate_scatter_nd(fail, out, indices, updates);
  else
    validate_tensor_scatter(fail, out, indices, updates);
}

// GatherNd's checks, in its kernel's order and words.
void validate_gather_nd(const Fail& fail, const Dims& params, const Dims& indices) {
  if (params.empty()) fail("params must be at least a vector");
  if (indices.empty()) fail("indices must be at least a vector");
  if (indices.back() > static_cast<int64_t>(params.size()))
    fail("index innermost dimension length must be <= params rank; saw: " + std::to_string(indices.back()) + " vs. " +
         std::to_string(params.size()));
  const int64_t coordinates = count_of(Dims(indices.begin(), indices.end() - 1));
  if (coordinates > 0 && count_of(params) == 0)
    fail("Requested more than 0 entries, but params is empty.  Params shape: " + dims_text(params));
}

// ---- GatherNd(params, indices) ----------------------------------------------------------

void infer_gather_nd(InferContext& c) {
  require_int_dtype(c, 1, "indices");
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  const InputInfo &p = c.in(0), &i = c.in(1);
  if (!p.unknown_rank && p.dims->empty()) c.fail("params must be at least a vector");
  if (!i.unknown_rank && i.dims->empty()) c.fail("indices must be at least a vector");
  if (p.unknown_rank || i.unknown_rank || i.dims->back() < 0) {
    c.out(0).shape = TensorShape::unknown();
    return;
  }
  const int64_t depth = i.dims->back();
  if (fully_known(*p.dims) && fully_known(*i.dims))
    validate_gather_nd([&](const std::string& m) { c.fail(m); }, *p.dims, *i.dims);
  else if (depth > static_cast<int64_t>(p.dims->size()))
    c.fail("index innermost dimension length must be <= params rank; saw: " + std::to_string(depth) + " vs. " +
           std::to_string(p.dims->size()));
  Dims out(i.dims->begin(), i.dims->end() - 1);
  for (size_t k = static_cast<size_t>(depth); k < p.dims->size(); ++k) out.push_back((*p.dims)[k]);
  c.out(0).shape = TensorShape(std::move(out));
}

template <class T>
struct GatherNdKernel {
  static void run(KernelContext& c) {
    const TensorImpl& p = c.in(0);
    validate_gather_nd([&](const std::string& m) { c.fail(m); }, p.dims, c.in(1).dims);
    const NdIndex ix = nd_index(c, c.in(1), p.dims, "param shape");
    const T* src = p.as<T>();
    T* dst = c.out(0).as<T>();
    for (int64_t k = 0; k < ix.count; ++k, dst += ix.slice) {
      const int64_t off = ix.offsets[static_cast<size_t>(k)];
      if (off < 0)
        std::fill_n(dst, ix.slice, T{});
      else
        std::copy_n(src + off, ix.slice, dst);
    }
  }
};

// ---- the scatters -----------------------------------------------------------------------

enum class Combine { kAssign, kAdd, kSub, kMax, kMin };
Combine combine_of(const OpDef& op) {
  if (&op == &op::TensorScatterUpdate()) return Combine::kAssign;
  if (&op == &op::TensorScatterSub()) return Combine::kSub;
  if (&op == &op::TensorScatterMax()) return Combine::kMax;
  if (&op == &op::TensorScatterMin()) return Combine::kMin;
  return Combine::kAdd;  // ScatterNd, TensorScatterAdd
}

void infer_scatter_nd(InferContext& c) {  // ScatterNd(indices, updates, shape)
  require_int_dtype(c, 0, "indices");
  if (c.in(2).dtype != c.in(0).dtype)
    c.fail("cannot compute ScatterNd as input #2(zero-based) was expected to be a " +
           std::string(tf_type_name(c.in(0).dtype)) + " tensor but is a " + tf_type_name(c.in(2).dtype) + " tensor");
  c.out(0).dtype = c.in(1).dtype;
  c.kernel_dtype = c.in(1).dtype;
  std::vector<int64_t> shape;
  if (!known_ints(c.in(2), &shape)) {
    c.out(0).shape = c.in(2).unknown_rank || c.in(2).dims->size() != 1 || (*c.in(2).dims)[0] < 0
                         ? TensorShape::unknown()
                         : TensorShape::unknown_dims(static_cast<int>((*c.in(2).dims)[0]));
    return;
  }
  for (int64_t d : shape)
    if (d < 0) c.fail("Dimension " + std::to_string(d) + " must be >= 0");
  detail::checked_num_elements(shape.data(), shape.size());
  const Dims out(shape);
  if (!c.in(0).unknown_rank && !c.in(1).unknown_rank && fully_known(*c.in(0).dims) && fully_known(*c.in(1).dims))
    validate_scatter_nd([&](const std::string& m) { c.fail(m); }, out, *c.in(0).dims, *c.in(1).dims);
  c.out(0).shape = TensorShape(shape);
}

void infer_tensor_scatter(InferContext& c) {  // (tensor, indices, updates)
  require_int_dtype(c, 1, "indices");
  require_same_dtypes(c, 0, 0);
  if (c.in(2).dtype != c.in(0).dtype)
    c.fail(std::string("cannot compute ") + c.op.name + " as input #2(zero-based) was expected to be a " +
           tf_type_name(c.in(0).dtype) + " tensor but is a " + tf_type_name(c.in(2).dtype) + " tensor");
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  c.out(0).shape = shape_of(c.in(0));
  bool known = true;
  for (int i = 0; i < 3; ++i) known = known && !c.in(i).unknown_rank && fully_known(*c.in(i).dims);
  if (known)
    validate_tensor_scatter([&](const std::string& m) { c.fail(m); }, *c.in(0).dims, *c.in(1).dims, *c.in(2).dims);
}

template <class T>
void combine_into(T* dst, const T* src, int64_t n, Combine how) {
  if constexpr (std::is_same_v<T, bool>) {  // only TensorScatterUpdate takes bools
    std::copy_n(src, n, dst);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    switch (how) {
      case Combine::kAssign:
        dst[i] = src[i];
        break;
      case Combine::kAdd:
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)  // wraps, as TensorFlow's integer kernels
          dst[i] = static_cast<T>(static_cast<std::make_unsigned_t<T>>(dst[i]) +
                                  static_cast<std::make_unsigned_t<T>>(src[i]));
        else
          dst[i] = static_cast<T>(dst[i] + src[i]);
        break;
      case Combine::kSub:
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
          dst[i] = static_cast<T>(static_cast<std::make_unsigned_t<T>>(dst[i]) -
                                  static_cast<std::make_unsigned_t<T>>(src[i]));
        else
          dst[i] = static_cast<T>(dst[i] - src[i]);
        break;
      case Combine::kMax:
        dst[i] = std::max(dst[i], src[i]);
        break;
      case Combine::kMin:
        dst[i] = std::min(dst[i], src[i]);
        break;
    }
  }
}

template <class T>
struct ScatterKernel {
  static void run(KernelContext& c) {
    const bool into_zeros = &c.op == &op::ScatterNd();
    const TensorImpl& indices = c.in(into_zeros ? 0 : 1);
    const TensorImpl& updates = c.in(into_zeros ? 1 : 2);
    TensorImpl& out = c.out(0);
    validate_scatter(
        c.op, [&](const std::string& m) { c.fail(m); }, out.dims, indices.dims, updates.dims);
    const NdIndex ix = nd_index(c, indices, out.dims, "shape");
    if (ix.count * ix.slice != updates.num_elements)
      c.fail("updates has " + std::to_string(updates.num_elements) + " elements for " + std::to_string(ix.count) +
             " slices of " + std::to_string(ix.slice));
    T* dst = out.as<T>();
    if (into_zeros)
      std::fill_n(dst, out.num_elements, T{});
    else if (out.data != c.in(0).data)
      std::copy_n(c.in(0).as<T>(), out.num_elements, dst);
    const Combine how = combine_of(c.op);
    const T* src = updates.as<T>();
    for (int64_t k = 0; k < ix.count; ++k, src += ix.slice)
      if (ix.offsets[static_cast<size_t>(k)] >= 0)
        combine_into(dst + ix.offsets[static_cast<size_t>(k)], src, ix.slice, how);
  }
};

// ---- gradients --------------------------------------------------------------------------

Tensor gather_nd(GradBuilder& b, const Tensor& x, const Tensor& indices) {
  return grad::emit1(b, op::GatherNd(), {&x, &indices}, Attrs{std::string()});
}
void gather_nd_grad(GradContext& c) {
  const Tensor shape = grad::cast(c.b, grad::shape(c.b, c.x[0]), c.x[1].dtype());
  c.dx[0] = grad::emit1(c.b, op::ScatterNd(), {&c.x[1], &c.dy[0], &shape}, Attrs{std::string()});
}
void scatter_nd_grad(GradContext& c) { c.dx[1] = gather_nd(c.b, c.dy[0], c.x[0]); }
void tensor_scatter_grad(GradContext& c) {
  const Combine how = combine_of(c.op);
  if (how == Combine::kMax || how == Combine::kMin) {
    // TensorFlow's: the gradient goes where the output equals each input.
    const Tensor taken = gather_nd(c.b, c.y[0], c.x[1]);
    const Tensor zeros = grad::zeros_like(c.b, c.dy[0]);
    c.dx[0] = grad::where(c.b, grad::equal(c.b, c.y[0], c.x[0]), c.dy[0], zeros);
    const Tensor dy_taken = gather_nd(c.b, c.dy[0], c.x[1]);
    c.dx[2] = grad::where(c.b, grad::equal(c.b, taken, c.x[2]), dy_taken, grad::zeros_like(c.b, dy_taken));
    return;
  }
  const Tensor taken = gather_nd(c.b, c.dy[0], c.x[1]);
  c.dx[2] = how == Combine::kSub ? grad::neg(c.b, taken) : taken;
  if (how == Combine::kAssign) {  // the overwritten elements took nothing from the tensor
    const Tensor zeros = grad::zeros_like(c.b, c.x[2]);
    c.dx[0] = grad::emit1(c.b, op::TensorScatterUpdate(), {&c.dy[0], &c.x[1], &zeros}, Attrs{std::string()});
  } else {
    c.dx[0] = c.dy[0];
  }
}

// The 16-bit floats scatter through float32 (kernels_for widens them), which is exact.
#define KILN_SCATTER_TYPES KILN_NUMERIC, KILN_STORAGE_INTS

}  // namespace

const OpDef& op::GatherNd() {
  static const OpDef def = {.name = "GatherNd",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"params", "indices"},
                            .traits = kTfjs | kMovesElements,
                            .attr_specs = {string_attr("bad_indices_policy", "")},
                            .infer = infer_gather_nd,
                            .kernels = kernels_for<GatherNdKernel, KILN_EVERY_TYPE>(),
                            .type_attr = "Tparams",
                            .index_type_attrs = {{"Tindices", 1}},
                            .grad = &gather_nd_grad};
  return def;
}

const OpDef& op::ScatterNd() {
  static const OpDef def = {.name = "ScatterNd",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"indices", "updates", "shape"},
                            .traits = kTfjs,
                            .attr_specs = {string_attr("bad_indices_policy", "")},
                            .infer = infer_scatter_nd,
                            .kernels = kernels_for<ScatterKernel, KILN_SCATTER_TYPES>(),
                            .type_attr_input = 1,
                            .index_type_attrs = {{"Tindices", 0}},
                            .grad = &scatter_nd_grad};
  return def;
}

#define KILN_TENSOR_SCATTER(Name, ...)                                               \
  const OpDef& op::Name() {                                                          \
    static const OpDef def = {.name = #Name,                                         \
                              .num_inputs = 3,                                       \
                              .num_outputs = 1,                                      \
                              .input_args = {"tensor", "indices", "updates"},        \
                              .attr_specs = {string_attr("bad_indices_policy", "")}, \
                              .infer = infer_tensor_scatter,                         \
                              .kernels = kernels_for<ScatterKernel, __VA_ARGS__>(),  \
                              .index_type_attrs = {{"Tindices", 1}},                 \
                              .grad = &tensor_scatter_grad};                         \
    return def;                                                                      \
  }
KILN_TENSOR_SCATTER(TensorScatterUpdate, bool, KILN_SCATTER_TYPES)
KILN_TENSOR_SCATTER(TensorScatterAdd, KILN_SCATTER_TYPES)
KILN_TENSOR_SCATTER(TensorScatterSub, KILN_SCATTER_TYPES)
KILN_TENSOR_SCATTER(TensorScatterMax, KILN_NUMERIC)
KILN_TENSOR_SCATTER(TensorScatterMin, KILN_NUMERIC)

}  // namespace kiln::ops
