// Linear algebra over batches of matrices (the last two dimensions), with Eigen's
// decompositions as TensorFlow's CPU kernels use them: MatrixInverse, MatrixDeterminant and
// MatrixSolve (LU with partial pivoting), Cholesky (LLT; a matrix that is not positive definite
// gives NaNs), MatrixTriangularSolve (batch dimensions broadcast) and MatrixBandPart.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "ops/eigen_matrices.h"
#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

const int kInverseAdjoint = attr_index(op::MatrixInverse(), "adjoint");
const int kSolveAdjoint = attr_index(op::MatrixSolve(), "adjoint");
const int kTriangularLower = attr_index(op::MatrixTriangularSolve(), "lower");
const int kTriangularAdjoint = attr_index(op::MatrixTriangularSolve(), "adjoint");

// ---- shapes ------------------------------------------------------------------------------

// The batch dims of a batch of matrices: all but the last two.
Dims batch_of(const Dims& d) {
  Dims out;
  for (size_t i = 0; i + 2 < d.size(); ++i) out.push_back(d[i]);
  return out;
}

// Input `i` is a batch of square matrices (TensorFlow's messages); its dims, or null if unknown.
const Dims* square_matrices(const InferContext& c, int i) {
  const InputInfo& in = c.in(i);
  if (in.unknown_rank) return nullptr;
  const Dims& d = *in.dims;
  if (d.size() < 2)
    c.fail("Input tensor " + std::to_string(i) + " must have rank >= 2, got " + std::to_string(d.size()));
  const int64_t rows = d[d.size() - 2], cols = d[d.size() - 1];
  if (rows >= 0 && cols >= 0 && rows != cols) c.fail("Input matrix must be square.");
  return &d;
}
void require_floats(InferContext& c, int first, int last) {
  require_same_dtypes(c, first, last);
  require_type_in(c, "T", c.in(first).dtype, {DType::Float64, DType::Float32});
  c.out(0).dtype = c.in(first).dtype;
  c.kernel_dtype = c.in(first).dtype;
}

// MatrixInverse, Cholesky: [..., n, n] -> [..., n, n].
void infer_square_to_square(InferContext& c) {
  require_floats(c, 0, 0);
  const Dims* d = square_matrices(c, 0);
  c.out(0).shape = d ? TensorShape(*d) : TensorShape::unknown();
}
// MatrixDeterminant: [..., n, n] -> [...].
void infer_determinant(InferContext& c) {
  require_floats(c, 0, 0);
  const Dims* d = square_matrices(c, 0);
  if (!d) {
    c.out(0).shape = TensorShape::unknown();
    return;
  }
  c.out(0).shape = TensorShape(batch_of(*d));
}
// The dims of a solve's matrices (input 0, square) and right-hand sides (input 1), both of one
// float dtype; {nullptr, nullptr} after setting an unknown output shape when a rank is unknown.
std::pair<const Dims*, const Dims*> solve_operands(InferContext& c) {
  require_floats(c, 0, 1);
  const Dims* m = square_matrices(c, 0);
  const InputInfo& rhs = c.in(1);
  if (!m || rhs.unknown_rank) {
    c.out(0).shape = TensorShape::unknown();
    return {nullptr, nullptr};
  }
  return {m, rhs.dims};
}

// LogMatrixDeterminant: [..., n, n] -> (sign [...], log_abs_determinant [...]).
void infer_log_determinant(InferContext& c) {
  infer_determinant(c);
  c.out(1).dtype = c.out(0).dtype;
  c.out(1).shape = c.out(0).shape;
}

// MatrixSolve(matrix [..., n, n], rhs [..., n, k]) -> [..., n, k]: the same batch dims.
void infer_solve(InferContext& c) {
  const auto [m, rhs] = solve_operands(c);
  if (!m) return;
  const Dims& r = *rhs;
  if (r.size() != m->size()) c.fail("Input matrix and rhs must have the same rank.");
  for (size_t i = 0; i + 2 < r.size(); ++i)
    if (r[i] >= 0 && (*m)[i] >= 0 && r[i] != (*m)[i]) c.fail("All input tensors must have the same outer dimensions.");
  const int64_t n = (*m)[m->size() - 1], rows = r[r.size() - 2];
  if (n >= 0 && rows >= 0 && n != rows) c.fail("Input matrix and rhs are incompatible.");
  c.out(0).shape = TensorShape(r);
}

