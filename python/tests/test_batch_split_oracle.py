"""A served convolutional model called with a batch runs image by image (kiln's executor,
src/exec/batch_split.h), against TensorFlow in the same process: a Keras model saved by
TensorFlow and loaded by kiln gives TensorFlow's values at batch sizes 1, 2 and 7, on one
thread and on two, and the same bits as its calls on single images. (Images of 64x64: one
image's largest intermediate has to be 256 KB for a call to split.)"""
import numpy as np
import pytest

import kiln


def keras_classifier(tf):
    """Convolutions with BatchNormalization and a residual Add, depthwise and pointwise
    convolutions, pooling, a concatenation of branches, global pooling, a Reshape to
    (-1, ...) and a dense softmax: the layers of Keras's applications."""
    keras = tf.keras
    inputs = keras.Input((64, 64, 3))  # one image's 16-channel intermediate: 256 KB, enough to split
    x = keras.layers.Conv2D(16, 3, padding="same", use_bias=False)(inputs)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.ReLU(6.0)(x)
    y = keras.layers.DepthwiseConv2D(3, padding="same")(x)
    y = keras.layers.Conv2D(16, 1)(y)
    x = keras.layers.Add()([x, y])
    a = keras.layers.MaxPooling2D(3, strides=1, padding="same")(x)
    b = keras.layers.AveragePooling2D(2, strides=1, padding="same")(x)
    x = keras.layers.Concatenate()([a, b, x])
    x = keras.layers.Conv2D(12, 3, strides=2, activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D(keepdims=True)(x)
    x = keras.layers.Reshape((12,))(x)
    outputs = keras.layers.Dense(5, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    rng = np.random.default_rng(0)
    # Trained-looking BatchNormalization statistics, not the initial ones.
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            layer.set_weights([rng.uniform(0.5, 1.5, 16), rng.uniform(-0.5, 0.5, 16), rng.uniform(-0.2, 0.2, 16),
                               rng.uniform(0.5, 2.0, 16)])
    return model


@pytest.fixture(scope="module")
def served(tf, tmp_path_factory):
    model = keras_classifier(tf)
    path = str(tmp_path_factory.mktemp("batch_split") / "classifier")
    model.export(path, verbose=False)
    return model, kiln.saved_model.load(path).signatures["serving_default"]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("batch", [1, 2, 7])
def test_served_conv_model_has_tensorflows_values_by_rows(tf, served, threads, batch):
    model, f = served
    key = next(iter(f.structured_input_signature[1]))
    x = np.random.default_rng(batch).standard_normal((batch, 64, 64, 3)).astype(np.float32)
    expected = model(tf.constant(x)).numpy()
    threading = kiln.config.threading
    try:
        threading.set_intra_op_parallelism_threads(threads)
        got = list(f(**{key: kiln.constant(x)}).values())[0].numpy()
        rows = [list(f(**{key: kiln.constant(x[i:i + 1])}).values())[0].numpy() for i in range(batch)]
    finally:
        threading.set_intra_op_parallelism_threads(0)
    assert got.shape == expected.shape == (batch, 5)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got, np.concatenate(rows))


def test_traced_function_with_unknown_batch_by_rows(tf):
    # The same through kiln.function with an input signature of unknown batch, against the
    # same program run by TensorFlow; a batch whose rows are not independent (a sum over the
    # batch) stays whole.
    def program(m):
        w = m.constant(np.random.default_rng(1).standard_normal((3, 3, 3, 16)).astype(np.float32))

        def per_image(x):
            y = m.nn.relu(m.nn.conv2d(x, w, 1, "SAME"))
            return m.reduce_mean(m.nn.max_pool2d(y, 2, 2, "VALID"), axis=[1, 2])

        def over_batch(x):
            return m.reduce_sum(per_image(x), axis=0)

        spec = [m.TensorSpec([None, 64, 64, 3], m.float32)]
        return m.function(per_image, input_signature=spec), m.function(over_batch, input_signature=spec)

    x = np.random.default_rng(2).standard_normal((6, 64, 64, 3)).astype(np.float32)
    for ours, theirs in zip(program(kiln), program(tf)):
        np.testing.assert_allclose(ours(kiln.constant(x)).numpy(), theirs(tf.constant(x)).numpy(), rtol=1e-5,
                                   atol=1e-5)
