"""The backward ops of convolution, pooling and resizing (Conv2DBackpropInput/Filter, the
depthwise pair, MaxPoolGrad, AvgPoolGrad, Resize*Grad) and the gradients of the image ops that
use them (and MirrorPad's), with TensorFlow as the oracle: raw-op values eagerly and traced, GradientTape
gradients (first and second order), a small CNN's training step inside kiln.function, zero-sized
batches and bad arguments (TensorFlow's error class and message)."""
import re

import numpy as np
import pytest

import kiln
from conftest import raw_ops_kwargs_for_tf

tf = pytest.importorskip("tensorflow")
RNG = np.random.default_rng(11)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _f64(*shape):
    return RNG.standard_normal(shape)


S1, S2 = [1, 1, 1, 1], [1, 2, 2, 1]
X = _f32(2, 7, 6, 3)
V = _f32(2, 5, 6, 7, 3)  # a batch of NDHWC volumes
CASES = [
    ("Conv2DBackpropFilter", dict(input=X, filter_sizes=[3, 2, 3, 4], out_backprop=_f32(2, 7, 6, 4), strides=S1,
                                  padding="SAME")),
    ("Conv2DBackpropFilter", dict(input=X, filter_sizes=[3, 3, 3, 5], out_backprop=_f32(2, 3, 2, 5), strides=S2,
                                  padding="VALID")),
    ("Conv2DBackpropFilter", dict(input=_f64(1, 6, 6, 2), filter_sizes=np.array([2, 2, 2, 3], np.int64),
                                  out_backprop=_f64(1, 5, 5, 3), strides=S1, padding="VALID")),
    ("Conv2DBackpropFilter", dict(input=X, filter_sizes=[2, 2, 3, 2], out_backprop=_f32(2, 9, 7, 2), strides=S1,
                                  padding="EXPLICIT", explicit_paddings=[0, 0, 1, 2, 0, 2, 0, 0])),
    ("Conv2DBackpropInput", dict(input_sizes=[2, 7, 6, 3], filter=_f32(3, 3, 3, 4), out_backprop=_f32(2, 4, 3, 4),
                                 strides=S2, padding="SAME")),
    ("DepthwiseConv2dNativeBackpropInput", dict(input_sizes=[2, 7, 6, 3], filter=_f32(3, 3, 3, 2),
                                                out_backprop=_f32(2, 4, 3, 6), strides=S2, padding="SAME")),
    ("DepthwiseConv2dNativeBackpropInput", dict(input_sizes=[1, 5, 5, 2], filter=_f64(2, 2, 2, 1),
                                                out_backprop=_f64(1, 4, 4, 2), strides=S1, padding="VALID")),
    ("DepthwiseConv2dNativeBackpropFilter", dict(input=X, filter_sizes=[3, 3, 3, 2], out_backprop=_f32(2, 4, 3, 6),
                                                 strides=S2, padding="SAME")),
    ("DepthwiseConv2dNativeBackpropFilter", dict(input=X, filter_sizes=[2, 3, 3, 1], out_backprop=_f32(2, 6, 4, 3),
                                                 strides=S1, padding="VALID")),
    ("MaxPoolGrad", dict(orig_input=X, orig_output=tf.nn.max_pool2d(X, 3, 2, "SAME").numpy(),
                         grad=_f32(2, 4, 3, 3), ksize=[1, 3, 3, 1], strides=S2, padding="SAME")),
    ("MaxPoolGrad", dict(orig_input=np.round(X * 2), orig_output=tf.nn.max_pool2d(np.round(X * 2), 2, 1, "VALID").numpy(),
                         grad=_f32(2, 6, 5, 3), ksize=[1, 2, 2, 1], strides=S1, padding="VALID")),
    ("MaxPoolGradGrad", dict(orig_input=X, orig_output=tf.nn.max_pool2d(X, 3, 2, "SAME").numpy(),
                             grad=_f32(2, 7, 6, 3), ksize=[1, 3, 3, 1], strides=S2, padding="SAME")),
    ("MaxPoolGradGrad", dict(orig_input=np.round(X * 2), orig_output=tf.nn.max_pool2d(np.round(X * 2), 2, 1,
                                                                                      "VALID").numpy(),
                             grad=_f32(2, 7, 6, 3), ksize=[1, 2, 2, 1], strides=S1, padding="VALID")),
    ("AvgPoolGrad", dict(orig_input_shape=[2, 7, 6, 3], grad=_f32(2, 4, 3, 3), ksize=[1, 3, 3, 1], strides=S2,
                         padding="SAME")),
    ("ResizeBilinearGrad", dict(grads=_f32(2, 9, 5, 3), original_image=_f32(2, 4, 6, 3))),
    ("ResizeBilinearGrad", dict(grads=_f32(1, 3, 3, 2), original_image=_f64(1, 7, 5, 2), align_corners=True)),
    ("ResizeBicubicGrad", dict(grads=_f32(1, 8, 5, 2), original_image=_f32(1, 4, 6, 2), half_pixel_centers=True)),
    ("ResizeNearestNeighborGrad", dict(grads=_f32(2, 9, 2, 3), size=[4, 6])),
    ("ResizeNearestNeighborGrad", dict(grads=np.arange(30, dtype=np.int32).reshape(1, 5, 3, 2), size=[2, 7],
                                       align_corners=True)),
    ("Conv3D", dict(input=V, filter=_f32(3, 2, 3, 3, 4), strides=[1, 2, 1, 2, 1], padding="SAME")),
    ("Conv3D", dict(input=_f32(1, 4, 5, 4, 2), filter=_f32(2, 2, 2, 2, 3), strides=[1] * 5, padding="VALID",
                    dilations=[1, 2, 1, 1, 1])),  # TensorFlow's float64 Conv3D has no dilations; kiln's has
    ("Conv3D", dict(input=_f64(1, 4, 5, 4, 2), filter=_f64(2, 2, 2, 2, 3), strides=[1] * 5, padding="VALID")),
    ("MaxPool3D", dict(input=V, ksize=[1, 2, 3, 2, 1], strides=[1, 2, 2, 1, 1], padding="SAME")),
    ("AvgPool3D", dict(input=V, ksize=[1, 2, 3, 2, 1], strides=[1, 2, 2, 1, 1], padding="VALID")),
    ("Conv3DBackpropInputV2", dict(input_sizes=[2, 5, 6, 7, 3], filter=_f32(3, 2, 3, 3, 4),
                                   out_backprop=_f32(2, 3, 6, 4, 4), strides=[1, 2, 1, 2, 1], padding="SAME")),
    ("Conv3DBackpropFilterV2", dict(input=V, filter_sizes=[3, 2, 3, 3, 4], out_backprop=_f32(2, 3, 6, 4, 4),
                                    strides=[1, 2, 1, 2, 1], padding="SAME")),
    ("MaxPool3DGrad", dict(orig_input=V, orig_output=tf.nn.max_pool3d(V, [2, 3, 2], [2, 2, 1], "SAME").numpy(),
                           grad=_f32(2, 3, 3, 7, 3), ksize=[1, 2, 3, 2, 1], strides=[1, 2, 2, 1, 1], padding="SAME")),
    ("AvgPool3DGrad", dict(orig_input_shape=[2, 5, 6, 7, 3], grad=_f32(2, 2, 2, 6, 3), ksize=[1, 2, 3, 2, 1],
                           strides=[1, 2, 2, 1, 1], padding="VALID")),
    ("AvgPoolGrad", dict(orig_input_shape=[1, 5, 5, 2], grad=_f64(1, 2, 2, 2), ksize=[1, 2, 3, 1], strides=S2,
                         padding="VALID")),
]


