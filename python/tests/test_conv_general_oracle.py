"""tf.nn's rank-generic convolution and pooling (python/kiln/_conv_general.py) against TensorFlow:
1-D/2-D/3-D, both channel layouts, grouped convolution, transposed convolution, separable
convolution, depth_to_space/space_to_depth, values and gradients."""
import numpy as np
import pytest

import kiln

rng = np.random.default_rng(0)
X1 = rng.normal(size=(2, 9, 4)).astype("f")
W1 = rng.normal(size=(3, 4, 5)).astype("f")
X2 = rng.normal(size=(2, 8, 9, 4)).astype("f")
W2 = rng.normal(size=(3, 3, 4, 6)).astype("f")
WG = rng.normal(size=(3, 3, 2, 6)).astype("f")
X3 = rng.normal(size=(1, 5, 6, 7, 2)).astype("f")
W3 = rng.normal(size=(2, 2, 2, 2, 3)).astype("f")
DW = rng.normal(size=(3, 3, 4, 2)).astype("f")
PW = rng.normal(size=(1, 1, 8, 5)).astype("f")
Y1 = rng.normal(size=(2, 9, 5)).astype("f")
Y3 = rng.normal(size=(1, 5, 6, 7, 3)).astype("f")

CASES = {
    "conv1d_same_stride": lambda m: m.nn.convolution(X1, W1, 2, "SAME"),
    "conv1d_dilated": lambda m: m.nn.convolution(X1, W1, 1, "VALID", dilations=2),
    "conv1d_fn": lambda m: m.nn.conv1d(X1, W1, 1, "SAME"),
    "conv2d": lambda m: m.nn.convolution(X2, W2, [1, 2], "SAME"),
    "conv3d": lambda m: m.nn.convolution(X3, W3, 1, "SAME"),
    "pool1d_max": lambda m: m.nn.pool(X1, [2], "MAX", [2], "VALID"),
    "pool1d_avg_same": lambda m: m.nn.pool(X1, [3], "AVG", [1], "SAME"),
    "pool2d_avg": lambda m: m.nn.pool(X2, [2, 3], "AVG", [2, 1], "VALID"),
    "pool3d_max": lambda m: m.nn.pool(X3, [2, 2, 2], "MAX", [1, 2, 2], "SAME"),
    "max_pool_1d": lambda m: m.nn.max_pool(X1, 2, 2, "VALID"),
    "avg_pool_3d": lambda m: m.nn.avg_pool(X3, 2, 1, "SAME"),
    "separable": lambda m: m.nn.separable_conv2d(X2, DW, PW, [1, 1, 1, 1], "SAME"),
    "separable_strided": lambda m: m.nn.separable_conv2d(X2, DW, PW, [1, 2, 2, 1], "VALID"),
    "depth_to_space": lambda m: m.nn.depth_to_space(X2, 2),
    "space_to_depth": lambda m: m.nn.space_to_depth(X2[:, :8, :8], 2),
    "conv_transpose_1d": lambda m: m.nn.conv_transpose(Y1, W1, [2, 18, 4], 2, "SAME"),
    "conv_transpose_3d": lambda m: m.nn.conv_transpose(Y3, W3, [1, 5, 6, 7, 2], 1, "SAME"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_match_tensorflow(tf, case):
    theirs = CASES[case](tf).numpy()
    ours = CASES[case](kiln).numpy()
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


def test_channels_first_is_channels_last_transposed(tf):
    ncw = np.transpose(X1, [0, 2, 1])
    ours = kiln.nn.conv1d(ncw, W1, 1, "SAME", data_format="NCW").numpy()
    theirs = np.transpose(tf.nn.conv1d(X1, W1, 1, "SAME").numpy(), [0, 2, 1])
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)
    nchw = np.transpose(X2, [0, 3, 1, 2])
    ours = kiln.nn.pool(nchw, [2, 2], "MAX", [2, 2], "VALID", data_format="NCHW").numpy()
    theirs = np.transpose(tf.nn.pool(X2, [2, 2], "MAX", [2, 2], "VALID").numpy(), [0, 3, 1, 2])
    np.testing.assert_array_equal(ours, theirs)


def test_grouped_convolution_matches_xla(tf):
    """TensorFlow runs grouped convolutions on CPU only under XLA (Keras compiles them so)."""
    theirs = tf.function(lambda: tf.nn.convolution(X2, WG, 1, "VALID"), jit_compile=True)().numpy()
    np.testing.assert_allclose(kiln.nn.convolution(X2, WG, 1, "VALID").numpy(), theirs, rtol=1e-5, atol=1e-5)


GRADIENT_CASES = {
    "conv1d": (X1, lambda m, x: m.nn.convolution(x, W1, 2, "SAME")),
    "pool1d_avg": (X1, lambda m, x: m.nn.pool(x, [3], "AVG", [1], "SAME")),
    "separable": (X2, lambda m, x: m.nn.separable_conv2d(x, DW, PW, [1, 1, 1, 1], "SAME")),
    "depth_to_space": (X2, lambda m, x: m.nn.depth_to_space(x, 2)),
}


@pytest.mark.parametrize("case", sorted(GRADIENT_CASES))
def test_gradients_match_tensorflow(tf, case):
    value, f = GRADIENT_CASES[case]
    grads = []
    for m in (kiln, tf):
        x = m.Variable(value)
        with m.GradientTape() as tape:
            y = m.reduce_sum(m.square(f(m, x)))
        grads.append(tape.gradient(y, x).numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-4, atol=1e-4)


def test_bad_input_fails_with_the_reason():
    with pytest.raises(ValueError, match="data_format"):
        kiln.nn.convolution(X1, W1, 1, "SAME", data_format="NHWC")
    with pytest.raises(ValueError, match="rank"):
        kiln.nn.convolution(X1[0], W1, 1, "SAME")
    with pytest.raises(ValueError, match="multiple"):
        kiln.nn.convolution(X2[..., :3], WG, 1, "SAME")
    with pytest.raises(ValueError, match="pooling_type"):
        kiln.nn.pool(X1, [2], "MIN")
    with pytest.raises(ValueError, match="block_size"):
        kiln.nn.depth_to_space(X2, 1)


def test_traced_equals_eager():
    f = kiln.function(lambda x: kiln.nn.convolution(x, W1, 2, "SAME"))
    np.testing.assert_array_equal(f(X1).numpy(), kiln.nn.convolution(X1, W1, 2, "SAME").numpy())
    g = kiln.function(lambda x: kiln.nn.depth_to_space(x, 2))
    np.testing.assert_array_equal(g(X2).numpy(), kiln.nn.depth_to_space(X2, 2).numpy())
