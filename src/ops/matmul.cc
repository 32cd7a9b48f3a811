// MatMul (rank 2, transpose_a/b) and BatchMatMulV2 (batch dims broadcast, adj_x/adj_y).
#include <algorithm>

#include "kernels/gemm.h"
#include "ops/batch_rows.h"
#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

// MatMul's transpose_a/b and BatchMatMulV2's adj_x/y: the same flags at the same places,
// read by shared code.
const int kTransposeA =
    attr_index({{&op::MatMul(), "transpose_a"}, {&op::BatchMatMulV2(), "adj_x"}, {&op::BatchMatMulV3(), "adj_x"}});
const int kTransposeB =
    attr_index({{&op::MatMul(), "transpose_b"}, {&op::BatchMatMulV2(), "adj_y"}, {&op::BatchMatMulV3(), "adj_y"}});
const int kTout = attr_index(op::BatchMatMulV3(), "Tout");

void check_numeric(const InferContext& c) {
  require_same_dtypes(c, 0, 1);
  if (c.in(0).dtype == DType::Bool) c.fail("MatMul does not support bool tensors");
}

// MatMul: attrs (transpose_a, transpose_b).
void infer_matmul(InferContext& c) {
  check_numeric(c);
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  const bool ta = c.attrs.b(kTransposeA), tb = c.attrs.b(kTransposeB);
  for (int i = 0; i < 2; ++i)
    if (!c.in(i).unknown_rank && c.in(i).dims->size() != 2)
      c.fail("In[" + std::to_string(i) + "] is not a matrix. Instead it has shape " + dims_text(*c.in(i).dims));
  int64_t m = -1, ka = -1, kb = -1, n = -1;
  if (!c.in(0).unknown_rank) {
    const Dims& a = *c.in(0).dims;
    m = ta ? a[1] : a[0];
    ka = ta ? a[0] : a[1];
  }
  if (!c.in(1).unknown_rank) {
    const Dims& b = *c.in(1).dims;
    kb = tb ? b[1] : b[0];
    n = tb ? b[0] : b[1];
  }
  if (ka >= 0 && kb >= 0 && ka != kb)
    c.fail("Matrix size-incompatible: In[0]: " + dims_text(*c.in(0).dims) + ", In[1]: " + dims_text(*c.in(1).dims));
  c.out(0).shape = TensorShape(Dims{m, n});
}

template <class T>
struct MatMulKernel {
  static void run(KernelContext& c) {
    const TensorImpl& a = c.in(0);
    const TensorImpl& b = c.in(1);
    const bool ta = c.attrs.b(kTransposeA), tb = c.attrs.b(kTransposeB);
    const int64_t m = c.out(0).dims[0], n = c.out(0).dims[1];
    const int64_t k = ta ? a.dims[0] : a.dims[1];
    kernels::gemm<T>(ta, tb, m, n, k, a.as<T>(), b.as<T>(), c.out(0).as<T>());
  }
};

// BatchMatMulV2: attrs (adj_x, adj_y). Ranks >= 2; leading dims broadcast.
void infer_batch_matmul(InferContext& c) {
  check_numeric(c);
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  if (c.in(0).unknown_rank || c.in(1).unknown_rank) {
    c.out(0).shape = TensorShape::unknown();
    return;
  }
  const Dims& a = *c.in(0).dims;
  const Dims& b = *c.in(1).dims;
  if (a.size() < 2 || b.size() < 2)
    c.fail("In[0] and In[1] must have rank >= 2, got shapes " + dims_text(a) + " and " + dims_text(b));
  const bool ax = c.attrs.b(kTransposeA), ay = c.attrs.b(kTransposeB);
  const int64_t m = ax ? a[a.size() - 1] : a[a.size() - 2];
  const int64_t ka = ax ? a[a.size() - 2] : a[a.size() - 1];
  const int64_t kb = ay ? b[b.size() - 1] : b[b.size() - 2];
  const int64_t n = ay ? b[b.size() - 2] : b[b.size() - 1];
  if (ka >= 0 && kb >= 0 && ka != kb)
    c.fail("Matrix size-incompatible: In[0]: " + dims_text(a) + ", In[1]: " + dims_text(b));
  Dims ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  const InputInfo ia{c.in(0).dtype, &ba, false, nullptr}, ib{c.in(1).dtype, &bb, false, nullptr};
  Dims batch = broadcast_shapes(c, ia, ib).dims();
  batch.push_back(m);
  batch.push_back(n);
  c.out(0).shape = TensorShape(std::move(batch));
}

