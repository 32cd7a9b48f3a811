// The matrix decompositions with several outputs, over batches of matrices (the last two
// dimensions), with the Eigen solvers TensorFlow's CPU kernels use: Svd (BDCSVD; singular
// values descending), Qr (HouseholderQR) and SelfAdjointEigV2 (SelfAdjointEigenSolver, which
// reads the lower triangle; eigenvalues ascending). Singular and eigen vectors are unique only
// up to sign (and rotation within repeated values): they agree with TensorFlow's as far as the
// decomposition does. A NaN or infinite input gives NaN decompositions (Svd) or TensorFlow's
// error (SelfAdjointEigV2), never Eigen's unset results. The gradients are TensorFlow's:
// SelfAdjointEigV2 (with vectors), Qr (reduced with rows >= columns, or fewer rows in either
// mode) and Svd (with or without U and V; full_matrices when rows and columns differ by at
// most one).
#include <algorithm>
#include <limits>
#include <string>

#include "ops/eigen_matrices.h"
#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

const int kSvdComputeUv = attr_index(op::Svd(), "compute_uv");
const int kSvdFull = attr_index(op::Svd(), "full_matrices");
const int kQrFull = attr_index(op::Qr(), "full_matrices");
const int kEigComputeV = attr_index(op::SelfAdjointEigV2(), "compute_v");

// The input: a float or double batch of matrices, rank >= 2 (TensorFlow's messages). Its dims
// (null when the rank is unknown) and the output dtype set.
const Dims* matrices(InferContext& c) {
  require_type_in(c, "T", c.in(0).dtype, {DType::Float64, DType::Float32});
  const int outputs = c.num_outputs;
  for (int i = 0; i < outputs; ++i) c.out(i).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  if (c.in(0).unknown_rank) {
    for (int i = 0; i < outputs; ++i) c.out(i).shape = TensorShape::unknown();
    return nullptr;
  }
  const Dims& d = *c.in(0).dims;
  if (d.size() < 2) c.fail("Input tensor 0 must have rank >= 2, got " + std::to_string(d.size()));
  return &d;
}

// The batch dims of `d` followed by `tail`.
Dims with_batch(const Dims& d, std::initializer_list<int64_t> tail) {
  Dims out;
  for (size_t i = 0; i + 2 < d.size(); ++i) out.push_back(d[i]);
  for (int64_t t : tail) out.push_back(t);
  return out;
}
int64_t smaller(int64_t a, int64_t b) { return a < 0 || b < 0 ? -1 : std::min(a, b); }

// Svd: s [..., p], u [..., m, m or p], v [..., n, n or p] (p = min(m, n)); u and v are
// scalars when compute_uv is false, as TensorFlow leaves them.
void infer_svd(InferContext& c) {
  const Dims* d = matrices(c);
  if (!d) return;
  const int64_t m = (*d)[d->size() - 2], n = (*d)[d->size() - 1], p = smaller(m, n);
  const bool full = c.attrs.b(kSvdFull);
  c.out(0).shape = TensorShape(with_batch(*d, {p}));
  if (c.attrs.b(kSvdComputeUv)) {
    c.out(1).shape = TensorShape(with_batch(*d, {m, full ? m : p}));
    c.out(2).shape = TensorShape(with_batch(*d, {n, full ? n : p}));
  } else {
    c.out(1).shape = TensorShape(Dims{});
    c.out(2).shape = TensorShape(Dims{});
  }
}

// Qr: q [..., m, m or p], r [..., m or p, n].
void infer_qr(InferContext& c) {
  const Dims* d = matrices(c);
  if (!d) return;
  const int64_t m = (*d)[d->size() - 2], n = (*d)[d->size() - 1], p = smaller(m, n);
  const bool full = c.attrs.b(kQrFull);
  c.out(0).shape = TensorShape(with_batch(*d, {m, full ? m : p}));
  c.out(1).shape = TensorShape(with_batch(*d, {full ? m : p, n}));
}

