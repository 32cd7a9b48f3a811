"""kiln.config: threading (tf.config.threading's intra-op and inter-op settings) and run_functions_eagerly."""
import numpy as np
import pytest

import kiln


def test_intra_op_parallelism_threads_round_trip():
    threading = kiln.config.threading
    assert threading.get_intra_op_parallelism_threads() == 0  # never set, as TensorFlow reports it
    x = kiln.constant(np.random.default_rng(0).standard_normal((300, 300)).astype(np.float32))
    default_result = kiln.reduce_sum(kiln.matmul(x, x)).numpy()
    try:
        threading.set_intra_op_parallelism_threads(1)
        assert threading.get_intra_op_parallelism_threads() == 1
        # One thread or many: the same bits (kiln splits work, never the order of a sum).
        assert kiln.reduce_sum(kiln.matmul(x, x)).numpy() == default_result
        with pytest.raises(TypeError):
            threading.set_intra_op_parallelism_threads("2")
    finally:
        threading.set_intra_op_parallelism_threads(0)
    assert threading.get_intra_op_parallelism_threads() == 0


def test_inter_op_parallelism_threads_round_trip(tf):
    threading = kiln.config.threading
    # Never set: both report 0.
    assert threading.get_inter_op_parallelism_threads() == tf.config.threading.get_inter_op_parallelism_threads() == 0
    rng = np.random.default_rng(1)
    a, b, w = (kiln.constant(rng.standard_normal((192, 192)).astype(np.float32) * 0.1) for _ in range(3))

    @kiln.function
    def branches(a, b, w):
        for _ in range(6):
            a, b = kiln.tanh(kiln.matmul(a, w)), kiln.tanh(kiln.matmul(b, w))
        return a + b

    want = branches(a, b, w).numpy()
    try:
        for n in (1, 2, 0):
            threading.set_inter_op_parallelism_threads(n)
            assert threading.get_inter_op_parallelism_threads() == n
            np.testing.assert_array_equal(branches(a, b, w).numpy(), want)  # the same bits either way
        with pytest.raises(TypeError):
            threading.set_inter_op_parallelism_threads("2")
    finally:
        threading.set_inter_op_parallelism_threads(0)
    assert threading.get_inter_op_parallelism_threads() == 0
