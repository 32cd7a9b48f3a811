"""An LSTM cell's four gates, split or sliced out of one product, are read by the fused
gate arithmetic in place (a window of the product's columns) instead of being copied out
by a Split or StridedSlice step first. TensorFlow runs the same functions in the same test:
results must agree over known and unknown batches, float32 and float64, and kiln's traced
results must equal its eager ones exactly."""
import numpy as np
import pytest

import kiln

UNITS = 16


def _split_cell(m):
    def cell(z, c):
        i, f, g, o = m.split(z, 4, axis=1)
        c = m.sigmoid(f) * c + m.sigmoid(i) * m.tanh(g)
        return m.sigmoid(o) * m.tanh(c), c

    return cell


def _sliced_cell(m):
    def cell(z, c):
        u = UNITS
        i, f, g, o = z[:, :u], z[:, u:2 * u], z[:, 2 * u:3 * u], z[:, -u:]
        c = m.sigmoid(f) * c + m.sigmoid(i) * m.tanh(g)
        return m.sigmoid(o) * m.tanh(c), c

    return cell


@pytest.mark.parametrize("make", [_split_cell, _sliced_cell], ids=["split", "sliced"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gate_windows_agree_with_tensorflow(tf, make, dtype):
    spec = [kiln.TensorSpec([None, 4 * UNITS], dtype), kiln.TensorSpec([None, UNITS], dtype)]
    mine = kiln.function(make(kiln), input_signature=spec)
    theirs = tf.function(make(tf))
    rng = np.random.default_rng(3)
    for batch in (0, 1, 5):
        z = rng.uniform(-3, 3, (batch, 4 * UNITS)).astype(dtype)
        c = rng.uniform(-1, 1, (batch, UNITS)).astype(dtype)
        got = [t.numpy() for t in mine(z, c)]
        want = [t.numpy() for t in theirs(tf.constant(z), tf.constant(c))]
        eager = [t.numpy() for t in make(kiln)(kiln.constant(z), kiln.constant(c))]
        for g, w, e in zip(got, want, eager):
            assert g.shape == w.shape == (batch, UNITS)
            np.testing.assert_allclose(g, w, rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-6)
            np.testing.assert_array_equal(g, e)
    types = [o["type"] for o in mine.get_concrete_function()._core.optimized_operations()]
    assert "Split" not in types and "StridedSlice" not in types, types


def test_a_window_of_a_batch_that_differs_fails_as_tensorflow_does(tf):
    cell = _split_cell(kiln)
    f = kiln.function(cell, input_signature=[kiln.TensorSpec([None, 4 * UNITS]), kiln.TensorSpec([None, UNITS])])
    z, c = np.ones((2, 4 * UNITS), np.float32), np.ones((3, UNITS), np.float32)
    with pytest.raises(kiln.errors.InvalidArgumentError) as mine:
        f(z, c)
    with pytest.raises(tf.errors.InvalidArgumentError) as theirs:
        _split_cell(tf)(tf.constant(z), tf.constant(c))
    assert "Incompatible shapes" in str(mine.value) and "Incompatible shapes" in str(theirs.value)