// The batch dims two batches of matrices broadcast to ([] when both have none).
Dims broadcast_batch(const InferContext* ic, const KernelContext* kc, const Dims& full_a, const Dims& full_b) {
  const Dims a = batch_of(full_a), b = batch_of(full_b);
  const size_t rank = std::max(a.size(), b.size());
  Dims out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    const int64_t y = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (x != y && x != 1 && y != 1 && x >= 0 && y >= 0) {
      const std::string m =
          "In[0] and In[1] must have compatible batch dimensions: " + dims_text(full_a) + " vs. " + dims_text(full_b);
      if (ic) ic->fail(m);
      kc->fail(m);
    }
    out[i] = x == 1 ? y : x;
  }
  return out;
}

// MatrixTriangularSolve(matrix [..., n, n], rhs [..., n, k]) -> [broadcast..., n, k].
void infer_triangular_solve(InferContext& c) {
  const auto [m, rhs] = solve_operands(c);
  if (!m) return;
  const Dims& r = *rhs;
  if (r.size() < 2) c.fail("Input tensor 1 must have rank >= 2, got " + std::to_string(r.size()));
  const int64_t n = (*m)[m->size() - 1], rows = r[r.size() - 2];
  if (n >= 0 && rows >= 0 && n != rows)
    c.fail("In[0] mismatch In[1] shape: " + std::to_string(n) + " vs. " + std::to_string(rows) + ": " + dims_text(*m) +
           " " + dims_text(r) + " 0 0");
  Dims out = broadcast_batch(&c, nullptr, *m, r);
  out.push_back(rows);
  out.push_back(r.back());
  c.out(0).shape = TensorShape(std::move(out));
}

// MatrixBandPart(input [..., m, n], num_lower, num_upper): any dtype.
void require_scalar(const InferContext& c, int i, const char* what) {
  const InputInfo& in = c.in(i);
  if (!in.unknown_rank && !in.dims->empty())
    c.fail(std::string(what) + " must be scalar, got shape " + dims_text(*in.dims));
}
void infer_band_part(InferContext& c) {
  require_int_dtype(c, 1, "num_lower");
  require_int_dtype(c, 2, "num_upper");
  require_scalar(c, 1, "num_lower");
  require_scalar(c, 2, "num_upper");
  const InputInfo& in = c.in(0);
  c.out(0).dtype = in.dtype;
  c.kernel_dtype = in.dtype;
  if (!in.unknown_rank && in.dims->size() < 2)
    c.fail("input must be at least 2-dim, received shape: " + dims_text(*in.dims));
  c.out(0).shape = in.unknown_rank ? TensorShape::unknown() : TensorShape(*in.dims);
}

// ---- kernels -----------------------------------------------------------------------------

struct Batch {
  int64_t count, rows, cols;
};
Batch batch(const TensorImpl& t) {
  const int64_t rows = t.dims[t.dims.size() - 2], cols = t.dims[t.dims.size() - 1];
  return {rows > 0 && cols > 0 ? t.num_elements / (rows * cols) : 0, rows, cols};
}
void check_square(const KernelContext& c, const TensorImpl& t) {
  if (t.dims.size() < 2 || t.dims[t.dims.size() - 1] != t.dims[t.dims.size() - 2])
    c.fail("Input matrix must be square.");
}

