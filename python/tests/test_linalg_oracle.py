"""kiln.linalg against TensorFlow's tf.linalg in the same test: values (eager and traced),
gradients where kiln has them, batches, empty matrices and TensorFlow's errors."""
import numpy as np
import pytest

import kiln
from conftest import errors_of

RNG = np.random.default_rng(11)


def _spd(n, batch=(), dtype=np.float64):
    a = RNG.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def _close(ours, theirs, rtol):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=rtol)


def _general(n, batch=(), dtype=np.float64):
    return (RNG.standard_normal(batch + (n, n)) + 2 * np.eye(n)).astype(dtype)


CASES = [
    ("inv", lambda m, a: m.linalg.inv(a), [_general(3, (2,))]),
    ("inv_adjoint", lambda m, a: m.linalg.inv(a, adjoint=True), [_general(4)]),
    ("det", lambda m, a: m.linalg.det(a), [_general(3, (2, 2))]),
    ("det_empty", lambda m, a: m.linalg.det(a), [np.zeros([3, 0, 0])]),
    ("det_singular", lambda m, a: m.linalg.det(a), [np.float64([[1, 2], [2, 4]])]),
    ("slogdet_sign", lambda m, a: m.linalg.slogdet(a)[0], [_general(3, (2, 2))]),
    ("slogdet_log", lambda m, a: m.linalg.slogdet(a)[1], [_general(3, (2, 2))]),
    # det overflows float32 here; log|det| does not
    ("slogdet_huge", lambda m, a: m.linalg.slogdet(a)[1], [(100 * np.eye(40)).astype(np.float32)]),
    ("slogdet_singular", lambda m, a: m.stack(m.linalg.slogdet(a)), [np.float64([[1, 2], [2, 4]])]),
    ("slogdet_special", lambda m, a: m.stack(m.linalg.slogdet(a)),
     [np.float64([[[2, 4], [1, 2]], [[np.nan, 1], [1, 1]], [[np.inf, 1], [1, 1]]])]),
    ("slogdet_empty", lambda m, a: m.stack(m.linalg.slogdet(a)), [np.zeros([2, 0, 0])]),
    ("solve", lambda m, a, b: m.linalg.solve(a, b), [_general(3, (2,)), RNG.standard_normal((2, 3, 2))]),
    ("solve_adjoint", lambda m, a, b: m.linalg.solve(a, b, adjoint=True), [_general(3), RNG.standard_normal((3, 1))]),
    ("cholesky", lambda m, a: m.linalg.cholesky(a), [_spd(4, (2,))]),
    # not positive definite: NaN below (TensorFlow leaves the upper triangle uninitialized)
    ("cholesky_not_pd", lambda m, a: m.linalg.band_part(m.linalg.cholesky(a), -1, 0), [-np.eye(2)]),
    ("triangular_lower", lambda m, a, b: m.linalg.triangular_solve(a, b), [np.tril(_general(3)),
                                                                           RNG.standard_normal((3, 2))]),
    ("triangular_upper_adjoint", lambda m, a, b: m.linalg.triangular_solve(a, b, lower=False, adjoint=True),
     [np.triu(_general(3, (1,))), RNG.standard_normal((4, 3, 2))]),
    ("cholesky_solve", lambda m, a, b: m.linalg.cholesky_solve(m.linalg.cholesky(a), b),
     [_spd(3), RNG.standard_normal((3, 2))]),
    ("band_part", lambda m, a: m.linalg.band_part(a, 1, 0), [RNG.standard_normal((2, 3, 4))]),
    ("band_part_all", lambda m, a: m.linalg.band_part(a, -1, 2), [RNG.standard_normal((4, 3))]),
    ("trace", lambda m, a: m.linalg.trace(a), [RNG.standard_normal((2, 3, 3))]),
    ("diag_part", lambda m, a: m.linalg.diag_part(a), [RNG.standard_normal((2, 3, 3))]),
    ("adjoint", lambda m, a: m.linalg.adjoint(a), [RNG.standard_normal((2, 3, 4))]),
    ("matvec", lambda m, a, b: m.linalg.matvec(a, b), [RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4))]),
    ("norm", lambda m, a: m.linalg.norm(a), [RNG.standard_normal((3, 4))]),
    ("norm_axis", lambda m, a: m.linalg.norm(a, ord=1, axis=1), [RNG.standard_normal((3, 4))]),
    ("top_level_norm", lambda m, a: m.norm(a, ord="fro", axis=[-2, -1]), [RNG.standard_normal((2, 3, 4))]),
    ("float32_inv", lambda m, a: m.linalg.inv(a), [_general(3, dtype=np.float32)]),
    # Singular and eigen vectors are unique up to sign: compared as absolute values, and the
    # products as they are.
    ("svd_values", lambda m, a: m.linalg.svd(a, compute_uv=False), [RNG.standard_normal((2, 4, 3))]),
    ("svd_abs_u", lambda m, a: m.abs(m.linalg.svd(a)[1]), [RNG.standard_normal((2, 4, 3))]),
    ("svd_abs_v_full", lambda m, a: m.abs(m.linalg.svd(a, full_matrices=True)[2]), [RNG.standard_normal((3, 5))]),
    ("svd_rebuilt", lambda m, a: (lambda s, u, v: m.matmul(u * s[..., None, :], v, adjoint_b=True))(
        *m.linalg.svd(a)), [RNG.standard_normal((2, 3, 4))]),
    ("svd_empty", lambda m, a: m.linalg.svd(a, compute_uv=False), [np.zeros([2, 0, 3])]),
    ("svd_float32", lambda m, a: m.linalg.svd(a, compute_uv=False), [RNG.standard_normal((5, 5)).astype(np.float32)]),
    ("qr_abs_r", lambda m, a: m.abs(m.linalg.qr(a)[1]), [RNG.standard_normal((2, 4, 3))]),
    ("qr_abs_q_full", lambda m, a: m.abs(m.linalg.qr(a, full_matrices=True)[0]), [RNG.standard_normal((4, 3))]),
    ("qr_rebuilt", lambda m, a: m.matmul(*m.linalg.qr(a)), [RNG.standard_normal((3, 5))]),
    ("eigh_values", lambda m, a: m.linalg.eigh(a)[0], [_spd(4, (2,))]),
    ("eigh_abs_vectors", lambda m, a: m.abs(m.linalg.eigh(a)[1]), [_spd(3)]),
    ("eigvalsh", lambda m, a: m.linalg.eigvalsh(a), [_spd(5)]),
    ("diag", lambda m, a: m.linalg.diag(a), [RNG.standard_normal((2, 3))]),
    # zero-sized matrices: the outputs' shapes (their values are empty, or identity for a full q)
    ("qr_empty", lambda m, a: m.concat([m.shape(t) for t in m.linalg.qr(a)], 0), [np.zeros([2, 0, 3])]),
    ("qr_full_empty", lambda m, a: m.concat([m.shape(t) for t in m.linalg.qr(a, full_matrices=True)], 0), [np.zeros([3, 0])]),
    ("qr_full_empty_q", lambda m, a: m.linalg.qr(a, full_matrices=True)[0], [np.zeros([3, 0])]),
    ("svd_full_empty", lambda m, a: m.concat([m.shape(t) for t in m.linalg.svd(a, full_matrices=True)], 0),
     [np.zeros([2, 3, 0])]),
    ("eigh_empty", lambda m, a: m.concat([m.shape(t) for t in m.linalg.eigh(a)], 0), [np.zeros([2, 0, 0])]),
    ("svd_of_nan", lambda m, a: m.concat([m.reshape(t, [-1]) for t in m.linalg.svd(a)], 0),
     [np.array([[[1, np.nan], [0, 1]], [[np.inf, 0], [0, 1]]])]),
]


