"""A served Keras model's BatchNormalization layers run inside its convolutions: Keras 3
exports each as a Mul and an AddV2 by per-channel vectors, which kiln's optimizer folds,
with the bias, a residual connection's addition and the activation, into the convolution's
epilogue (KilnFusedConv2D, KilnFusedDepthwiseConv2dNative), over the unknown batch. The model
is made and exported by TensorFlow in the test, with statistics that are not the identity;
its outputs must match TensorFlow's at batches of 1 and 5."""
import numpy as np
import pytest

import kiln

keras = pytest.importorskip("keras")


def _served(tf, model, tmp_path):
    """`model` exported by Keras and loaded by kiln and by TensorFlow: a function of an input
    array giving both serving signatures' outputs (kiln's, TensorFlow's), and kiln's signature."""
    path = str(tmp_path / "model")
    model.export(path, verbose=False)
    mine = kiln.saved_model.load(path).signatures["serving_default"]
    theirs = tf.saved_model.load(path).signatures["serving_default"]
    key = next(iter(mine.structured_input_signature[1]))

    def both(x):
        return (next(iter(mine(**{key: x}).values())).numpy(),
                next(iter(theirs(**{key: tf.constant(x)}).values())).numpy())
    return both, mine


def _model():
    layers = keras.layers
    x = keras.Input((9, 9, 3))
    y = layers.Conv2D(8, 3, padding="same", use_bias=False)(x)
    y = layers.BatchNormalization()(y)
    y = layers.ReLU()(y)
    z = layers.DepthwiseConv2D(3, padding="same")(y)
    z = layers.BatchNormalization()(z)
    z = layers.ReLU(6.0)(z)
    z = layers.Conv2D(8, 1)(z)
    z = layers.BatchNormalization()(z)
    out = layers.Activation("relu")(layers.Add()([y, z]))
    model = keras.Model(x, layers.GlobalAveragePooling2D()(out))
    rng = np.random.default_rng(5)
    for layer in model.layers:
        if isinstance(layer, layers.BatchNormalization):
            gamma, beta, mean, variance = layer.get_weights()
            layer.set_weights([rng.uniform(0.5, 2, gamma.shape).astype(np.float32),
                               rng.uniform(-1, 1, beta.shape).astype(np.float32),
                               rng.uniform(-1, 1, mean.shape).astype(np.float32),
                               rng.uniform(0.1, 3, variance.shape).astype(np.float32)])
    return model


def test_batch_norm_runs_in_the_convolutions_of_a_served_keras_model(tf, tmp_path):
    both, mine = _served(tf, _model(), tmp_path)
    rng = np.random.default_rng(6)
    for batch in (1, 5):
        got, want = both(rng.standard_normal((batch, 9, 9, 3)).astype(np.float32))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    ops = mine._model.signature(mine.name).optimized_operations()
    fused = sorted((o["type"], o["attrs"]["fused_ops"]) for o in ops if "fused_ops" in o["attrs"])
    assert fused == [("KilnFusedConv2D", "BiasAdd,Mul,AddV2,Add,Relu"), ("KilnFusedConv2D", "Mul,AddV2,Relu"),
                     ("KilnFusedDepthwiseConv2dNative", "BiasAdd,Mul,AddV2,Relu6")], fused
    types = [o["type"] for o in ops]
    # The residual AddV2 and its ReLU run in the last convolution's epilogue.
    assert "Relu" not in types and "Relu6" not in types and "Mul" not in types, types
    images = [o["type"] for o in ops if o["type"] in ("AddV2", "KilnFusedElementwise")
              and any(out.endswith(",9,9,8]") for out in o["outputs"])]
    assert not images, images