// SelfAdjointEigV2: e [..., n], v [..., n, n] ([0] when compute_v is false).
void infer_eig(InferContext& c) {
  const Dims* d = matrices(c);
  if (!d) return;
  const int64_t m = (*d)[d->size() - 2], n = (*d)[d->size() - 1];
  if (m >= 0 && n >= 0 && m != n) c.fail("Input matrix must be square.");
  c.out(0).shape = TensorShape(with_batch(*d, {n}));
  c.out(1).shape = c.attrs.b(kEigComputeV) ? TensorShape(with_batch(*d, {n, n})) : TensorShape(Dims{0});
}

struct Shape2 {
  int64_t count, m, n;
};
Shape2 batch_of(const TensorImpl& t) {
  const int64_t m = t.dims[t.dims.size() - 2], n = t.dims[t.dims.size() - 1];
  int64_t count = 1;
  for (size_t i = 0; i + 2 < t.dims.size(); ++i) count *= t.dims[i];
  return {count, m, n};
}

template <class T>
void set_identity(T* out, int64_t rows, int64_t cols) {
  MatrixMap<T>(out, rows, cols).setIdentity();
}

template <class T>
struct SvdKernel {
  static void run(KernelContext& c) {
    const Shape2 b = batch_of(c.in(0));
    const int64_t p = std::min(b.m, b.n);
    const bool uv = c.attrs.b(kSvdComputeUv), full = c.attrs.b(kSvdFull);
    const int64_t ucols = full ? b.m : p, vcols = full ? b.n : p;
    if (!uv) {
      c.out(1).as<T>()[0] = T(0);
      c.out(2).as<T>()[0] = T(0);
    }
    for (int64_t i = 0; i < b.count; ++i) {
      T* s = c.out(0).as<T>() + i * p;
      if (p == 0) {  // an empty matrix: no values; full bases are identities
        if (uv) {
          set_identity(c.out(1).as<T>() + i * b.m * ucols, b.m, ucols);
          set_identity(c.out(2).as<T>() + i * b.n * vcols, b.n, vcols);
        }
        continue;
      }
      const ConstMatrixMap<T> a(c.in(0).as<T>() + i * b.m * b.n, b.m, b.n);
      const unsigned flags =
          uv ? (full ? Eigen::ComputeFullU | Eigen::ComputeFullV : Eigen::ComputeThinU | Eigen::ComputeThinV) : 0u;
      Eigen::BDCSVD<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>> svd(a, flags);
      if (svd.info() != Eigen::Success) {  // NaN or infinite input: Eigen leaves the results unset
        const T nan = std::numeric_limits<T>::quiet_NaN();
        std::fill_n(s, p, nan);
        if (uv) {
          std::fill_n(c.out(1).as<T>() + i * b.m * ucols, b.m * ucols, nan);
          std::fill_n(c.out(2).as<T>() + i * b.n * vcols, b.n * vcols, nan);
        }
        continue;
      }
      Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>(s, p) = svd.singularValues();
      if (uv) {
        MatrixMap<T>(c.out(1).as<T>() + i * b.m * ucols, b.m, ucols) = svd.matrixU();
        MatrixMap<T>(c.out(2).as<T>() + i * b.n * vcols, b.n, vcols) = svd.matrixV();
      }
    }
  }
};