template <class T>
Eigen::PartialPivLU<Matrix<T>> lu_of(const T* data, int64_t n, bool adjoint) {
  const ConstMatrixMap<T> m(data, n, n);
  return adjoint ? Eigen::PartialPivLU<Matrix<T>>(Matrix<T>(m.adjoint())) : Eigen::PartialPivLU<Matrix<T>>(m);
}
template <class T>
bool invertible(const Eigen::PartialPivLU<Matrix<T>>& lu) {
  return lu.matrixLU().rows() == 0 || lu.matrixLU().diagonal().cwiseAbs().minCoeff() > T(0);
}

template <class T>
struct InverseKernel {
  static void run(KernelContext& c) {
    check_square(c, c.in(0));
    const Batch b = batch(c.in(0));
    const bool adjoint = c.attrs.b(kInverseAdjoint);
    for (int64_t i = 0; i < b.count; ++i) {
      const auto lu = lu_of(c.in(0).as<T>() + i * b.rows * b.rows, b.rows, adjoint);
      if (!invertible(lu)) c.fail("Input is not invertible.");
      MatrixMap<T>(c.out(0).as<T>() + i * b.rows * b.rows, b.rows, b.rows) = lu.inverse();
    }
  }
};

// (sign, log|det|) of one n x n matrix from its LU factors, as TensorFlow's SLogDet: a zero
// pivot gives log|det| = -inf and a signed zero sign; NaN pivots give NaN for both.
template <class T>
std::pair<T, T> sign_and_log_abs_det(const T* data, int64_t n) {
  T sign = 1, log_abs = 0;
  if (n == 0) return {sign, log_abs};
  const auto lu = lu_of(data, n, false);
  sign = static_cast<T>(lu.permutationP().determinant());
  for (int64_t k = 0; k < n; ++k) {
    const T d = lu.matrixLU()(k, k);
    log_abs += std::log(std::abs(d));
    // the pivot's sign: 0 keeps a signed zero and an infinite pivot counts as +-1, as TensorFlow 2.21
    sign *= std::isnan(d) ? d : T((d > T(0)) - (d < T(0)));
  }
  return {sign, log_abs};
}

// MatrixDeterminant: sign * exp(log|det|), TensorFlow's formula (a zero pivot gives a signed
// zero). LogMatrixDeterminant (two outputs): sign and log|det| themselves.
template <class T>
struct DeterminantKernel {
  static void run(KernelContext& c) {
    check_square(c, c.in(0));
    const int64_t n = c.in(0).dims.back();
    const bool log_form = c.num_outputs == 2;
    for (int64_t i = 0; i < c.out(0).num_elements; ++i) {
      const auto [sign, log_abs] = sign_and_log_abs_det(c.in(0).as<T>() + i * n * n, n);
      if (log_form) {
        c.out(0).as<T>()[i] = sign;
        c.out(1).as<T>()[i] = log_abs;
      } else {
        c.out(0).as<T>()[i] = sign * std::exp(log_abs);
      }
    }
  }
};

template <class T>
struct SolveKernel {
  static void run(KernelContext& c) {
    check_square(c, c.in(0));
    const TensorImpl& rhs = c.in(1);
    if (rhs.dims.size() != c.in(0).dims.size()) c.fail("Input matrix and rhs must have the same rank.");
    const Batch b = batch(c.in(0)), r = batch(rhs);
    if (r.rows != b.rows) c.fail("Input matrix and rhs are incompatible.");
    if (b.count != r.count) c.fail("All input tensors must have the same outer dimensions.");
    const bool adjoint = c.attrs.b(kSolveAdjoint);
    for (int64_t i = 0; i < b.count; ++i) {
      if (b.rows == 0 || r.cols == 0) continue;
      const auto lu = lu_of(c.in(0).as<T>() + i * b.rows * b.rows, b.rows, adjoint);
      if (!invertible(lu)) c.fail("Input matrix is not invertible.");
      MatrixMap<T>(c.out(0).as<T>() + i * r.rows * r.cols, r.rows, r.cols) =
          lu.solve(ConstMatrixMap<T>(rhs.as<T>() + i * r.rows * r.cols, r.rows, r.cols));
    }
  }
};

