"""A recurrent layer's loop whose every step computes each batch row from that row alone runs,
on two or more intra-op threads, as one loop per block of rows (kiln's loop_rows, reported in
the optimization report): served Keras LSTM and GRU models, made and exported by TensorFlow in
the test, must give TensorFlow's results at batches that split evenly, unevenly and not at
all, and the same values on two threads as on one."""
import numpy as np
import pytest

import kiln

keras = pytest.importorskip("keras")


@pytest.fixture
def two_threads():
    before = kiln.config.threading.get_intra_op_parallelism_threads()
    kiln.config.threading.set_intra_op_parallelism_threads(2)
    yield
    kiln.config.threading.set_intra_op_parallelism_threads(before)


def _recurrent(kind, x):
    layers = keras.layers
    if kind == "stacked LSTM":
        return layers.LSTM(6)(layers.LSTM(16, return_sequences=True)(x))
    if kind == "bidirectional GRU":
        return layers.Bidirectional(layers.GRU(8))(x)
    return getattr(layers, kind)(12)(x)


@pytest.mark.parametrize("layer", ["LSTM", "GRU", "SimpleRNN", "stacked LSTM", "bidirectional GRU"])
def test_a_served_recurrent_layer_runs_its_rows_apart_and_gives_tensorflows_results(tf, tmp_path, two_threads,
                                                                                     layer):
    path = str(tmp_path / "model")
    x = keras.Input((9, 5))
    keras.Model(x, keras.layers.Dense(3)(_recurrent(layer, x))).export(path, verbose=False)
    mine, theirs = kiln.saved_model.load(path).signatures["serving_default"], tf.saved_model.load(path)
    key = next(iter(mine.structured_input_signature[1]))
    signature = mine._model.signature(mine.name)
    loops = 2 if layer in ("stacked LSTM", "bidirectional GRU") else 1
    reported = [line for line in signature.optimization_report() if line.startswith("loop_rows:")]
    assert len(reported) == loops, signature.optimization_report()
    rng = np.random.default_rng(5)
    for batch in (16, 13, 3):  # blocks of 8, of 7 and 6, and too few rows to split
        x = rng.standard_normal((batch, 9, 5)).astype(np.float32)
        got = next(iter(mine(**{key: x}).values())).numpy()
        want = theirs.signatures["serving_default"](**{key: tf.constant(x)})
        np.testing.assert_allclose(got, next(iter(want.values())).numpy(), rtol=1e-5, atol=1e-5)
        kiln.config.threading.set_intra_op_parallelism_threads(1)
        whole = next(iter(mine(**{key: x}).values())).numpy()
        kiln.config.threading.set_intra_op_parallelism_threads(2)
        # The same bits where a block's step product runs the kernel the whole batch's does
        # (at AVX-512); at AVX2 a few rows take another kernel, which sums in another order.
        np.testing.assert_allclose(got, whole, rtol=1e-6, atol=1e-6)


def test_a_loop_whose_rows_meet_runs_whole(tf, two_threads):
    # Each step adds the batch's mean: no row is computed from itself alone.
    def program(m):
        @m.function(input_signature=[m.TensorSpec([None, 4], m.float32)])
        def run(h):
            def body(i, h):
                return i + 1, m.tanh(h * 0.9 + m.reduce_mean(h, axis=0))

            return m.while_loop(lambda i, h: i < 6, body, [0, h])[1]

        return run

    mine, theirs = program(kiln), program(tf)
    report = list(mine.get_concrete_function()._core.optimization_report())
    assert not [line for line in report if line.startswith("loop_rows:")], report
    h = np.random.default_rng(6).standard_normal((32, 4)).astype(np.float32)
    np.testing.assert_allclose(mine(kiln.constant(h)).numpy(), theirs(tf.constant(h)).numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", ["steps from the batch size", "counter from the batch size",
                                  "state scaled by the batch size"])
def test_a_loop_that_reads_its_batch_size_runs_whole(tf, two_threads, case):
    # A block's batch is smaller than the call's: a loop that reads the batch size would count
    # differently in each block.
    def program(m):
        @m.function(input_signature=[m.TensorSpec([None, 4], m.float32)])
        def run(h):
            # (A batch size read before the loop is free to it: every block counts to the call's.)
            def cond(i, h):
                return i < m.shape(h)[0] if case == "steps from the batch size" else i < 5

            def body(i, h):
                if case == "state scaled by the batch size":
                    return i + 1, m.tanh(h * m.cast(m.shape(h)[0], m.float32) * 0.1)
                return i + (m.shape(h)[0] if case == "counter from the batch size" else 1), m.tanh(h * 0.9)

            return m.while_loop(cond, body, [0, h])

        return run

    mine, theirs = program(kiln), program(tf)
    report = list(mine.get_concrete_function()._core.optimization_report())
    assert not [line for line in report if line.startswith("loop_rows:")], report
    h = np.random.default_rng(7).standard_normal((16, 4)).astype(np.float32)
    for got, want in zip(mine(kiln.constant(h)), theirs(tf.constant(h))):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
