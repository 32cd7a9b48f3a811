"""kiln.config: threading (tf.config.threading's intra-op setting) and run_functions_eagerly."""
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