@pytest.mark.parametrize("name,fn,xs", CASES, ids=[c[0] for c in CASES])
def test_values_eagerly_and_traced(tf, name, fn, xs):
    theirs = fn(tf, *[tf.constant(x) for x in xs]).numpy()
    rtol = 1e-4 if xs[0].dtype == np.float32 else 1e-10
    _close(fn(kiln, *[kiln.constant(x) for x in xs]).numpy(), theirs, rtol)
    _close(kiln.function(lambda *a: fn(kiln, *a))(*xs).numpy(), theirs, rtol)


GRADS = [("inv", lambda m, a: m.linalg.inv(a), _general(3, (2,))),
         ("det", lambda m, a: m.linalg.det(a), _general(3)),
         ("slogdet", lambda m, a: m.linalg.slogdet(a)[1], _general(3, (2,))),
         ("band_part", lambda m, a: m.linalg.band_part(a, 0, 1), RNG.standard_normal((3, 3)))]


@pytest.mark.parametrize("name,fn,x", GRADS, ids=[g[0] for g in GRADS])
def test_gradients(tf, name, fn, x):
    def grad(m):
        v = m.Variable(x)
        with m.GradientTape() as tape:
            y = m.reduce_sum(fn(m, v) * 1.5)
        return tape.gradient(y, v).numpy()
    _close(grad(kiln), grad(tf), 1e-9)