// The lower triangle L with L L^T = A; NaN in that triangle when A is not positive definite.
template <class T>
struct CholeskyKernel {
  static void run(KernelContext& c) {
    check_square(c, c.in(0));
    const Batch b = batch(c.in(0));
    for (int64_t i = 0; i < b.count; ++i) {
      const ConstMatrixMap<T> a(c.in(0).as<T>() + i * b.rows * b.rows, b.rows, b.rows);
      MatrixMap<T> out(c.out(0).as<T>() + i * b.rows * b.rows, b.rows, b.rows);
      const Eigen::LLT<Matrix<T>, Eigen::Lower> llt(a);
      if (llt.info() == Eigen::Success) {
        out = llt.matrixL();
      } else {
        out.setZero();
        out.template triangularView<Eigen::Lower>().setConstant(std::numeric_limits<T>::quiet_NaN());
      }
    }
  }
};

// Index of the operand's batch element for output batch element `i` (broadcasting).
int64_t broadcast_index(int64_t i, const Dims& out, const Dims& in) {
  int64_t index = 0, stride = 1;
  for (size_t k = out.size(); k-- > 0;) {
    const int64_t coord = i % out[k];
    i /= out[k];
    const size_t offset = out.size() - in.size();
    if (k >= offset && in[k - offset] != 1) index += coord * stride;
    if (k >= offset) stride *= in[k - offset];
  }
  return index;
}

template <class T>
struct TriangularSolveKernel {
  static void run(KernelContext& c) {
    check_square(c, c.in(0));
    const TensorImpl &m = c.in(0), &rhs = c.in(1);
    if (rhs.dims.size() < 2) c.fail("Input tensor 1 must have rank >= 2");
    const Batch r = batch(rhs);
    const int64_t n = m.dims.back();
    if (n != r.rows) c.fail("In[0] mismatch In[1] shape: " + std::to_string(n) + " vs. " + std::to_string(r.rows));
    const Dims mb = batch_of(m.dims), rb = batch_of(rhs.dims), ob = broadcast_batch(nullptr, &c, m.dims, rhs.dims);
    const bool lower = c.attrs.b(kTriangularLower), adjoint = c.attrs.b(kTriangularAdjoint);
    const int64_t count = n > 0 && r.cols > 0 ? c.out(0).num_elements / (n * r.cols) : 0;
    for (int64_t i = 0; i < count; ++i) {
      const ConstMatrixMap<T> a(m.as<T>() + broadcast_index(i, ob, mb) * n * n, n, n);
      const ConstMatrixMap<T> y(rhs.as<T>() + broadcast_index(i, ob, rb) * n * r.cols, n, r.cols);
      MatrixMap<T> out(c.out(0).as<T>() + i * n * r.cols, n, r.cols);
      if (lower && !adjoint)
        out = a.template triangularView<Eigen::Lower>().solve(y);
      else if (lower)
        out = a.template triangularView<Eigen::Lower>().adjoint().solve(y);
      else if (!adjoint)
        out = a.template triangularView<Eigen::Upper>().solve(y);
      else
        out = a.template triangularView<Eigen::Upper>().adjoint().solve(y);
    }
  }
};

// Keeps element (i, j) when (num_lower < 0 || i - j <= num_lower) and (num_upper < 0 ||
// j - i <= num_upper); zeroes the rest. Moves bytes, so every numeric dtype.
void run_band_part(KernelContext& c) {
  const TensorImpl& x = c.in(0);
  if (x.dims.size() < 2) c.fail("input must be at least 2-dim, received shape: " + dims_text(x.dims));
  const Batch b = batch(x);
  for (int i = 1; i <= 2; ++i)
    if (c.in(i).num_elements != 1)
      c.fail(std::string(i == 1 ? "num_lower" : "num_upper") + " must be scalar, got shape " + dims_text(c.in(i).dims));
  const int64_t lower = int_values(c.in(1))[0], upper = int_values(c.in(2))[0];
  if (lower > b.rows)
    c.fail("num_lower must be negative or less or equal to number of rows (" + std::to_string(b.rows) +
           ") got: " + std::to_string(lower));
  if (upper > b.cols)
    c.fail("num_upper must be negative or less or equal to number of columns (" + std::to_string(b.cols) +
           ") got: " + std::to_string(upper));
  const size_t size = dtype_size(x.dtype);
  const auto* src = static_cast<const char*>(x.data);
  auto* dst = static_cast<char*>(c.out(0).data);
  for (int64_t k = 0; k < b.count; ++k)
    for (int64_t i = 0; i < b.rows; ++i)
      for (int64_t j = 0; j < b.cols; ++j) {
        const size_t at = static_cast<size_t>((k * b.rows + i) * b.cols + j) * size;
        const bool keep = (lower < 0 || i - j <= lower) && (upper < 0 || j - i <= upper);
        if (keep)
          std::memcpy(dst + at, src + at, size);
        else
          std::memset(dst + at, 0, size);
      }
}

