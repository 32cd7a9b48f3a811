"""Shapes spelled out by a graph's own shape arithmetic, against TensorFlow in the same
process: a Reshape whose shape is built while the graph runs (Shape, a slice of it, Cast,
Pack, ConcatV2, arithmetic on known dimensions, tf.tensordot) has, while tracing and in the
concrete function's outputs, the dimensions TensorFlow's shape inference finds: no fewer,
and no more (a GatherV2 or an Identity of a shape is not evaluated until the optimizer)."""
import numpy as np
import pytest

import kiln


def tensordot_like(m):
    def f(x, w):
        free = m.gather(m.shape(x), [0, 1])
        y = m.reshape(m.matmul(m.reshape(x, [-1, 8]), w), m.concat([free, [16]], 0))
        return m.nn.relu(y)

    return f, [m.TensorSpec([None, 5, 8], m.float32), m.TensorSpec([8, 16], m.float32)]


def packed(m):
    def f(x):
        return m.reshape(x, m.stack([m.shape(x)[0], 40]))

    return f, [m.TensorSpec([None, 5, 8], m.float32)]


def cast_shape(m):
    def f(x):
        s = m.cast(m.shape(x, out_type=m.int64), m.int32)
        return m.reshape(x * 2.0, m.concat([s[:1], [-1, 2]], 0))

    return f, [m.TensorSpec([None, 4, 6], m.float32)]


def unknown_rank(m):
    def f(x):
        return m.reshape(x, m.concat([m.shape(x)[:1], [-1]], 0))

    return f, [m.TensorSpec(None, m.float32)]


def real_tensordot(m):
    def f(x, w):
        return m.tensordot(x, w, axes=1)

    return f, [m.TensorSpec([None, 5, 8], m.float32), m.TensorSpec([8, 16], m.float32)]


def sliced(m):
    def f(x):
        return m.reshape(x, m.concat([m.shape(x)[1:], [-1]], 0))

    return f, [m.TensorSpec([None, 5, 8], m.float32)]


def reversed_shape(m):
    # (x.shape[::-1], with masks, is a ValueError in TensorFlow's shape inference.)
    def f(x):
        s = m.shape(x)
        return m.reshape(x, m.concat([s[2:0:-1], s[:1]], 0))

    return f, [m.TensorSpec([None, 5, 8], m.float32)]


def stepped_slices(m):
    def f(x):
        s = m.shape(x)
        return m.reshape(x, m.concat([s[-1:0:-2], s[:1], [1]], 0))

    return f, [m.TensorSpec([None, 5, 8, 3], m.float32)]


def huge_step(m):
    def f(x):
        s = m.shape(x, out_type=m.int64)
        return m.reshape(x, m.concat([s[1:3:2 ** 62], s[-1:-4:-(2 ** 62)], m.constant([-1], m.int64)], 0))

    return f, [m.TensorSpec([None, 5, 8], m.float32)]


def fill_by_shape(m):
    def f(x):
        return m.fill(m.stack([m.shape(x)[0], 5]), 1.0)

    return f, [m.TensorSpec([None, 5, 8], m.float32)]


def zeros_by_shape(m):
    def f(x):
        return m.zeros(m.shape(x)[1:])

    return f, [m.TensorSpec([None, 5, 8], m.float32)]


def broadcast_to_shape(m):
    def f(x):
        return m.broadcast_to(x[:, :1, :], m.concat([m.shape(x)[:2], [8]], 0))

    return f, [m.TensorSpec([None, 5, 8], m.float32)]


def arithmetic_on_dimensions(m):
    def f(x):
        s = m.shape(x)
        return m.reshape(x, m.stack([s[0], s[1], s[2] // 2, 2]))

    return f, [m.TensorSpec([None, 5, 8], m.float32)]


def identity_of_a_shape(m):
    def f(x):
        return m.reshape(x, m.identity(m.concat([m.shape(x)[:2], [8]], 0)))

    return f, [m.TensorSpec([None, 5, 8], m.float32)]


CASES = {"slice of a shape": sliced, "reversed shape": reversed_shape, "stepped slices": stepped_slices, "fill": fill_by_shape, "zeros": zeros_by_shape, "broadcast_to": broadcast_to_shape, "arithmetic on dimensions": arithmetic_on_dimensions,
         "identity of a shape": identity_of_a_shape,
"tensordot-like": tensordot_like, "pack": packed, "cast and slice": cast_shape,
         "unknown rank": unknown_rank, "tf.tensordot": real_tensordot}


def traced_shapes(m, case):
    """The output's shape seen while tracing, and the concrete function's output shape."""
    body, specs = case(m)
    seen = []

    def traced(*args):
        y = body(*args)
        seen.append(y.shape.as_list() if y.shape.rank is not None else None)
        return y

    cf = m.function(traced).get_concrete_function(*specs)
    out = cf.structured_outputs.shape
    return seen[0], (out.as_list() if out.rank is not None else None)


@pytest.mark.parametrize("name", sorted(CASES))
def test_shapes_from_shape_tensors_match_tensorflow(name, tf):
    assert traced_shapes(kiln, CASES[name]) == traced_shapes(tf, CASES[name])


def test_the_refined_reshape_still_runs_like_tensorflow(tf):
    x = np.random.default_rng(3).uniform(-1, 1, (3, 5, 8)).astype(np.float32)
    w = np.random.default_rng(4).uniform(-1, 1, (8, 16)).astype(np.float32)
    for m_name, case in (("tensordot-like", tensordot_like), ("pack", packed)):
        got, want = [], []
        for m, out in ((kiln, got), (tf, want)):
            body, specs = case(m)
            f = m.function(body, input_signature=specs)
            out.append(np.asarray(f(x, w) if len(specs) == 2 else f(x)))
        np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6, err_msg=m_name)


def test_a_step_longer_than_the_shape_takes_one_element():
    """Python's slice rules are the oracle here: TensorFlow's shape inference does not return
    on this graph (a step of 2**62)."""
    static = [None, 5, 8]
    want = static[1:3:2 ** 62] + static[-1:-4:-(2 ** 62)] + [None]
    assert traced_shapes(kiln, huge_step) == (want, want)
    x = np.ones([2, 5, 8], np.float32)
    body, specs = huge_step(kiln)
    assert kiln.function(body, input_signature=specs)(x).shape == (5, 8, 2)
