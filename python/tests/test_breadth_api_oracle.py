"""TensorFlow's Python functions over the new ops (tf.pad, tf.split, tf.einsum, tf.nn.gelu,
tf.image.resize, ...) called the same way on kiln and TensorFlow: same values, dtypes and
shapes, eagerly and traced; the same error class for bad arguments."""
import numpy as np
import pytest

import kiln

tf = pytest.importorskip("tensorflow")
RNG = np.random.default_rng(11)
X = RNG.standard_normal((2, 3, 4)).astype(np.float32)
UNIT = RNG.uniform(-0.9, 0.9, (3, 4)).astype(np.float32)
IMAGES = RNG.standard_normal((2, 5, 6, 3)).astype(np.float32)


def _get(module, path):
    for part in path.split("."):
        module = getattr(module, part)
    return module


CASES = [
    ("pad", (X, [[0, 1], [2, 0], [1, 1]]), {}),
    ("pad", (X, [[0, 0], [1, 1], [2, 2]]), {"mode": "reflect"}),
    ("pad", (X, [[1, 0], [0, 0], [3, 3]]), {"mode": "SYMMETRIC"}),
    ("pad", (X, [[1, 1], [0, 0], [0, 0]]), {"constant_values": 2.5}),
    ("split", (X, 2), {"axis": 2}),
    ("split", (X, [1, -1]), {"axis": 1}),
    ("unstack", (X,), {"axis": 1}),
    ("reverse", (X, [0, 2]), {}),
    ("one_hot", ([0, 2, 1, 7], 3), {}),
    ("one_hot", ([[0, 2]], 4), {"on_value": 5, "off_value": -1, "axis": 1}),
    ("einsum", ("bij,bjk->bik", X, RNG.standard_normal((2, 4, 5)).astype(np.float32)), {}),
    ("einsum", ("ij,jk", UNIT, UNIT.T.copy()), {}),
    ("einsum", ("ij->", UNIT), {}),
    ("stop_gradient", (X,), {}),
    ("identity_n", ([X, [1, 2]],), {}),
    ("argmin", (X,), {"axis": 2}),
    ("cumsum", (X,), {"axis": 1, "exclusive": True, "reverse": True}),
    ("math.cumprod", (X,), {"axis": 2}),
    ("math.erf", (X,), {}),
    ("math.erfc", (X,), {}),
    ("math.erfinv", (UNIT,), {}),
    ("math.log1p", (np.abs(X),), {}),
    ("math.expm1", (X,), {}),
    ("math.lgamma", (np.abs(X) + 0.1,), {}),
    ("math.is_nan", (np.array([1.0, np.nan, np.inf], np.float32),), {}),
    ("math.is_finite", (np.array([1.0, np.nan, np.inf], np.float32),), {}),
    ("sin", (X,), {}),
    ("math.atanh", (UNIT,), {}),
    ("nn.gelu", (X,), {}),
    ("nn.gelu", (X,), {"approximate": True}),
    ("nn.elu", (X,), {}),
    ("nn.selu", (X,), {}),
    ("nn.leaky_relu", (X,), {"alpha": 0.1}),
    ("nn.softplus", (X,), {}),
    ("nn.softsign", (X,), {}),
    ("nn.depthwise_conv2d", (IMAGES, RNG.standard_normal((3, 3, 3, 2)).astype(np.float32), [1, 1, 1, 1], "SAME"),
     {}),
    ("nn.conv2d_transpose", (IMAGES, RNG.standard_normal((3, 3, 4, 3)).astype(np.float32), [2, 10, 12, 4], 2),
     {"padding": "SAME"}),
    ("image.resize", (IMAGES, [7, 9]), {}),
    ("image.resize", (IMAGES, [3, 4]), {"method": "nearest"}),
    ("image.resize", (IMAGES[0], [8, 8]), {"method": "bicubic"}),
    ("image.resize", (IMAGES, [2, 3]), {"method": "area"}),
]
# Float math in another order or another library: compared within a relative tolerance.
TOLERANCE = {"einsum": 1e-5, "nn.gelu": 1e-6, "nn.depthwise_conv2d": 1e-5, "nn.conv2d_transpose": 1e-5,
             "image.resize": 1e-5, "math.erfinv": 1e-6, "math.lgamma": 1e-6, "math.erf": 1e-6, "math.erfc": 1e-6,
             "math.expm1": 1e-6, "math.log1p": 1e-6, "sin": 1e-6, "math.atanh": 1e-6, "nn.elu": 1e-6,
             "nn.selu": 1e-6, "nn.softplus": 1e-6, "math.cumprod": 1e-6, "cumsum": 1e-6}


def _flat(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


@pytest.mark.parametrize("traced", [False, True])
@pytest.mark.parametrize("path,args,kwargs", CASES, ids=[c[0] + str(i) for i, c in enumerate(CASES)])
def test_function_matches_tensorflow(path, args, kwargs, traced):
    want = _flat(_get(tf, path)(*args, **kwargs))
    fn = _get(kiln, path)
    got = _flat(kiln.function(lambda: fn(*args, **kwargs))() if traced else fn(*args, **kwargs))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = g.numpy(), w.numpy()
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        tol = TOLERANCE.get(path, 0)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


@pytest.mark.parametrize("path,args,kwargs", [
    ("pad", (X, [[0, 1], [2, 0]]), {}),
    ("pad", (X, [[0, 0], [0, 0], [0, 0]]), {"mode": "wrap"}),
    ("split", (X, 5), {"axis": 1}),
    ("unstack", (X,), {"axis": 3}),
    ("einsum", ("ij,jk->ik", UNIT, UNIT), {}),
])
def test_bad_arguments_raise_tensorflows_class(path, args, kwargs):
    with pytest.raises(Exception) as theirs:
        _get(tf, path)(*args, **kwargs)
    with pytest.raises(Exception) as ours:
        _get(kiln, path)(*args, **kwargs)
    assert type(ours.value).__name__ == type(theirs.value).__name__, (ours.value, theirs.value)


def test_gelu_and_padding_are_differentiable():
    x = kiln.constant(X)
    with kiln.GradientTape() as tape:
        tape.watch(x)
        y = kiln.reduce_sum(kiln.nn.gelu(kiln.pad(x, [[0, 1], [1, 0], [0, 0]])))
    tx = tf.constant(X)
    with tf.GradientTape() as ttape:
        ttape.watch(tx)
        ty = tf.reduce_sum(tf.nn.gelu(tf.pad(tx, [[0, 1], [1, 0], [0, 0]])))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), ttape.gradient(ty, tx).numpy(), rtol=1e-5, atol=1e-6)