// ---- gradients ---------------------------------------------------------------------------

// d inverse(A) = -A^-H dY A^-H (with A^-1 the output, adjoint as the forward had it).
void inverse_grad(GradContext& c) {
  const Tensor& ainv = c.y[0];
  const Tensor t = grad::matmul(c.b, c.dy[0], ainv, false, true, true);
  c.dx[0] = grad::neg(c.b, grad::matmul(c.b, ainv, t, true, false, true));
}
// d det(A) = dY * det(A) * A^-T.
void determinant_grad(GradContext& c) {
  const Tensor inv = grad::emit1(c.b, op::MatrixInverse(), {&c.x[0]}, Attrs{true});
  Tensor scale = grad::mul(c.b, c.dy[0], c.y[0]);
  const Tensor last = grad::int_scalar(c.b, -1);
  scale = grad::emit1(c.b, op::ExpandDims(), {&scale, &last});
  scale = grad::emit1(c.b, op::ExpandDims(), {&scale, &last});
  c.dx[0] = grad::mul(c.b, scale, inv);
}
// d log|det(A)| = dY * A^-H; the sign carries no gradient (TensorFlow's LogMatrixDeterminant grad).
void log_determinant_grad(GradContext& c) {
  if (!c.dy[1].defined()) return;
  const Tensor inv = grad::emit1(c.b, op::MatrixInverse(), {&c.x[0]}, Attrs{true});
  Tensor scale = c.dy[1];
  const Tensor last = grad::int_scalar(c.b, -1);
  scale = grad::emit1(c.b, op::ExpandDims(), {&scale, &last});
  scale = grad::emit1(c.b, op::ExpandDims(), {&scale, &last});
  c.dx[0] = grad::mul(c.b, scale, inv);
}
// Solves: X = A^-1 B (adjoint: A^-H B). dB = A^-H dX (adjoint: A^-1 dX); dA = -dB X^H
// (adjoint: -X dB^H). Real dtypes, so ^H is a transpose.
void solve_grad(GradContext& c) {
  const bool adjoint = c.attrs.b(0);
  const Tensor db = grad::emit1(c.b, op::MatrixSolve(), {&c.x[0], &c.dy[0]}, Attrs{!adjoint});
  c.dx[1] = db;
  c.dx[0] = grad::neg(c.b, adjoint ? grad::matmul(c.b, c.y[0], db, false, true, true)
                                   : grad::matmul(c.b, db, c.y[0], false, true, true));
}

// The same for a triangular A, whose gradient keeps A's triangle.
void triangular_solve_grad(GradContext& c) {
  const bool lower = c.attrs.b(0), adjoint = c.attrs.b(1);
  const Tensor db = grad::emit1(c.b, op::MatrixTriangularSolve(), {&c.x[0], &c.dy[0]}, Attrs{lower, !adjoint});
  c.dx[1] = db;
  const Tensor da = grad::neg(c.b, adjoint ? grad::matmul(c.b, c.y[0], db, false, true, true)
                                           : grad::matmul(c.b, db, c.y[0], false, true, true));
  c.dx[0] = lower ? grad::band(c.b, da, -1, 0) : grad::band(c.b, da, 0, -1);
}

