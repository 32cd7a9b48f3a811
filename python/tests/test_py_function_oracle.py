"""tf.py_function against TensorFlow in the same test: the function guide's cell (its prints,
call for call), several outputs, Tout=None, gradients eagerly, and an exception inside."""
import numpy as np
import pytest

import kiln
from conftest import errors_of


def test_the_function_guides_cell(tf, capsys):
    outputs = []
    for m in (tf, kiln):
        @m.py_function(Tout=m.float32)
        def py_plus(x, y):
            print("Executing eagerly.")
            return x + y

        @m.function
        def tf_wrapper(x, y):
            print("Tracing.")
            return py_plus(x, y)

        capsys.readouterr()
        values = [tf_wrapper(m.constant(1.0), m.constant(2.0)).numpy() for _ in range(2)]
        outputs.append((values, capsys.readouterr().out))
    assert outputs[0] == outputs[1]
    assert outputs[1][1] == "Tracing.\nExecuting eagerly.\nExecuting eagerly.\n"


@pytest.mark.parametrize("traced", [False, True])
def test_outputs_dtypes_and_none(tf, traced):
    results = []
    for m in (tf, kiln):
        seen = []

        def program(x):
            a, s = m.py_function(lambda v: (v * 2, m.strings.as_string(v, precision=1)), [x], [m.float32, m.string])
            m.py_function(lambda v: seen.append(float(m.reduce_sum(v))), [x], [])
            return a, s, m.py_function(lambda v: m.cast(v, m.int64) + 1, [x], m.int64)

        f = m.function(program) if traced else program
        out = f(m.constant([1.5, 2.0]))
        results.append(([o.numpy().tolist() for o in out], [o.dtype.name for o in out], seen))
    assert results[0] == results[1]


def test_eager_gradients_flow_through(tf):
    grads = []
    for m in (tf, kiln):
        x = m.constant(3.0)
        with m.GradientTape() as tape:
            tape.watch(x)
            y = m.py_function(lambda v: v * v * v, [x], m.float32)
        grads.append(tape.gradient(y, x).numpy())
    assert grads[0] == grads[1] == 27.0


@pytest.mark.parametrize("exception", [ZeroDivisionError, ValueError, NotImplementedError, StopIteration])
def test_an_exception_inside_is_tensorflows_error(tf, exception):
    def raise_it(v):
        raise exception("from inside")

    def call(m):
        @m.function
        def f(x):
            return m.py_function(raise_it, [x], m.float32)

        return f(m.constant(1.0))

    ours, theirs = errors_of(call, tf)  # the same class
    assert "%s: from inside" % exception.__name__ in str(ours)


def test_tout_is_required(tf):
    for m in (tf, kiln):
        with pytest.raises(TypeError, match="Missing required argument: 'Tout'"):
            m.py_function(lambda x: x, [1.0])