@pytest.mark.parametrize("traced", [False, True])
@pytest.mark.parametrize("name,kwargs", CASES, ids=[c[0] + str(i) for i, c in enumerate(CASES)])
def test_values_are_tensorflows(name, kwargs, traced):
    want = getattr(tf.raw_ops, name)(**raw_ops_kwargs_for_tf(kwargs)).numpy()
    fn = getattr(kiln.raw_ops, name)
    got = (kiln.function(lambda: fn(**kwargs))() if traced else fn(**kwargs)).numpy()
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    if got.dtype.kind == "f":  # sums of products in another order
        tol = 1e-5 if got.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, float(np.abs(want).max(initial=0))))
    else:
        np.testing.assert_array_equal(got, want)


def _grads(m, fn, xs, order=1):
    vs = [m.constant(x) for x in xs]
    with m.GradientTape() as outer:
        outer.watch(vs)
        with m.GradientTape() as tape:
            tape.watch(vs)
            y = fn(m, *vs)
        gs = tape.gradient(y, vs)
        if order == 2:
            total = m.add_n([m.reduce_sum(g * g) for g in gs])
    return outer.gradient(total, vs) if order == 2 else gs


def _sq(m, y):
    return m.reduce_sum(y * y * 0.5 + y)


GRADS = [
    ("conv2d_same", lambda m, x, w: _sq(m, m.nn.conv2d(x, w, 1, "SAME")), [_f32(2, 7, 6, 3), _f32(3, 2, 3, 4)]),
    ("conv2d_strided", lambda m, x, w: _sq(m, m.nn.conv2d(x, w, 2, "VALID")), [_f32(2, 7, 6, 3), _f32(3, 3, 3, 4)]),
    ("conv2d_dilated", lambda m, x, w: _sq(m, m.nn.conv2d(x, w, 1, "SAME", dilations=2)),
     [_f32(1, 8, 8, 2), _f32(3, 3, 2, 3)]),
    ("conv2d_1x1", lambda m, x, w: _sq(m, m.nn.conv2d(x, w, 1, "VALID")), [_f32(3, 4, 4, 5), _f32(1, 1, 5, 2)]),
    ("conv2d_f64", lambda m, x, w: _sq(m, m.nn.conv2d(x, w, 1, "SAME")), [_f64(1, 5, 5, 2), _f64(3, 3, 2, 2)]),
    ("depthwise", lambda m, x, w: _sq(m, m.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "SAME")),
     [_f32(2, 7, 6, 3), _f32(3, 3, 3, 2)]),
    ("max_pool", lambda m, x: _sq(m, m.nn.max_pool2d(x, 3, 2, "SAME")), [_f32(2, 7, 6, 3)]),
    ("max_pool_valid", lambda m, x: _sq(m, m.nn.max_pool2d(x, 2, 2, "VALID")), [_f32(1, 6, 6, 4)]),
    ("avg_pool", lambda m, x: _sq(m, m.nn.avg_pool2d(x, 3, 2, "SAME")), [_f32(2, 7, 6, 3)]),
    ("resize_bilinear", lambda m, x: _sq(m, m.raw_ops.ResizeBilinear(images=x, size=[9, 5])), [_f32(2, 4, 6, 3)]),
    ("resize_bilinear_half", lambda m, x: _sq(m, m.raw_ops.ResizeBilinear(images=x, size=[3, 11],
                                                                          half_pixel_centers=True)),
     [_f32(1, 5, 4, 2)]),
    ("resize_bilinear_align", lambda m, x: _sq(m, m.raw_ops.ResizeBilinear(images=x, size=[7, 7], align_corners=True)),
     [_f64(1, 4, 3, 2)]),
    ("resize_nearest", lambda m, x: _sq(m, m.raw_ops.ResizeNearestNeighbor(images=x, size=[9, 2])), [_f32(2, 4, 6, 3)]),
    ("resize_nearest_half", lambda m, x: _sq(m, m.raw_ops.ResizeNearestNeighbor(images=x, size=[5, 7],
                                                                                half_pixel_centers=True)),
     [_f32(1, 3, 3, 2)]),
    ("resize_bicubic", lambda m, x: _sq(m, m.raw_ops.ResizeBicubic(images=x, size=[8, 5])), [_f32(1, 4, 6, 2)]),
    ("resize_bicubic_half", lambda m, x: _sq(m, m.raw_ops.ResizeBicubic(images=x, size=[5, 9],
                                                                        half_pixel_centers=True)),
     [_f32(2, 6, 4, 1)]),
    ("image_resize", lambda m, x: _sq(m, m.image.resize(x, [10, 3])), [_f32(2, 5, 6, 3)]),
    ("mirror_pad_conv", lambda m, x, w: _sq(m, m.nn.conv2d(m.pad(x, [[0, 0], [1, 1], [2, 2], [0, 0]], "REFLECT"), w, 1,
                                                             "VALID")),
     [_f32(1, 5, 5, 2), _f32(3, 3, 2, 2)]),
    ("conv3d", lambda m, x, w: _sq(m, m.nn.conv3d(x, w, [1, 2, 1, 1, 1], "SAME")), [V, _f32(2, 3, 2, 3, 2)]),
    ("conv3d_valid", lambda m, x, w: _sq(m, m.nn.conv3d(x, w, [1, 1, 2, 2, 1], "VALID")), [V, _f32(3, 3, 3, 3, 4)]),
    ("max_pool3d", lambda m, x: _sq(m, m.nn.max_pool3d(x, 2, 2, "SAME")), [V]),
    ("avg_pool3d", lambda m, x: _sq(m, m.nn.avg_pool3d(x, [2, 3, 2], [1, 2, 2], "SAME")), [V]),
    ("conv_transpose", lambda m, x, w: _sq(m, m.nn.conv2d_transpose(x, w, [2, 8, 8, 3], 2, "SAME")),
     [_f32(2, 4, 4, 5), _f32(3, 3, 3, 5)]),
]