template <class T>
struct QrKernel {
  static void run(KernelContext& c) {
    const Shape2 b = batch_of(c.in(0));
    const int64_t p = std::min(b.m, b.n);
    const bool full = c.attrs.b(kQrFull);
    const int64_t qcols = full ? b.m : p, rrows = full ? b.m : p;
    for (int64_t i = 0; i < b.count; ++i) {
      T* q = c.out(0).as<T>() + i * b.m * qcols;
      T* r = c.out(1).as<T>() + i * rrows * b.n;
      if (b.m == 0 || b.n == 0) {
        set_identity(q, b.m, qcols);
        MatrixMap<T>(r, rrows, b.n).setZero();
        continue;
      }
      const ConstMatrixMap<T> a(c.in(0).as<T>() + i * b.m * b.n, b.m, b.n);
      Eigen::HouseholderQR<Matrix<T>> qr(a);
      MatrixMap<T>(r, rrows, b.n) = qr.matrixQR().topRows(rrows).template triangularView<Eigen::Upper>();
      MatrixMap<T>(q, b.m, qcols) = qr.householderQ() * Matrix<T>::Identity(b.m, qcols);
    }
  }
};

template <class T>
struct EigKernel {
  static void run(KernelContext& c) {
    const Shape2 b = batch_of(c.in(0));
    if (b.m != b.n) c.fail("Input matrix must be square.");
    const bool vectors = c.attrs.b(kEigComputeV);
    for (int64_t i = 0; i < b.count; ++i) {
      if (b.n == 0) continue;
      const ConstMatrixMap<T> a(c.in(0).as<T>() + i * b.n * b.n, b.n, b.n);
      Eigen::SelfAdjointEigenSolver<Matrix<T>> eig(a, vectors ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly);
      if (eig.info() != Eigen::Success)
        c.fail("Self-adjoint eigen decomposition was not successful. The input might not be valid.");
      Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>(c.out(0).as<T>() + i * b.n, b.n) = eig.eigenvalues();
      if (vectors) MatrixMap<T>(c.out(1).as<T>() + i * b.n * b.n, b.n, b.n) = eig.eigenvectors();
    }
  }
};

// A = V diag(e) V^T. With F[i][j] = 1 / (e[j] - e[i]) off the diagonal and 0 on it, and
// K = diag(de) + F o (V^T dV), the gradient is V K V^T symmetrized onto the lower triangle the
// kernel reads, its diagonal halved (TensorFlow's formula). K + K^T = 2 diag(de) +
// F o (V^T dV - dV^T V), since F^T = -F, so no transpose is needed.
void eig_grad(GradContext& c) {
  if (!c.attrs.b(kEigComputeV))
    throw InvalidArgumentError(
        "SelfAdjointEigV2 gradient is not implemented when compute_v is False (TensorFlow's rule: use "
        "compute_v=True)");
  const Tensor &e = c.y[0], &v = c.y[1];
  // An output nothing flowed to has no upstream gradient: zeros.
  const Tensor de = c.dy[0].defined() ? c.dy[0] : grad::zeros_like(c.b, e);
  const Tensor dv = c.dy[1].defined() ? c.dy[1] : grad::zeros_like(c.b, v);
  const Tensor eye = grad::band(c.b, grad::emit1(c.b, op::OnesLike(), {&v}), 0, 0);
  const Tensor last = grad::int_scalar(c.b, -1), second = grad::int_scalar(c.b, -2);
  const Tensor row = grad::emit1(c.b, op::ExpandDims(), {&e, &second});  // e[j] along columns
  const Tensor col = grad::emit1(c.b, op::ExpandDims(), {&e, &last});    // e[i] along rows
  const Tensor one = grad::scalar(c.b, e, 1.0);
  const Tensor f = grad::div(c.b, grad::sub(c.b, one, eye), grad::add(c.b, grad::sub(c.b, row, col), eye));
  const Tensor vt_dv = grad::matmul(c.b, v, dv, true, false, true);
  const Tensor dvt_v = grad::matmul(c.b, dv, v, true, false, true);
  const Tensor de_row = grad::emit1(c.b, op::ExpandDims(), {&de, &second});
  const Tensor diag = grad::mul(c.b, grad::mul(c.b, grad::scalar(c.b, e, 2.0), eye), de_row);
  const Tensor k = grad::add(c.b, diag, grad::mul(c.b, f, grad::sub(c.b, vt_dv, dvt_v)));
  const Tensor s = grad::matmul(c.b, grad::matmul(c.b, v, k, false, false, true), v, false, true, true);
  c.dx[0] =
      grad::sub(c.b, grad::band(c.b, s, -1, 0), grad::mul(c.b, grad::scalar(c.b, s, 0.5), grad::band(c.b, s, 0, 0)));
}

