"""A loop's product of each element of a sequence it does not change by a matrix it does not
change (a recurrent layer's input projection) is done once for the whole sequence before the
loop (kiln's hoist_loop_products pass): served Keras LSTM and GRU models, made and exported
by TensorFlow in the test, and traced programs of the same shape must give TensorFlow's
results, and loops where the product is not invariant (the matrix is assigned in the loop,
or is a loop variable that changes) must keep their product in the loop."""
import numpy as np
import pytest

import kiln

keras = pytest.importorskip("keras")


def _report(concrete):
    return "\n".join(concrete._core.optimization_report())


def _recurrent(kind, x):
    layers = keras.layers
    if kind == "stacked LSTM":  # the second layer's sequence is the first's outputs
        return layers.LSTM(6)(layers.LSTM(4, return_sequences=True)(x))
    if kind == "bidirectional GRU":  # one loop runs over the reversed sequence
        return layers.Bidirectional(layers.GRU(3))(x)
    return getattr(layers, kind)(6)(x)


@pytest.mark.parametrize("layer", ["LSTM", "GRU", "stacked LSTM", "bidirectional GRU"])
def test_a_served_recurrent_layer_projects_its_whole_sequence_before_its_loop(tf, tmp_path, layer):
    path = str(tmp_path / "model")
    x = keras.Input((7, 5))
    y = _recurrent(layer, x)
    keras.Model(x, keras.layers.Dense(2)(y)).export(path, verbose=False)
    mine, theirs = kiln.saved_model.load(path).signatures["serving_default"], tf.saved_model.load(path)
    key = next(iter(mine.structured_input_signature[1]))
    rng = np.random.default_rng(3)
    for batch in (1, 4):
        x = rng.standard_normal((batch, 7, 5)).astype(np.float32)
        got = next(iter(mine(**{key: x}).values())).numpy()
        want = theirs.signatures["serving_default"](**{key: tf.constant(x)})
        np.testing.assert_allclose(got, next(iter(want.values())).numpy(), rtol=1e-5, atol=1e-5)
    signature = mine._model.signature(mine.name)
    assert "hoist_loop_products" in "\n".join(signature.optimization_report())
    hoisted = [o for o in signature.optimized_operations() if o["type"] == "BatchMatMulV2"]
    assert len(hoisted) == (2 if layer in ("stacked LSTM", "bidirectional GRU") else 1), hoisted


def _program(tf, assign_in_loop, matrix_changes, signature=None):
    w = tf.Variable(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))

    @tf.function(input_signature=signature)
    def run(x):
        steps = tf.shape(x)[0]
        sequence = tf.TensorArray(tf.float32, size=steps).unstack(x)
        out = tf.TensorArray(tf.float32, size=steps)
        m0 = tf.ones([3, 4]) * 0.5

        def body(i, m, out):
            matrix = m if matrix_changes else w
            y = tf.matmul(sequence.read(i), matrix)
            if assign_in_loop:
                w.assign_add(tf.ones([3, 4]) * 0.25)
            return i + 1, m * 1.5, out.write(i, tf.tanh(y))

        _, _, out = tf.while_loop(lambda i, m, out: i < steps, body, [0, m0, out])
        return out.stack()

    return run


@pytest.mark.parametrize("assign_in_loop,matrix_changes,hoisted", [(False, False, True), (True, False, False),
                                                                   (False, True, False)])
def test_a_traced_loop_hoists_only_an_invariant_product(tf, assign_in_loop, matrix_changes, hoisted):
    x = np.random.default_rng(4).standard_normal((5, 2, 3)).astype(np.float32)
    mine = _program(kiln, assign_in_loop, matrix_changes)
    theirs = _program(tf, assign_in_loop, matrix_changes)
    got, want = mine(kiln.constant(x)).numpy(), theirs(tf.constant(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    # A second call sees the variable as the first left it, in both.
    np.testing.assert_allclose(mine(kiln.constant(x)).numpy(), theirs(tf.constant(x)).numpy(), rtol=1e-6, atol=1e-6)
    report = _report(mine.get_concrete_function(kiln.TensorSpec([5, 2, 3], kiln.float32)))
    assert ("hoist_loop_products" in report) == hoisted, report


def test_an_empty_sequence_and_a_misshapen_one_behave_as_in_tensorflow(tf):
    mine, theirs = _program(kiln, False, False), _program(tf, False, False)
    empty = np.zeros((0, 2, 3), np.float32)
    assert mine(kiln.constant(empty)).numpy().shape == theirs(tf.constant(empty)).numpy().shape == (0, 2, 4)
    assert "hoist_loop_products" in _report(mine.get_concrete_function(kiln.TensorSpec([0, 2, 3], kiln.float32)))
    # Features the matrix does not take: known only when the loop runs, in both.
    mine = _program(kiln, False, False, [kiln.TensorSpec([None, None, None], kiln.float32)])
    theirs = _program(tf, False, False, [tf.TensorSpec([None, None, None], tf.float32)])
    bad = np.zeros((2, 2, 5), np.float32)
    with pytest.raises(kiln.errors.InvalidArgumentError, match="Matrix size-incompatible"):
        mine(kiln.constant(bad))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Matrix size-incompatible"):
        theirs(tf.constant(bad))


@pytest.mark.parametrize("traced", [False, True])
def test_a_list_made_from_a_tensor_keeps_its_items_when_the_variable_read_changes(tf, traced):
    # kiln's TensorListFromTensor items view the tensor's memory: an update of the variable
    # the tensor was read from must not reach them (the update copies a shared value).
    def run(m):
        v = m.Variable(np.arange(48, dtype=np.float32).reshape(2, 24))

        def f():
            items = m.TensorArray(m.float32, size=2).unstack(v.read_value())
            v.assign_add(m.ones([2, 24]))
            return items.read(1) * 1.0, v.read_value()

        return [t.numpy() for t in (m.function(f)() if traced else f())]

    for got, want in zip(run(kiln), run(tf)):
        np.testing.assert_array_equal(got, want)