// A = L L^T. With M = L^T dL, lower triangle kept and its diagonal halved (Phi), the gradient
// is the symmetric part of L^-T Phi L^-1 (TensorFlow's formula), written with matmul's
// transpose flags: 0.5 (L^-T Phi L^-1 + L^-T Phi^T L^-1).
void cholesky_grad(GradContext& c) {
  const Tensor& l = c.y[0];
  Tensor m = grad::matmul(c.b, l, c.dy[0], true, false, true);
  const Tensor phi =
      grad::sub(c.b, grad::band(c.b, m, -1, 0), grad::mul(c.b, grad::scalar(c.b, m, 0.5), grad::band(c.b, m, 0, 0)));
  const Tensor eye = grad::band(c.b, grad::emit1(c.b, op::OnesLike(), {&l}), 0, 0);
  const Tensor linv = grad::emit1(c.b, op::MatrixTriangularSolve(), {&l, &eye}, Attrs{true, false});
  const Tensor x = grad::matmul(c.b, grad::matmul(c.b, linv, phi, true, false, true), linv, false, false, true);
  const Tensor xt = grad::matmul(c.b, grad::matmul(c.b, linv, phi, true, true, true), linv, false, false, true);
  c.dx[0] = grad::mul(c.b, grad::scalar(c.b, x, 0.5), grad::add(c.b, x, xt));
}

void band_part_grad(GradContext& c) { c.dx[0] = grad::emit1(c.b, op::MatrixBandPart(), {&c.dy[0], &c.x[1], &c.x[2]}); }

}  // namespace

const OpDef& op::MatrixInverse() {
  static const OpDef def = linalg_row("MatrixInverse", {"input"}, {"output"}, {bool_attr("adjoint", false)},
                                      infer_square_to_square, kernels_for<InverseKernel, KILN_FLOATS>(), &inverse_grad);
  return def;
}
const OpDef& op::MatrixDeterminant() {
  static const OpDef def = linalg_row("MatrixDeterminant", {"input"}, {"output"}, {}, infer_determinant,
                                      kernels_for<DeterminantKernel, KILN_FLOATS>(), &determinant_grad);
  return def;
}
const OpDef& op::LogMatrixDeterminant() {
  static const OpDef def =
      linalg_row("LogMatrixDeterminant", {"input"}, {"sign", "log_abs_determinant"}, {}, infer_log_determinant,
                 kernels_for<DeterminantKernel, KILN_FLOATS>(), &log_determinant_grad);
  return def;
}
const OpDef& op::MatrixSolve() {
  static const OpDef def = linalg_row("MatrixSolve", {"matrix", "rhs"}, {"output"}, {bool_attr("adjoint", false)},
                                      infer_solve, kernels_for<SolveKernel, KILN_FLOATS>(), &solve_grad);
  return def;
}
const OpDef& op::Cholesky() {
  static const OpDef def = linalg_row("Cholesky", {"input"}, {"output"}, {}, infer_square_to_square,
                                      kernels_for<CholeskyKernel, KILN_FLOATS>(), &cholesky_grad);
  return def;
}
const OpDef& op::MatrixTriangularSolve() {
  static const OpDef def = linalg_row("MatrixTriangularSolve", {"matrix", "rhs"}, {"output"},
                                      {bool_attr("lower", true), bool_attr("adjoint", false)}, infer_triangular_solve,
                                      kernels_for<TriangularSolveKernel, KILN_FLOATS>(), &triangular_solve_grad);
  return def;
}
const OpDef& op::MatrixBandPart() {
  static const OpDef def = {.name = "MatrixBandPart",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"input", "num_lower", "num_upper"},
                            .traits = kPure,
                            .infer = infer_band_part,
                            .any_dtype_kernel = run_band_part,
                            .index_type_attrs = {{"Tindex", 1}},
                            .grad = &band_part_grad};
  return def;
}

}  // namespace kiln::ops