BAD = [
    ("singular_inverse", lambda m: m.linalg.inv(np.zeros([2, 2], np.float32))),
    ("non_square", lambda m: m.linalg.inv(np.zeros([2, 3], np.float32))),
    ("rank_1", lambda m: m.raw_ops.MatrixInverse(input=np.zeros([2], np.float32))),
    ("int_inverse", lambda m: m.raw_ops.MatrixInverse(input=np.zeros([2, 2], np.int32))),
    ("det_non_square", lambda m: m.linalg.det(np.zeros([2, 3], np.float32))),
    ("svd_rank_1", lambda m: m.raw_ops.Svd(input=np.ones([3], np.float32))),
    ("qr_rank_1", lambda m: m.raw_ops.Qr(input=np.ones([3], np.float32))),
    ("eigh_not_square", lambda m: m.raw_ops.SelfAdjointEigV2(input=np.ones([2, 3], np.float32))),
    ("svd_int", lambda m: m.raw_ops.Svd(input=np.ones([2, 2], np.int32))),
    ("eigh_of_nan", lambda m: m.linalg.eigh(np.array([[np.nan, 1], [1, 1]]))),
    ("slogdet_non_square", lambda m: m.linalg.slogdet(np.zeros([2, 3], np.float32))),
    ("slogdet_int", lambda m: m.raw_ops.LogMatrixDeterminant(input=np.zeros([2, 2], np.int32))),
    ("singular_solve", lambda m: m.linalg.solve(np.zeros([2, 2], np.float32), np.ones([2, 1], np.float32))),
    ("solve_shapes", lambda m: m.linalg.solve(np.eye(2, dtype=np.float32), np.ones([3, 1], np.float32))),
    ("solve_batches", lambda m: m.raw_ops.MatrixSolve(matrix=np.ones([2, 3, 3], np.float32),
                                                       rhs=np.ones([1, 3, 1], np.float32))),
    ("band_too_wide", lambda m: m.linalg.band_part(np.ones([3, 3], np.float32), 5, 0)),
    ("band_rank_1", lambda m: m.raw_ops.MatrixBandPart(input=np.ones([3], np.float32), num_lower=1, num_upper=0)),
    ("triangular_batches", lambda m: m.linalg.triangular_solve(np.ones([2, 3, 3], np.float32),
                                                               np.ones([3, 3, 1], np.float32))),
]


@pytest.mark.parametrize("name,call", BAD, ids=[b[0] for b in BAD])
def test_bad_arguments_raise_tensorflows_errors(tf, name, call):
    ours, theirs = errors_of(call, tf)
    # kiln's list of allowed dtypes is its own (float and double so far)
    want = str(theirs).split("\n")[0].split(" [Op:")[0].split("}} ")[-1].split(" is not in the list")[0]
    assert want in str(ours), (str(ours), want)
