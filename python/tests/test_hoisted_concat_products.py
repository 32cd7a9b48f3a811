"""A loop body's product of [u, v] (concatenated along the columns) by a matrix W, where the
loop changes neither u nor W (a recurrent cell's matmul(concat([x, h], 1), w) over a fixed
x), multiplies u's share once before the loop (kiln's hoist_concat_products pass). The
rewritten loops must give TensorFlow's results, and loops where the share is not invariant,
or where something else reads u or W, must keep their product whole."""
import numpy as np
import pytest

import kiln

UNITS, INPUTS, BATCH = 16, 8, 5


def _report(concrete):
    return "\n".join(concrete._core.optimization_report())


def _cell_loop(m, dtype, variant="invariant", steps=40):
    """An LSTM cell over a fixed input x for `steps` steps, written as each variant needs."""
    rng = np.random.default_rng(1)
    w_np = (rng.standard_normal((INPUTS + UNITS, 4 * UNITS)) * 0.3).astype(dtype)
    w = m.constant(w_np)
    u = UNITS

    def run(x):
        def cell(i, x, h, c):
            parts = [h, x] if variant == "u second" else [x, h]
            z = m.matmul(m.concat(parts, 1), w)
            if variant == "w read elsewhere":
                z = z + m.reduce_sum(w)
            ig, fg, og, g = z[:, :u], z[:, u:2 * u], z[:, 2 * u:3 * u], z[:, 3 * u:]
            c = m.sigmoid(fg) * c + m.sigmoid(ig) * m.tanh(g)
            x_next = x * 1.01 if variant == "u changes" else x
            return i + 1, x_next, m.sigmoid(og) * m.tanh(c), c

        def cond(i, x, h, c):
            if variant == "cond reads u":
                return m.logical_and(i < steps, m.reduce_sum(x) > -1e30)
            return i < steps

        zeros = m.zeros(m.stack([m.shape(x)[0], u]), dtype=x.dtype)
        _, x_out, h, _ = m.while_loop(cond, cell, [m.constant(0), x, zeros, zeros])
        return h + m.reduce_sum(x_out) if variant == "caller reads u" else h

    return run


def _run_both(tf, dtype, variant):
    x = np.random.default_rng(2).standard_normal((BATCH, INPUTS)).astype(dtype)
    mine = kiln.function(_cell_loop(kiln, dtype, variant))
    theirs = tf.function(_cell_loop(tf, dtype, variant))
    got = mine(kiln.constant(x)).numpy()
    want = theirs(tf.constant(x)).numpy()
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    return mine.get_concrete_function(kiln.constant(x))


@pytest.mark.parametrize("dtype,variant", [(np.float32, "invariant"), (np.float64, "invariant"),
                                           (np.float32, "u second")])
def test_the_invariant_share_of_a_concatenated_product_is_hoisted(tf, dtype, variant):
    concrete = _run_both(tf, dtype, variant)
    assert "hoist_concat_products" in _report(concrete)
    outside = [o for o in concrete._core.optimized_operations() if o["type"] in ("MatMul", "Slice")]
    assert sorted(o["type"] for o in outside) == ["MatMul", "Slice", "Slice"], outside


def test_an_unknown_batch_keeps_its_product_whole_and_fails_as_tensorflow_does(tf):
    """Rows that differ at run time make ConcatV2 fail; the two shares' sum would broadcast."""
    spec = lambda m: [m.TensorSpec([None, INPUTS], np.float32)]
    mine = kiln.function(_cell_loop(kiln, np.float32), input_signature=spec(kiln))
    theirs = tf.function(_cell_loop(tf, np.float32), input_signature=spec(tf))
    x = np.random.default_rng(5).standard_normal((7, INPUTS)).astype(np.float32)
    np.testing.assert_allclose(mine(kiln.constant(x)).numpy(), theirs(tf.constant(x)).numpy(), rtol=1e-5, atol=1e-5)
    assert "hoist_concat_products" not in _report(mine.get_concrete_function())

    def mismatched(m):
        w = m.constant(np.ones((INPUTS + UNITS, UNITS), np.float32))

        def run(x):
            def cell(i, x, h):
                return i + 1, x, m.tanh(m.matmul(m.concat([x, h], 1), w))

            h0 = m.zeros([1, UNITS])
            return m.while_loop(lambda i, x, h: i < 3, cell, [m.constant(0), x, h0],
                                shape_invariants=[m.TensorShape([]), m.TensorShape([None, INPUTS]),
                                                  m.TensorShape([None, UNITS])])[2]

        return m.function(run, input_signature=spec(m))

    x5 = np.ones((5, INPUTS), np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError):
        mismatched(tf)(tf.constant(x5))
    with pytest.raises(kiln.errors.InvalidArgumentError):
        mismatched(kiln)(kiln.constant(x5))


@pytest.mark.parametrize("variant", ["u changes", "cond reads u", "caller reads u", "w read elsewhere"])
def test_a_share_that_is_not_invariant_or_is_read_elsewhere_stays_in_the_loop(tf, variant):
    concrete = _run_both(tf, np.float32, variant)
    assert "hoist_concat_products" not in _report(concrete)