template <class T>
struct BatchMatMulKernel {
  static void run(KernelContext& c) {
    const TensorImpl& a = c.in(0);
    const TensorImpl& b = c.in(1);
    TensorImpl& out = c.out(0);
    const bool ax = c.attrs.b(kTransposeA), ay = c.attrs.b(kTransposeB);
    const size_t ra = a.dims.size(), rb = b.dims.size(), ro = out.dims.size();
    const int64_t m = out.dims[ro - 2], n = out.dims[ro - 1];
    const int64_t k = ax ? a.dims[ra - 2] : a.dims[ra - 1];
    const int64_t a_mat = a.dims[ra - 2] * a.dims[ra - 1], b_mat = b.dims[rb - 2] * b.dims[rb - 1];
    // Batch index -> operand batch offsets, by broadcasting the leading dims.
    Dims out_batch(out.dims.begin(), out.dims.end() - 2);
    Dims a_batch(a.dims.begin(), a.dims.end() - 2), b_batch(b.dims.begin(), b.dims.end() - 2);
    int64_t batches = 1, a_count = 1, b_count = 1;
    for (int64_t d : out_batch) batches *= d;
    for (int64_t d : a_batch) a_count *= d;
    for (int64_t d : b_batch) b_count *= d;
    // One matrix on the right for every batch, and x's rows in place: the batch is one
    // product of batches * m rows (an input projection over a whole sequence at once),
    // which the blocked gemm runs far faster than `batches` small ones.
    if (!ax && b_count == 1 && a_count == batches) {
      kernels::gemm<T>(false, ay, batches * m, n, k, a.as<T>(), b.as<T>(), out.as<T>());
      return;
    }
    const Dims os = strides_of(out_batch);
    for (int64_t i = 0; i < batches; ++i) {
      int64_t ia = 0, ib = 0, sa = 1, sb = 1;
      for (int d = static_cast<int>(out_batch.size()) - 1; d >= 0; --d) {
        const int64_t idx = (i / os[d]) % out_batch[d];
        const int ja = d - static_cast<int>(out_batch.size() - a_batch.size());
        const int jb = d - static_cast<int>(out_batch.size() - b_batch.size());
        if (ja >= 0) {
          if (a_batch[ja] != 1) ia += idx * sa;
          sa *= a_batch[ja];
        }
        if (jb >= 0) {
          if (b_batch[jb] != 1) ib += idx * sb;
          sb *= b_batch[jb];
        }
      }
      kernels::gemm<T>(ax, ay, m, n, k, a.as<T>() + ia * a_mat, b.as<T>() + ib * b_mat, out.as<T>() + i * m * n);
    }
  }
};

// m * n * k multiply-adds (batch dims included).
int64_t matmul_cost(const InputInfo* in, int, const Attrs& attrs) {
  if (in[0].unknown_rank || in[1].unknown_rank) return 0;
  const Dims& a = *in[0].dims;
  const Dims& b = *in[1].dims;
  if (a.size() < 2 || b.size() < 2) return 0;
  const bool ta = attrs.b(kTransposeA), tb = attrs.b(kTransposeB);
  int64_t batch = 1;
  for (size_t i = 0; i + 2 < a.size(); ++i) batch *= std::max<int64_t>(a[i], 1);
  const int64_t m = ta ? a[a.size() - 1] : a[a.size() - 2], k = ta ? a[a.size() - 2] : a[a.size() - 1];
  const int64_t n = tb ? b[b.size() - 2] : b[b.size() - 1];
  return std::max<int64_t>(0, batch * m * n * k);
}

