"""kiln.custom_gradient against tf.custom_gradient in the same test: the guides' examples,
variables, several outputs, inside a traced function, second order, and the errors."""
import numpy as np
import pytest

import kiln
from conftest import errors_of


def _log1pexp(m):
    @m.custom_gradient
    def log1pexp(x):
        e = m.exp(x)

        def grad(upstream):
            return upstream * (1 - 1 / (1 + e))
        return m.math.log(1 + e), grad
    return log1pexp


def stable_gradient(m):
    x = m.constant(100.)
    with m.GradientTape() as t:
        t.watch(x)
        y = _log1pexp(m)(x)
    return y, t.gradient(y, x)


def clipped_gradient(m):
    @m.custom_gradient
    def clip_gradients(y):
        return y, lambda dy: m.clip_by_norm(dy, 0.5)
    v = m.Variable(2.0)
    with m.GradientTape() as t:
        output = clip_gradients(v * v)
    return t.gradient(output, v)


def with_variables(m):
    w = m.Variable([1.0, 2.0])

    @m.custom_gradient
    def scaled(x):
        def grad(dy, variables=None):
            return dy * 3.0, [dy * 10.0 * v for v in variables]
        return x * w, grad
    x = m.constant([1.0, 1.0])
    with m.GradientTape() as t:
        t.watch(x)
        z = m.reduce_sum(scaled(x))
    return t.gradient(z, [x, w])


def two_outputs(m):
    @m.custom_gradient
    def h(x, y):
        return (x * y, x + y), lambda da, db: (da * y + db, da * x + db)
    a, b = m.constant(2.0), m.constant(5.0)
    with m.GradientTape(persistent=True) as t:
        t.watch([a, b])
        p, s = h(a, b)
    # s alone: h's gradient sees zeros for p
    return t.gradient(p, [a, b]) + t.gradient(s, [a, b]) + [p, s]


def traced(m):
    log1pexp = _log1pexp(m)

    @m.function
    def f(x):
        with m.GradientTape() as t:
            t.watch(x)
            y = log1pexp(x)
        return t.gradient(y, x)
    return f(m.constant([1.0, 100.0]))


def called_under_an_eager_tape(m):
    log1pexp = _log1pexp(m)
    f = m.function(lambda x: log1pexp(x) * 2.0)
    x = m.constant([0.0, 100.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = f(x)
    return t.gradient(y, x)


def second_order(m):
    @m.custom_gradient
    def sq(x):
        return x * x, lambda dy: dy * 2 * x
    x = m.constant(3.0)
    with m.GradientTape() as t2:
        t2.watch(x)
        with m.GradientTape() as t1:
            t1.watch(x)
            y = sq(x)
        g = t1.gradient(y, x)
    return [g, t2.gradient(g, x)]


def no_tape(m):
    return _log1pexp(m)(m.constant([0.0, 1.0]))


def none_gradient(m):
    @m.custom_gradient
    def f(x, y):
        return x * y, lambda dy: (dy * y, None)
    a, b = m.constant(2.0), m.constant(5.0)
    with m.GradientTape() as t:
        t.watch([a, b])
        z = f(a, b)
    return t.gradient(z, [a, b])


CASES = [stable_gradient, clipped_gradient, with_variables, two_outputs, traced, called_under_an_eager_tape,
         second_order, no_tape, none_gradient]


def _numpy(x):
    if isinstance(x, (list, tuple)):
        return [_numpy(v) for v in x]
    return None if x is None else x.numpy()


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_values_and_gradients_match_tensorflow(tf, case):
    theirs, ours = _numpy(case(tf)), _numpy(case(kiln))
    np.testing.assert_equal(ours, theirs)


def wrong_count(m):
    @m.custom_gradient
    def f(x):
        return x * 2, lambda dy: (dy, dy)
    x = m.constant(1.0)
    with m.GradientTape() as t:
        t.watch(x)
        y = f(x)
    t.gradient(y, x)


def variables_without_the_keyword(m):
    v = m.Variable(1.0)

    @m.custom_gradient
    def g(x):
        return x * v, lambda dy: dy
    g(m.constant(1.0))


@pytest.mark.parametrize("case", [wrong_count, variables_without_the_keyword])
def test_errors_match_tensorflow(tf, case):
    ours, theirs = errors_of(case, tf)
    assert str(ours).replace("kiln", "tf") == str(theirs)
