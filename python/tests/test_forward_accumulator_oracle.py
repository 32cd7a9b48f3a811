"""tf.autodiff.ForwardAccumulator: Jacobian-vector products. kiln derives them from reverse mode
(double backward), TensorFlow from forward-mode rules; the same programs run on both in the
same test and the values agree to rounding."""
import numpy as np
import pytest

import kiln

tf = pytest.importorskip("tensorflow")
RNG = np.random.default_rng(5)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


X, V, W = _f32(3, 4), _f32(3, 4), _f32(4, 2)

PROGRAMS = {
    "elementwise": lambda m, x: m.tanh(x) * m.exp(x) + m.sin(x) ** 2,
    "matmul_softmax": lambda m, x: m.nn.softmax(m.matmul(x, W), axis=-1),
    "reductions": lambda m, x: m.reduce_mean(x * x, axis=0) + m.reduce_max(x, axis=1)[0],
    "primal_itself": lambda m, x: x,
    "shape_ops": lambda m, x: m.reshape(m.transpose(x), [2, 6])[:, 1:4] * 3.0,
}


def _jvp(m, program, traced):
    def run(x, v):
        with m.autodiff.ForwardAccumulator(primals=x, tangents=v) as acc:
            y = program(m, x)
        return acc.jvp(y)

    x, v = m.constant(X), m.constant(V)
    return (m.function(run) if traced else run)(x, v).numpy()


@pytest.mark.parametrize("traced", [False, True])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_jvps_are_tensorflows(name, traced):
    want = _jvp(tf, PROGRAMS[name], False)
    got = _jvp(kiln, PROGRAMS[name], traced)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)


def _structures_and_variables(m):
    x, y = m.constant(X), m.Variable(W)
    with m.autodiff.ForwardAccumulator(primals=[x, y], tangents=[m.constant(V), m.ones_like(W)]) as acc:
        out = {"product": m.matmul(x, y), "sum": m.reduce_sum(y)}
        unrelated = m.constant(2.0) * 3.0
    jvps = acc.jvp(out)
    return [jvps["product"].numpy(), jvps["sum"].numpy(), acc.jvp(unrelated),
            acc.jvp(unrelated, unconnected_gradients=m.UnconnectedGradients.ZERO).numpy(), acc.jvp(out["sum"] * 2.0)]


def test_structures_variables_and_unconnected_outputs():
    got, want = _structures_and_variables(kiln), _structures_and_variables(tf)
    for g, w in zip(got, want):
        if w is None:
            assert g is None
        else:
            np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6)


def _hessian_vector_product(m):
    x, v = m.constant(X), m.constant(V)
    with m.autodiff.ForwardAccumulator(x, v) as acc:
        with m.GradientTape() as tape:
            tape.watch(x)
            y = m.reduce_sum(m.tanh(x) ** 3)
        backward = tape.gradient(y, x)
    return acc.jvp(backward).numpy()


def test_forward_over_backward_gives_hessian_vector_products():
    np.testing.assert_allclose(_hessian_vector_product(kiln), _hessian_vector_product(tf), rtol=2e-5, atol=2e-6)


def test_bad_tangents_are_refused():
    # A tangent of another shape: kiln refuses it at once (TensorFlow accepts it here and
    # fails, or broadcasts, when the ops run).
    with pytest.raises(ValueError, match="Tangent shape"):
        kiln.autodiff.ForwardAccumulator(primals=kiln.constant(X), tangents=kiln.constant(W))
    for m in (kiln, tf):
        with pytest.raises((ValueError, TypeError)):
            m.autodiff.ForwardAccumulator(primals=[m.constant(X)], tangents=[m.constant(V), m.constant(V)])
