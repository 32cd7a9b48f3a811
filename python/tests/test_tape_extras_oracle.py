"""GradientTape as TensorFlow's guides use it beyond gradient(): stop_recording, reset,
watched_variables, watch_accessed_variables=False, variables and tensors as sources of one
call, jacobian and batch_jacobian; TensorFlow runs the same program in each test."""
import numpy as np
import pytest

import kiln


def _value(g):
    return None if g is None else np.asarray(g.numpy() if hasattr(g, "numpy") else g)


def _same(ours, theirs):
    if isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _same(o, t)
        return
    o, t = _value(ours), _value(theirs)
    if t is None:
        assert o is None
        return
    assert o is not None and o.shape == t.shape and o.dtype == t.dtype
    np.testing.assert_allclose(o, t, rtol=1e-6)


def _both(tf, program):
    _same(program(kiln), program(tf))


def _matvec(m, w, x):
    return m.reshape(m.matmul(w, m.reshape(x, [-1, 1])), [-1])


def test_mixed_sources_and_stop_recording(tf):
    def program(m):
        x, w = m.Variable([1.0, 2.0]), m.Variable([[1.0, 2.0], [3.0, 4.0]])
        c = m.constant([3.0, 4.0])
        with m.GradientTape(persistent=True) as tape:
            tape.watch(c)
            y = _matvec(m, w, x) * c
            with tape.stop_recording():
                z = x * 2.0
            loss = m.reduce_sum(y)
        return tape.gradient(loss, [x, c, w]) + [tape.gradient(z, x), tape.gradient(loss, {"w": w, "x": x})["x"]]
    _both(tf, program)


def test_watch_accessed_variables_false_and_watched_variables(tf):
    def program(m):
        x, w = m.Variable([1.0, 2.0]), m.Variable([[5.0]])
        with m.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(x)
            r = m.reduce_sum(x * m.reduce_sum(w))
        assert [v is x for v in tape.watched_variables()] == [True]
        grads = tape.gradient(r, [x, w])
        with m.GradientTape() as tape2:
            s = m.reduce_sum(w) + x[0]
        assert {id(v) for v in tape2.watched_variables()} == {id(w), id(x)}
        return grads + [tape2.gradient(s, [w, x])]
    _both(tf, program)


def test_reset_forgets_what_was_recorded(tf):
    def program(m):
        c = m.constant([1.0, 2.0])
        with m.GradientTape() as tape:
            tape.watch(c)
            first = m.reduce_sum(c * c)
            tape.reset()
            tape.watch(c)
            second = m.reduce_sum(c * 3.0)
        return [tape.gradient(first + second, c)]
    _both(tf, program)


def test_a_spent_tape_and_a_busy_one_refuse(tf):
    for m in (kiln, tf):
        c = m.constant(2.0)
        with m.GradientTape() as tape:
            tape.watch(c)
            y = c * c
        tape.gradient(y, c)
        with pytest.raises(RuntimeError, match="only be used to compute one set of gradients"):
            tape.gradient(y, c)
        with pytest.raises(RuntimeError, match="Trying to stop recording a tape which is not recording"):
            with tape.stop_recording():
                pass


@pytest.mark.parametrize("persistent", [False, True])
def test_jacobian(tf, persistent):
    def program(m):
        x = m.Variable([[1.0, 2.0, 3.0]])
        w = m.Variable(np.arange(6, dtype=np.float32).reshape(3, 2))
        with m.GradientTape(persistent=persistent) as tape:
            y = m.tanh(m.matmul(x, w))  # [1, 2]
        out = tape.jacobian(y, [x, w])
        if persistent:
            out.append(tape.jacobian(y, x, unconnected_gradients="zero"))
        return out
    _both(tf, program)


def test_jacobian_of_unconnected_sources(tf):
    def program(m):
        a, b = m.constant([1.0, 2.0]), m.constant([[3.0]])
        with m.GradientTape(persistent=True) as tape:
            tape.watch([a, b])
            y = a * a
        return [tape.jacobian(y, b), tape.jacobian(y, b, unconnected_gradients=m.UnconnectedGradients.ZERO)
                if hasattr(m, "UnconnectedGradients") else tape.jacobian(y, b, unconnected_gradients="zero")]
    _both(tf, program)


def test_batch_jacobian(tf):
    def program(m):
        x = m.constant(np.arange(12, dtype=np.float32).reshape(3, 2, 2) / 10)
        w = m.constant(np.arange(8, dtype=np.float32).reshape(4, 2) / 5)
        with m.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = m.sin(m.reshape(x, [3, 4])) @ w  # [3, 2]: row b depends on x[b] only
        return [tape.batch_jacobian(y, x), tape.batch_jacobian(x * x, x)]
    _both(tf, program)


def test_jacobian_inside_a_function(tf):
    def make(m):
        x = m.Variable([0.5, -1.0])

        def step():
            with m.GradientTape() as tape:
                y = x * x * x
            return tape.jacobian(y, x)
        return m.function(step)
    ours, theirs = make(kiln), make(tf)
    for _ in range(2):
        _same(ours(), theirs())


def test_non_trainable_variables_are_not_watched_unasked(tf):
    def program(m):
        x0 = m.Variable(3.0, name="x0")
        x1 = m.Variable(3.0, name="x1", trainable=False)
        with m.GradientTape() as tape:
            y = x0 ** 2 + x1 ** 2
        grads = tape.gradient(y, [x0, x1])
        names = [v.name for v in tape.watched_variables()]
        with m.GradientTape() as tape:
            tape.watch(x1)
            z = x1 * 2
        return grads + [tape.gradient(z, x1), m.constant(len(names))]
    _both(tf, program)


def test_structured_and_variable_targets(tf):
    def program(m):
        x = m.Variable(2.0)
        with m.GradientTape() as tape:
            y0 = x ** 2
            y1 = 1 / x
        summed = tape.gradient({"y0": y0, "y1": y1}, x)
        v0, v1 = m.Variable(2.0), m.Variable(2.0)
        with m.GradientTape() as tape:
            result = v0  # the variable itself is the target
        return [summed] + tape.gradient(result, [v0, v1])
    _both(tf, program)
