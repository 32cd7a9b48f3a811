"""ConcatV2 and Pack large enough to split over the intra-op threads, against TensorFlow in the
same process: a thread's range of the output may start inside any input's chunk of a row and
end in another row, pieces may be empty, and the result is the same on one thread or two."""
import numpy as np
import pytest

import kiln

# Element counts above the split threshold (256 KB of output), with rows whose chunks are not
# multiples of one another, so thread boundaries fall inside chunks.
CASES = [
    # (shapes of the pieces, axis)
    ([(3, 97, 61, 37), (3, 97, 61, 5), (3, 97, 61, 0), (3, 97, 61, 11)], 3),  # DenseNet-like channels
    ([(2, 301, 7, 3), (2, 1, 7, 3), (2, 450, 7, 3)], 1),
    ([(70001,), (3,), (0,), (12345,)], 0),  # one row: the split falls inside single copies
    ([(1, 200, 300), (4, 200, 300)], 0),
    ([(256, 0), (256, 1031), (256, 1)], -1),
]


def pieces(shapes, dtype, rng):
    out = []
    for s in shapes:
        if dtype == np.bool_:
            out.append(rng.integers(0, 2, s).astype(np.bool_))
        elif np.issubdtype(dtype, np.complexfloating):
            out.append((rng.standard_normal(s) + 1j * rng.standard_normal(s)).astype(dtype))
        else:
            out.append((rng.standard_normal(s) * 50).astype(dtype))
    return out


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.float64, np.complex64, np.bool_])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_concat_splits_over_threads_with_tensorflows_values(tf, threads, dtype, case):
    shapes, axis = CASES[case]
    xs = pieces(shapes, dtype, np.random.default_rng(case))
    expected = tf.concat([tf.constant(x) for x in xs], axis).numpy()
    threading = kiln.config.threading
    try:
        threading.set_intra_op_parallelism_threads(threads)
        eager = kiln.concat([kiln.constant(x) for x in xs], axis).numpy()
        traced = kiln.function(lambda *a: kiln.concat(list(a), axis))(*[kiln.constant(x) for x in xs]).numpy()
    finally:
        threading.set_intra_op_parallelism_threads(0)
    np.testing.assert_array_equal(eager, expected)
    np.testing.assert_array_equal(traced, expected)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_stack_splits_over_threads_with_tensorflows_values(tf, threads, axis):
    rng = np.random.default_rng(7)
    xs = [rng.standard_normal((33, 129, 17)).astype(np.float32) for _ in range(5)]
    expected = tf.stack([tf.constant(x) for x in xs], axis).numpy()
    threading = kiln.config.threading
    try:
        threading.set_intra_op_parallelism_threads(threads)
        got = kiln.stack([kiln.constant(x) for x in xs], axis).numpy()
    finally:
        threading.set_intra_op_parallelism_threads(0)
    np.testing.assert_array_equal(got, expected)


def test_concat_of_strings_splits_over_threads(tf):
    # Strings are not plain bytes in a tensor: a split copy must still give each its own.
    rng = np.random.default_rng(3)
    a = np.array([str(v) for v in rng.integers(0, 10**9, 200 * 300)], dtype=object).reshape(200, 300)
    b = np.array(["x" * int(v) for v in rng.integers(0, 40, 200 * 31)], dtype=object).reshape(200, 31)
    expected = tf.concat([tf.constant(a), tf.constant(b)], 1).numpy()
    threading = kiln.config.threading
    try:
        threading.set_intra_op_parallelism_threads(2)
        got = kiln.concat([kiln.constant(a), kiln.constant(b)], 1).numpy()
    finally:
        threading.set_intra_op_parallelism_threads(0)
    np.testing.assert_array_equal(got, expected)
