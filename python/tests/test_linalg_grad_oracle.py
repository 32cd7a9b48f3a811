"""Gradients of the linear-algebra ops kiln differentiates (solve, triangular_solve, cholesky,
eigh, qr, svd, inv, det), compared with TensorFlow's in the same test, eagerly and traced."""
import numpy as np
import pytest

import kiln

tf = pytest.importorskip("tensorflow")
RNG = np.random.default_rng(21)


def _spd(n, batch=()):
    a = RNG.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _lower(n, batch=()):
    return np.tril(RNG.standard_normal(batch + (n, n))) + 3 * np.eye(n)


def _svd_products(m, a, full=False):
    """s, and U diag(s^2) V^T, U o U and V o V (first columns): every output used, no sign seen."""
    s, u, v = m.linalg.svd(a, full_matrices=full)
    k = s.shape[-1]
    uk, vk = u[..., :k], v[..., :k]
    recon = m.matmul(uk * (s * s)[..., None, :], vk, adjoint_b=True)
    return m.concat([m.reduce_sum(recon, axis=-1), m.reduce_sum(u * u * m.range(1.0, u.shape[-1] + 1.0, dtype=u.dtype),
                                                                 axis=-1),
                     m.reduce_sum(v * v * m.range(1.0, v.shape[-1] + 1.0, dtype=v.dtype), axis=-1), s], axis=-1)


CASES = {
    "solve": (lambda m, a, b: m.linalg.solve(a, b), lambda: [RNG.standard_normal((3, 3)) + 3 * np.eye(3),
                                                             RNG.standard_normal((3, 2))]),
    "solve_adjoint": (lambda m, a, b: m.linalg.solve(a, b, adjoint=True),
                      lambda: [RNG.standard_normal((2, 4, 4)) + 4 * np.eye(4), RNG.standard_normal((2, 4, 1))]),
    "triangular_lower": (lambda m, a, b: m.linalg.triangular_solve(a, b, lower=True),
                         lambda: [_lower(3), RNG.standard_normal((3, 2))]),
    "triangular_upper_adjoint": (lambda m, a, b: m.linalg.triangular_solve(a, b, lower=False, adjoint=True),
                                 lambda: [np.swapaxes(_lower(4, (2,)), -1, -2), RNG.standard_normal((2, 4, 3))]),
    "cholesky": (lambda m, a: m.linalg.cholesky(a), lambda: [_spd(4)]),
    "cholesky_batch": (lambda m, a: m.linalg.cholesky(a), lambda: [_spd(3, (2,))]),
    "eigh_values": (lambda m, a: m.linalg.eigh(a)[0], lambda: [_spd(4)]),
    "eigh_both": (lambda m, a: m.linalg.eigh(a)[0] + m.reduce_sum(m.abs(m.linalg.eigh(a)[1]), axis=-2),
                  lambda: [_spd(3, (2,))]),
    "qr_square": (lambda m, a: m.linalg.qr(a)[0] * 2.0 + m.linalg.qr(a)[1], lambda: [RNG.standard_normal((3, 3))]),
    "qr_tall_batch": (lambda m, a: m.linalg.qr(a)[1], lambda: [RNG.standard_normal((2, 5, 3))]),
    "qr_q_only": (lambda m, a: m.linalg.qr(a)[0], lambda: [RNG.standard_normal((4, 2))]),
    "qr_wide": (lambda m, a: m.linalg.qr(a)[0] * 2.0 + m.linalg.qr(a)[1][..., :3], lambda: [RNG.standard_normal((3, 5))]),
    "qr_wide_full_batch": (lambda m, a: m.reduce_sum(m.linalg.qr(a, full_matrices=True)[1], axis=-2),
                           lambda: [RNG.standard_normal((2, 2, 4))]),
    "qr_square_full": (lambda m, a: m.linalg.qr(a, full_matrices=True)[0], lambda: [RNG.standard_normal((3, 3))]),
    # Losses of U and V that do not depend on the signs Eigen and TensorFlow may choose.
    "svd_values": (lambda m, a: m.linalg.svd(a, compute_uv=False), lambda: [RNG.standard_normal((2, 4, 3))]),
    "svd_square": (lambda m, a: _svd_products(m, a), lambda: [RNG.standard_normal((3, 3))]),
    "svd_wide": (lambda m, a: _svd_products(m, a), lambda: [RNG.standard_normal((2, 3, 5))]),
    "svd_tall": (lambda m, a: _svd_products(m, a), lambda: [RNG.standard_normal((5, 3))]),
    "svd_full_wide": (lambda m, a: _svd_products(m, a, full=True), lambda: [RNG.standard_normal((3, 4))]),
    "svd_full_tall": (lambda m, a: _svd_products(m, a, full=True), lambda: [RNG.standard_normal((2, 4, 3))]),
    "svd_full_square": (lambda m, a: _svd_products(m, a, full=True), lambda: [RNG.standard_normal((4, 4))]),
    "inv": (lambda m, a: m.linalg.inv(a), lambda: [_spd(3)]),
    "det": (lambda m, a: m.linalg.det(a), lambda: [_spd(3, (2,))]),
}


def _gradients(m, fn, values, weights, traced):
    def grads(*xs):
        with m.GradientTape() as tape:
            for x in xs:
                tape.watch(x)
            y = fn(m, *xs)
            loss = m.reduce_sum(y * weights)
        return tape.gradient(loss, list(xs))

    xs = [m.constant(v) for v in values]
    return [g.numpy() for g in (m.function(grads)(*xs) if traced else grads(*xs))]


@pytest.mark.parametrize("traced", [False, True])
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_are_tensorflows(name, traced):
    fn, make = CASES[name]
    values = make()
    out_shape = fn(tf, *[tf.constant(v) for v in values]).shape
    weights = RNG.standard_normal(out_shape)
    want = _gradients(tf, fn, values, weights, False)
    got = _gradients(kiln, fn, values, weights, traced)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-9)


def test_eigh_without_vectors_has_no_gradient_as_tensorflow():
    a = kiln.constant(_spd(3))
    with kiln.GradientTape() as tape:
        tape.watch(a)
        e = kiln.raw_ops.SelfAdjointEigV2(input=a, compute_v=False)[0]
    with pytest.raises(kiln.errors.InvalidArgumentError, match="compute_v"):
        tape.gradient(e, a)


# TensorFlow raises NotImplementedError; kiln the UnimplementedError of its gradient registry.
NO_GRADIENT = [
    ("qr_full_tall", lambda m, a: sum(m.reduce_sum(t) for t in m.linalg.qr(a, full_matrices=True)), (4, 2),
     "nrows > ncols"),
    ("svd_full_far_from_square", lambda m, a: m.reduce_sum(m.linalg.svd(a, full_matrices=True)[1] ** 2), (5, 2),
     "abs\\(m - n\\) > 1"),
]


@pytest.mark.parametrize("name,fn,shape,message", NO_GRADIENT, ids=[c[0] for c in NO_GRADIENT])
def test_decompositions_without_a_gradient_say_so_as_tensorflow(name, fn, shape, message):
    for m, error in ((tf, NotImplementedError), (kiln, kiln.errors.UnimplementedError)):
        a = m.constant(RNG.standard_normal(shape))
        with m.GradientTape() as tape:
            tape.watch(a)
            loss = fn(m, a)
        with pytest.raises(error, match=message):
            tape.gradient(loss, a)