// Columns [from, from + count) of every matrix of x (rank `rank`).
Tensor columns(GradBuilder& b, const Tensor& x, size_t rank, int64_t from, int64_t count) {
  std::vector<int64_t> begin(rank, 0), size(rank, -1);
  begin[rank - 1] = from;
  size[rank - 1] = count;
  const Tensor bt = grad::ints(b, begin), st = grad::ints(b, size);
  return grad::emit1(b, op::Slice(), {&x, &bt, &st});
}

// x R^-T for an upper triangular R, as (R^-1 x^T)^T.
Tensor right_solve_upper(GradBuilder& b, const Tensor& x, const Tensor& r) {
  const Tensor xt = grad::matrix_transpose(b, x, "Qr");
  return grad::matrix_transpose(b, grad::emit1(b, op::MatrixTriangularSolve(), {&r, &xt}, Attrs{false, false}), "Qr");
}

// A = Q R with rows >= columns (R square): TensorFlow's formula. With M = Q^T dQ and
// N = R dR^T, dA = Q (dR + tril(M - M^T + N - N^T) R^-T) + (dQ - Q M) R^-T.
Tensor qr_grad_deep(GradBuilder& b, const Tensor& q, const Tensor& r, const Tensor& dq, const Tensor& dr) {
  const Tensor m = grad::matmul(b, q, dq, true, false, true);
  const Tensor n = grad::matmul(b, r, dr, false, true, true);
  const Tensor m_skew = grad::sub(b, m, grad::matrix_transpose(b, m, "Qr"));
  const Tensor n_skew = grad::sub(b, n, grad::matrix_transpose(b, n, "Qr"));
  const Tensor tril = grad::band(b, grad::add(b, m_skew, n_skew), -1, 0);
  const Tensor from_r = grad::matmul(b, q, grad::add(b, dr, right_solve_upper(b, tril, r)), false, false, true);
  const Tensor from_q = right_solve_upper(b, grad::sub(b, dq, grad::matmul(b, q, m, false, false, true)), r);
  return grad::add(b, from_r, from_q);
}

// Qr's gradient, TensorFlow's cases: rows >= columns (reduced), or fewer rows than columns
// (either mode: Q is square). There A = [X Y] with X square and R = [U V]: X = Q U, Y = Q V, so
// dY = Q dV and dX is the square case's with dQ + Y dV^T for dQ.
void qr_grad(GradContext& c) {
  const Tensor &q = c.y[0], &r = c.y[1];
  Dims qd, rd;
  if (!grad::static_dims(q, &qd) || !grad::static_dims(r, &rd) || rd[rd.size() - 2] < 0 || rd[rd.size() - 1] < 0 ||
      qd[qd.size() - 2] < 0)
    throw UnimplementedError("QrGrad not implemented with dynamic shapes.");
  const size_t rank = rd.size();
  const int64_t rows = qd[rank - 2], cols = rd[rank - 1];
  if (rd[rank - 2] > cols)
    throw UnimplementedError("QrGrad not implemented when nrows > ncols and full_matrices is true.");
  const Tensor dq = c.dy[0].defined() ? c.dy[0] : grad::zeros_like(c.b, q);
  const Tensor dr = c.dy[1].defined() ? c.dy[1] : grad::zeros_like(c.b, r);
  if (rows >= cols) {
    c.dx[0] = qr_grad_deep(c.b, q, r, dq, dr);
    return;
  }
  const Tensor y = columns(c.b, c.x[0], rank, rows, cols - rows), u = columns(c.b, r, rank, 0, rows);
  const Tensor dv = columns(c.b, dr, rank, rows, cols - rows), du = columns(c.b, dr, rank, 0, rows);
  const Tensor dy = grad::matmul(c.b, q, dv, false, false, true);
  const Tensor dx = qr_grad_deep(c.b, q, u, grad::add(c.b, dq, grad::matmul(c.b, y, dv, false, true, true)), du);
  const Tensor axis = grad::int_scalar(c.b, -1);
  const Tensor* parts[] = {&dx, &dy, &axis};
  c.dx[0] = c.b.emit(op::ConcatV2(), parts, 3, Attrs{int64_t{2}})[0];  // N = 2
}