def _swish_model():
    """EfficientNet's pattern: convolutions and BatchNormalization with Keras's swish (an
    IdentityN of a custom gradient around x * sigmoid(x)), a depthwise one, and a Dense
    layer's bias before a swish."""
    layers = keras.layers
    x = keras.Input((10, 10, 3))
    y = layers.Conv2D(24, 3, padding="same", use_bias=False)(x)
    y = layers.BatchNormalization()(y)
    y = layers.Activation("swish")(y)
    y = layers.DepthwiseConv2D(3, padding="same", use_bias=False)(y)
    y = layers.BatchNormalization()(y)
    y = layers.Activation("silu")(y)
    y = layers.Conv2D(5, 1, activation="swish")(y)
    model = keras.Model(x, y)
    rng = np.random.default_rng(7)
    for layer in model.layers:
        weights = layer.get_weights()
        if weights:  # wide values: both of the sigmoid's tails and its middle
            layer.set_weights([rng.uniform(-3, 3, w.shape).astype(np.float32) if i != 3 or len(weights) != 4
                               else rng.uniform(0.1, 3, w.shape).astype(np.float32)
                               for i, w in enumerate(weights)])
    return model


def test_swish_runs_in_the_convolutions_of_a_served_keras_model(tf, tmp_path):
    both, mine = _served(tf, _swish_model(), tmp_path)
    rng = np.random.default_rng(8)
    for batch in (1, 4):
        got, want = both(rng.standard_normal((batch, 10, 10, 3)).astype(np.float32) * 4)
        assert got.shape == want.shape
        # The convolutions' sums run in another order than TensorFlow's (values reach the
        # thousands here): agreement to float32's last few bits of the largest value.
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6 * np.abs(want).max())
    ops = mine._model.signature(mine.name).optimized_operations()
    fused = sorted((o["type"], o["attrs"]["fused_ops"]) for o in ops if "fused_ops" in o["attrs"])
    assert fused == [("KilnFusedConv2D", "BiasAdd,Swish"), ("KilnFusedConv2D", "Mul,AddV2,Swish"),
                     ("KilnFusedDepthwiseConv2dNative", "Mul,AddV2,Swish")], fused
    types = [o["type"] for o in ops]
    assert "Sigmoid" not in types and "IdentityN" not in types, types
    images = [o["type"] for o in ops if o["type"] == "KilnFusedElementwise"
              and any(",10,10," in out for out in o["outputs"])]
    assert not images, images
    # Traced by kiln itself, the same function computes the same values as the ops run one
    # by one (kiln.function runs the fused graph; eagerly each op runs alone).
    k = rng.uniform(-1, 1, (3, 3, 3, 16)).astype(np.float32)
    scale, shift = rng.uniform(-4, 4, 16).astype(np.float32), rng.uniform(-1, 1, 16).astype(np.float32)

    def block(x):
        return kiln.nn.silu(kiln.nn.conv2d(x, k, 1, "SAME") * scale + shift)

    x = rng.standard_normal((2, 7, 7, 3)).astype(np.float32) * 3
    np.testing.assert_array_equal(kiln.function(block)(x).numpy(), block(kiln.constant(x)).numpy())


def test_attention_scale_runs_in_the_softmax_of_a_served_keras_model(tf, tmp_path):
    """Keras's MultiHeadAttention scales its scores by 1/sqrt(key_dim) before the softmax: the
    Mul runs inside the softmax (KilnScaledSoftmax), and the outputs match TensorFlow's."""
    layers = keras.layers
    keras.utils.set_random_seed(9)
    x = keras.Input((6, 8))
    y = layers.MultiHeadAttention(num_heads=2, key_dim=5)(x, x)
    both, mine = _served(tf, keras.Model(x, y), tmp_path)
    rng = np.random.default_rng(10)
    for batch in (1, 3):
        got, want = both(rng.standard_normal((batch, 6, 8)).astype(np.float32) * 3)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    types = [o["type"] for o in mine._model.signature(mine.name).optimized_operations()]
    assert types.count("KilnScaledSoftmax") == 1 and "Softmax" not in types, types