@pytest.mark.parametrize("traced", [False, True])
@pytest.mark.parametrize("name,fn,xs", GRADS, ids=[g[0] for g in GRADS])
def test_gradients_are_tensorflows(name, fn, xs, traced):
    want = [w.numpy() for w in _grads(tf, fn, xs)]
    got = kiln.function(lambda: _grads(kiln, fn, xs))() if traced else _grads(kiln, fn, xs)
    for g, w in zip(got, want):
        g = g.numpy()
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5 * float(np.abs(w).max()))


@pytest.mark.parametrize("name,fn,xs", [g for g in GRADS if g[0] in ("conv2d_same", "depthwise", "avg_pool",
                                                                      "conv_transpose", "max_pool", "max_pool_valid")],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_second_order_gradients_are_tensorflows(name, fn, xs):
    want = _grads(tf, fn, xs, order=2)
    got = _grads(kiln, fn, xs, order=2)
    for g, w in zip(got, want):
        g, w = g.numpy(), w.numpy()
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * float(np.abs(w).max()))


def test_a_small_cnn_trains_as_tensorflow_does_inside_a_function():
    x, labels = _f32(4, 8, 8, 1), np.array([0, 1, 2, 1], np.int32)
    init = [_f32(3, 3, 1, 4) * 0.3, _f32(3, 3, 4, 1) * 0.3, _f32(64, 3) * 0.3]

    def run(m):
        w1, w2, w3 = [m.Variable(v) for v in init]

        @m.function
        def step():
            with m.GradientTape() as tape:
                h = m.nn.relu(m.nn.conv2d(x, w1, 1, "SAME"))
                h = m.nn.max_pool2d(h, 2, 2, "VALID")
                h = m.nn.depthwise_conv2d(h, m.reshape(w2, [3, 3, 4, 1]), [1, 1, 1, 1], "SAME")
                h = m.nn.avg_pool2d(h, 1, 1, "VALID")
                logits = m.matmul(m.reshape(h, [4, 64]), w3)
                loss = m.reduce_mean(m.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
            for v, g in zip([w1, w2, w3], tape.gradient(loss, [w1, w2, w3])):
                v.assign_sub(0.1 * g)
            return loss

        return [float(step()) for _ in range(5)], [v.numpy() for v in (w1, w2, w3)]

    (ours, our_w), (theirs, their_w) = run(kiln), run(tf)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    assert ours[-1] < ours[0]
    for a, b in zip(our_w, their_w):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_zero_sized_batches_and_channels():
    for name, kwargs in [
        # No input channels: every output is an empty sum (grouped and depthwise paths too).
        ("Conv2D", dict(input=np.zeros([1, 3, 3, 0]), filter=np.ones([1, 1, 2, 4]), strides=S1, padding="VALID")),
        ("DepthwiseConv2dNative", dict(input=np.zeros([0, 3, 3, 2], np.float32), filter=np.ones([1, 1, 2, 1], np.float32),
                                       strides=S1, padding="VALID")),
        ("Conv2DBackpropFilter", dict(input=np.zeros([0, 5, 5, 2], np.float32), filter_sizes=[3, 3, 2, 4],
                                      out_backprop=np.zeros([0, 5, 5, 4], np.float32), strides=S1, padding="SAME")),
        ("Conv2DBackpropInput", dict(input_sizes=[0, 5, 5, 2], filter=_f32(3, 3, 2, 4),
                                     out_backprop=np.zeros([0, 5, 5, 4], np.float32), strides=S1, padding="SAME")),
        ("DepthwiseConv2dNativeBackpropFilter", dict(input=np.zeros([0, 5, 5, 2], np.float32),
                                                     filter_sizes=[3, 3, 2, 1],
                                                     out_backprop=np.zeros([0, 5, 5, 2], np.float32),
                                                     strides=S1, padding="SAME")),
        ("MaxPoolGrad", dict(orig_input=np.zeros([0, 4, 4, 2], np.float32), orig_output=np.zeros([0, 2, 2, 2], np.float32),
                             grad=np.zeros([0, 2, 2, 2], np.float32), ksize=[1, 2, 2, 1], strides=S2, padding="VALID")),
        ("AvgPoolGrad", dict(orig_input_shape=[0, 4, 4, 2], grad=np.zeros([0, 2, 2, 2], np.float32),
                             ksize=[1, 2, 2, 1], strides=S2, padding="VALID")),
    ]:
        want = getattr(tf.raw_ops, name)(**kwargs).numpy()
        got = getattr(kiln.raw_ops, name)(**kwargs).numpy()
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


BAD = [
    ("Conv3D", dict(input=V, filter=_f32(2, 2, 2, 2, 4), strides=[1] * 5, padding="SAME")),
    ("Conv3D", dict(input=V, filter=_f32(2, 2, 2, 3, 4), strides=[1, 1, 1, 1, 2], padding="SAME")),
    ("MaxPool3D", dict(input=V, ksize=[1, 2, 2, 2, 2], strides=[1] * 5, padding="SAME")),
    ("AvgPool3D", dict(input=V, ksize=[1, 2, 2, 2, 1], strides=[1] * 5, padding="FULL")),
    ("Conv2D", dict(input=_f32(1, 3, 3, 2), filter=np.ones([1, 1, 2, 0], np.float32), strides=S1, padding="VALID")),
    ("DepthwiseConv2dNative", dict(input=_f32(1, 3, 3, 2), filter=np.ones([1, 1, 2, 0], np.float32), strides=S1,
                                   padding="VALID")),
    ("Conv2DBackpropFilter", dict(input=X, filter_sizes=[3, 3, 2, 4], out_backprop=_f32(2, 7, 6, 4), strides=S1,
                                  padding="SAME")),
    ("Conv2DBackpropFilter", dict(input=X, filter_sizes=[3, 3, 3, 4], out_backprop=_f32(2, 7, 6, 4), strides=S1,
                                  padding="FULL")),
    ("Conv2DBackpropFilter", dict(input=X.astype(np.int32), filter_sizes=[3, 3, 3, 4],
                                  out_backprop=_f32(2, 7, 6, 4).astype(np.int32), strides=S1, padding="SAME")),
    ("MaxPoolGrad", dict(orig_input=X, orig_output=_f32(2, 4, 3, 3), grad=_f32(2, 3, 3, 3), ksize=[1, 3, 3, 1],
                         strides=S2, padding="SAME")),
    ("MaxPoolGrad", dict(orig_input=X, orig_output=_f32(2, 4, 3, 3), grad=_f32(2, 4, 3, 3), ksize=[1, 3, 3, 2],
                         strides=S2, padding="SAME")),
]


def _message(e):
    text = str(e).split(" [Op:")[0].strip()
    return re.sub(r"^\{\{function_node [^}]*\}\} ", "", text)


@pytest.mark.parametrize("name,kwargs", BAD, ids=[c[0] + str(i) for i, c in enumerate(BAD)])
def test_bad_arguments_raise_tensorflows_errors(name, kwargs):
    with pytest.raises(Exception) as theirs:
        getattr(tf.raw_ops, name)(**raw_ops_kwargs_for_tf(kwargs))
    with pytest.raises(kiln.errors.OpError) as ours:
        getattr(kiln.raw_ops, name)(**kwargs)
    assert type(ours.value).__name__ == type(theirs.value).__name__, (ours.value, theirs.value)
    if name in ("MaxPoolGrad", "Conv2D", "DepthwiseConv2dNative", "Conv3D"):
        assert _message(ours.value) == _message(theirs.value)


def test_operands_that_disagree_are_invalid_arguments():
    # TensorFlow's oneDNN kernels (on by default on x86) abort these with an empty AbortedError;
    # its own kernels raise InvalidArgumentError with these messages, as kiln does.
    with pytest.raises(kiln.errors.InvalidArgumentError,
                       match="Conv2DCustomBackpropFilter: Size of out_backprop doesn't match computed: actual = 5, "
                             "computed = 7 spatial_dim: 1 input: 7 filter: 3 output: 5 stride: 1 dilation: 1"):
        kiln.raw_ops.Conv2DBackpropFilter(input=X, filter_sizes=[3, 3, 3, 4], out_backprop=_f32(2, 5, 6, 4),
                                          strides=S1, padding="SAME")
    with pytest.raises(kiln.errors.InvalidArgumentError, match="must have the same out_depth: 6 vs 5"):
        kiln.raw_ops.DepthwiseConv2dNativeBackpropInput(input_sizes=[2, 7, 6, 3], filter=_f32(3, 3, 3, 2),
                                                        out_backprop=_f32(2, 7, 6, 5), strides=S1, padding="SAME")
    with pytest.raises(kiln.errors.InvalidArgumentError, match="orig_input_shape must have 4 elements"):
        kiln.raw_ops.AvgPoolGrad(orig_input_shape=[2, 7, 6], grad=_f32(2, 4, 3, 3), ksize=[1, 3, 3, 1], strides=S2,
                                 padding="SAME")  # TensorFlow 2.21 crashes (a failed CHECK) on this one