// The gradients of C = op(A) op(B) (TensorFlow's _MatMulGrad): four cases of transposes,
// each one product, so no transpose is ever materialized.
template <bool kBatch>
void matmul_grad(GradContext& c) {
  const bool ta = c.attrs.b(kTransposeA), tb = c.attrs.b(kTransposeB);
  const Tensor &a = c.x[0], &b = c.x[1], &g = c.dy[0];
  Tensor da, db;
  if (!ta && !tb) {
    if (c.needs[0]) da = grad::matmul(c.b, g, b, false, true, kBatch);
    if (c.needs[1]) db = grad::matmul(c.b, a, g, true, false, kBatch);
  } else if (!ta && tb) {
    if (c.needs[0]) da = grad::matmul(c.b, g, b, false, false, kBatch);
    if (c.needs[1]) db = grad::matmul(c.b, g, a, true, false, kBatch);
  } else if (ta && !tb) {
    if (c.needs[0]) da = grad::matmul(c.b, b, g, false, true, kBatch);
    if (c.needs[1]) db = grad::matmul(c.b, a, g, false, false, kBatch);
  } else {
    if (c.needs[0]) da = grad::matmul(c.b, b, g, true, true, kBatch);
    if (c.needs[1]) db = grad::matmul(c.b, g, a, true, true, kBatch);
  }
  // Batch dims that were broadcast are summed back.
  if (da.defined()) c.dx[0] = kBatch ? grad::sum_to(c.b, da, a) : da;
  if (db.defined()) c.dx[1] = kBatch ? grad::sum_to(c.b, db, b) : db;
}

// BatchMatMulV3 names its operand and output dtypes (Ta, Tb, Tout: TensorFlow's int8 x int8
// -> int32 products); kiln computes the ones where all three agree.
void infer_batch_matmul_v3(InferContext& c) {
  const DType a = c.in(0).dtype, b = c.in(1).dtype, out = c.attrs.type(kTout);
  if (a != b || a != out)
    throw UnimplementedError(std::string("BatchMatMulV3 of ") + tf_type_name(a) + " x " + tf_type_name(b) + " -> " +
                             tf_type_name(out) + ": kiln computes only Ta == Tb == Tout [Op:BatchMatMulV3]");
  infer_batch_matmul(c);
}

}  // namespace

namespace {

// A batch of rows times a free matrix.
RowKind matmul_rows(const RowsContext& c) {
  return !c.sized() && c.rows(0) && c.free(1) && !c.attrs.b(kTransposeA) ? RowKind::kRows : RowKind::kOther;
}

}  // namespace

const OpDef& op::MatMul() {
  static const OpDef def = {.name = "MatMul",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"a", "b"},
                            .traits = kPure | kTfjs,
                            // grad_a/grad_b: TensorFlow's hints that the product is a gradient (for its GPU
                            // kernels' precision); kiln's kernels compute the same either way.
                            .attr_specs = {bool_attr("transpose_a", false), bool_attr("transpose_b", false),
                                           bool_attr("grad_a", false), bool_attr("grad_b", false)},
                            .infer = infer_matmul,
                            .kernels = kernels_for<MatMulKernel, KILN_NUMERIC>(),
                            .cost = &matmul_cost,
                            .grad = &matmul_grad<false>,
                            .rows = &matmul_rows,
                            .output_args = {"product"}};
  return def;
}
const OpDef& op::BatchMatMulV2() {
  static const OpDef def = {.name = "BatchMatMulV2",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"x", "y"},
                            .traits = kPure | kTfjs,
                            .attr_specs = {bool_attr("adj_x", false), bool_attr("adj_y", false),
                                           bool_attr("grad_x", false), bool_attr("grad_y", false)},
                            .infer = infer_batch_matmul,
                            .kernels = kernels_for<BatchMatMulKernel, KILN_NUMERIC>(),
                            .cost = &matmul_cost,
                            .grad = &matmul_grad<true>};
  return def;
}

const OpDef& op::BatchMatMulV3() {
  static const OpDef def = {.name = "BatchMatMulV3",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"x", "y"},
                            .traits = kPure,
                            .attr_specs = {bool_attr("adj_x", false), bool_attr("adj_y", false),
                                           bool_attr("grad_x", false), bool_attr("grad_y", false), type_attr("Tout")},
                            .infer = infer_batch_matmul_v3,
                            .kernels = kernels_for<BatchMatMulKernel, KILN_NUMERIC>(),
                            .type_attr = "Ta",
                            .index_type_attrs = {{"Tb", 1}},
                            .cost = &matmul_cost,
                            .grad = &matmul_grad<true>};
  return def;
}

}  // namespace kiln::ops