// s as diagonal matrices, `eye` the identity of their size: eye * s[..., None, :].
Tensor diag_of(GradBuilder& b, const Tensor& s, const Tensor& eye) {
  const Tensor second = grad::int_scalar(b, -2);
  return grad::mul(b, eye, grad::emit1(b, op::ExpandDims(), {&s, &second}));
}

// TensorFlow's safe reciprocal x / (x^2 + 1e-20): finite (0) where x is 0.
Tensor safe_reciprocal(GradBuilder& b, const Tensor& x) {
  return grad::div(b, x, grad::add(b, grad::mul(b, x, x), grad::scalar(b, x, 1e-20)));
}

// A = U diag(s) V^T: TensorFlow's formula (Giles; Townsend for the reduced case), for A
// with rows m <= columns n (a taller A is differentiated through its transpose). With
// F[i][j] = 1 / (s[j]^2 - s[i]^2) off the diagonal (0 on it) and V1 the first m columns of V,
// dA = U (diag(ds) + (F o U^T dU + its transpose) S + S (F o V1^T dV1 + its transpose)) V1^T
//      + U S^-1 (dV1^T - dV1^T V1 V1^T - [full] V1^T dV2 V2^T)   (the last line when m < n).
void svd_grad(GradContext& c) {
  const Tensor& a = c.x[0];
  Dims ad;
  if (!grad::static_dims(a, &ad) || ad[ad.size() - 2] < 0 || ad[ad.size() - 1] < 0)
    throw UnimplementedError("SVD gradient has not been implemented for input with unknown inner matrix shape.");
  const size_t rank = ad.size();
  const Tensor ds = c.dy[0].defined() ? c.dy[0] : grad::zeros_like(c.b, c.y[0]);
  if (!c.attrs.b(kSvdComputeUv)) {  // dA = U diag(ds) V^T, with U and V computed now
    const Tensor* in[] = {&a};
    const std::vector<Tensor> usv = c.b.emit(op::Svd(), in, 1, Attrs{true, false});
    const Tensor eye = grad::band(c.b, grad::emit1(c.b, op::OnesLike(), {&usv[1]}), 0, 0);
    const Tensor small_eye = grad::matmul(c.b, eye, eye, true, false, true);  // [.., p, p]
    c.dx[0] = grad::matmul(c.b, usv[1], grad::matmul(c.b, diag_of(c.b, ds, small_eye), usv[2], false, true, true),
                           false, false, true);
    return;
  }
  const bool full = c.attrs.b(kSvdFull);
  int64_t m = ad[rank - 2], n = ad[rank - 1];
  Tensor s = c.y[0], u = c.y[1], v = c.y[2];
  Tensor du = c.dy[1].defined() ? c.dy[1] : grad::zeros_like(c.b, u);
  Tensor dv = c.dy[2].defined() ? c.dy[2] : grad::zeros_like(c.b, v);
  const bool transposed = m > n;  // differentiate A^T = V S U^T
  if (transposed) {
    std::swap(m, n);
    std::swap(u, v);
    std::swap(du, dv);
  }
  if (full && n - m > 1)
    throw UnimplementedError(
        "svd gradient is not implemented for abs(m - n) > 1 when full_matrices is True. Received: m=" +
        std::to_string(m) + " and n=" + std::to_string(n));
  const Tensor u_du = grad::matmul(c.b, u, du, true, false, true);  // [.., m, m]
  const Tensor eye = grad::band(c.b, grad::emit1(c.b, op::OnesLike(), {&u_du}), 0, 0);
  const Tensor s_mat = diag_of(c.b, s, eye);
  const Tensor s2 = grad::mul(c.b, s, s);
  const Tensor last = grad::int_scalar(c.b, -1), second = grad::int_scalar(c.b, -2);
  const Tensor gaps = grad::sub(c.b, grad::emit1(c.b, op::ExpandDims(), {&s2, &second}),
                                grad::emit1(c.b, op::ExpandDims(), {&s2, &last}));
  const Tensor f = grad::mul(c.b, safe_reciprocal(c.b, gaps), grad::sub(c.b, grad::scalar(c.b, s, 1.0), eye));
  const bool split = full && m != n;
  const Tensor v1 = split ? columns(c.b, v, rank, 0, m) : v, dv1 = split ? columns(c.b, dv, rank, 0, m) : dv;
  const Tensor f_u = grad::mul(c.b, f, u_du);
  const Tensor f_v = grad::mul(c.b, f, grad::matmul(c.b, v1, dv1, true, false, true));
  const Tensor inner = grad::add(
      c.b,
      grad::add(
          c.b, diag_of(c.b, ds, eye),
          grad::matmul(c.b, grad::add(c.b, f_u, grad::matrix_transpose(c.b, f_u, "Svd")), s_mat, false, false, true)),
      grad::matmul(c.b, s_mat, grad::add(c.b, f_v, grad::matrix_transpose(c.b, f_v, "Svd")), false, false, true));
  Tensor g = grad::matmul(c.b, u, grad::matmul(c.b, inner, v1, false, true, true), false, false, true);
  if (m != n) {
    const Tensor dv1t = grad::matrix_transpose(c.b, dv1, "Svd");
    Tensor rest =
        grad::sub(c.b, dv1t, grad::matmul(c.b, grad::matmul(c.b, dv1t, v1, false, false, true), v1, false, true, true));
    if (full) {
      const Tensor v2 = columns(c.b, v, rank, m, n - m), dv2 = columns(c.b, dv, rank, m, n - m);
      rest =
          grad::sub(c.b, rest, grad::matmul(c.b, grad::matmul(c.b, v1, dv2, true, false, true), v2, false, true, true));
    }
    const Tensor u_s_inv = grad::matmul(c.b, u, diag_of(c.b, safe_reciprocal(c.b, s), eye), false, false, true);
    g = grad::add(c.b, g, grad::matmul(c.b, u_s_inv, rest, false, false, true));
  }
  c.dx[0] = transposed ? grad::matrix_transpose(c.b, g, "Svd") : g;
}

}  // namespace

const OpDef& op::Svd() {
  static const OpDef def =
      linalg_row("Svd", {"input"}, {"s", "u", "v"}, {bool_attr("compute_uv", true), bool_attr("full_matrices", false)},
                 infer_svd, kernels_for<SvdKernel, KILN_FLOATS>(), &svd_grad);
  return def;
}
const OpDef& op::Qr() {
  static const OpDef def = linalg_row("Qr", {"input"}, {"q", "r"}, {bool_attr("full_matrices", false)}, infer_qr,
                                      kernels_for<QrKernel, KILN_FLOATS>(), &qr_grad);
  return def;
}
const OpDef& op::SelfAdjointEigV2() {
  static const OpDef def = linalg_row("SelfAdjointEigV2", {"input"}, {"e", "v"}, {bool_attr("compute_v", true)},
                                      infer_eig, kernels_for<EigKernel, KILN_FLOATS>(), &eig_grad);
  return def;
}

}  // namespace kiln::ops
