"""A ConcreteFunction, or a function of a loaded SavedModel, called under a GradientTape or
inside another function's trace: TensorFlow differentiates and inlines the call; kiln runs the
graph's ops one by one (trace/replay.h) so the tape and the trace see them. Every gradient is
compared with TensorFlow's in the same test."""
import numpy as np
import pytest

import kiln

RNG = np.random.default_rng(5)


def _both(tf, build):
    """build(m) -> value (a list of arrays), run on TensorFlow and on kiln."""
    want = [np.asarray(v) for v in build(tf)]
    got = [np.asarray(v) for v in build(kiln)]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_the_advanced_autodiff_guides_concrete_function(tf):
    x0 = RNG.standard_normal((3, 2)).astype(np.float32)

    def build(m):
        layer = m.Variable(RNG.standard_normal((2, 4)).astype(np.float32) * 0 + 0.5)

        @m.function
        def f(x):
            return m.nn.tanh(m.matmul(x, layer)) * 2.0

        cf = f.get_concrete_function(m.TensorSpec([None, 2], m.float32))
        x = m.constant(x0)
        with m.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = cf(x)
            loss = m.reduce_sum(y * y)
        return [y, *tape.gradient(loss, [x, layer])]

    _both(tf, build)


def test_control_flow_in_the_graph_is_differentiated(tf):
    def build(m):
        @m.function
        def f(x, n):
            if m.reduce_sum(x) > 0:
                x = x * 3.0
            else:
                x = -x
            i = m.constant(0)
            while i < n:
                x = m.sin(x) + x
                i += 1
            return x

        cf = f.get_concrete_function(m.TensorSpec([2], m.float32), m.TensorSpec([], m.int32))
        out = []
        for v in ([0.5, 1.0], [-2.0, 0.25]):
            x = m.constant(v)
            with m.GradientTape() as tape:
                tape.watch(x)
                y = cf(x, m.constant(3))
            out += [y, tape.gradient(y, x)]
        return out

    _both(tf, build)


def test_second_order_through_a_concrete_function(tf):
    def build(m):
        @m.function
        def f(x):
            return x * x * x

        cf = f.get_concrete_function(m.TensorSpec([], m.float32))
        x = m.constant(1.5)
        with m.GradientTape() as outer:
            outer.watch(x)
            with m.GradientTape() as inner:
                inner.watch(x)
                y = cf(x)
            dy = inner.gradient(y, x)
        return [y, dy, outer.gradient(dy, x)]

    _both(tf, build)


def test_a_concrete_function_called_inside_another_trace_is_inlined(tf):
    def build(m):
        @m.function
        def inner(x):
            return x * 2.0 + 1.0

        cf = inner.get_concrete_function(m.TensorSpec([None], m.float32))

        @m.function
        def outer(x):
            return cf(x) + cf(x * x)

        return [outer(m.constant([1.0, 2.0, 3.0])), outer(m.constant([4.0]))]

    _both(tf, build)


@pytest.mark.parametrize("saver", ["kiln", "tf"])
def test_a_loaded_modules_function_trains_under_a_tape(tf, tmp_path, saver):
    """The saved_model guide's pattern: load a module, compute a loss with its function under a
    tape, and apply the gradient to its variables."""
    m = kiln if saver == "kiln" else tf
    w0 = RNG.standard_normal((3, 1)).astype(np.float32)

    class Linear(m.Module):
        def __init__(self):
            super().__init__()
            self.w = m.Variable(w0)
            self.b = m.Variable(np.zeros(1, np.float32))

        @m.function(input_signature=[m.TensorSpec([None, 3], m.float32)])
        def __call__(self, x):
            return m.matmul(x, self.w) + self.b

    path = str(tmp_path / "linear")
    m.saved_model.save(Linear(), path)
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    y = RNG.standard_normal((4, 1)).astype(np.float32)
    results = {}
    for lib in (tf, kiln):
        loaded = lib.saved_model.load(path)
        for _ in range(3):
            with lib.GradientTape() as tape:
                loss = lib.reduce_mean((loaded(lib.constant(x)) - y) ** 2)
            grads = tape.gradient(loss, [loaded.w, loaded.b])
            for v, g in zip([loaded.w, loaded.b], grads):
                v.assign_sub(0.1 * g)
        results[lib] = [loss.numpy(), loaded.w.numpy(), loaded.b.numpy()]
    for g, w in zip(results[kiln], results[tf]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_wrong_arguments_under_a_tape_are_errors(tf):
    @kiln.function
    def f(x):
        return x * 2.0

    cf = f.get_concrete_function(kiln.TensorSpec([2], kiln.float32))
    with kiln.GradientTape():
        with pytest.raises(TypeError):
            cf(kiln.constant([1.0, 2.0, 3.0]))
        with pytest.raises(kiln.errors.InvalidArgumentError):
            cf(kiln.constant([1, 2]))


def test_a_custom_gradient_in_the_graph_is_refused_not_dropped():
    """Replaying the ops would differentiate the forward ops, not apply the custom gradient:
    kiln says so (TensorFlow applies it). The kiln.function itself applies it."""
    @kiln.custom_gradient
    def clip_gradients(y):
        return y, lambda dy: kiln.clip_by_norm(dy, 0.5)

    @kiln.function
    def f(x):
        return clip_gradients(x)

    cf = f.get_concrete_function(kiln.TensorSpec([], kiln.float32))
    v = kiln.Variable(2.0)
    with kiln.GradientTape() as t:
        with pytest.raises(kiln.errors.UnimplementedError, match="custom gradient"):
            cf(v * v)
        out = f(v * v)
    assert t.gradient(out, v).numpy() == 2.0
    assert cf(kiln.constant(3.0)).numpy() == 3.0  # no tape: the graph runs
