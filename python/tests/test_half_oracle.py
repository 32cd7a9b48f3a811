"""float16 and bfloat16 against TensorFlow: numpy interop (numpy's float16, ml_dtypes' bfloat16),
Cast's rounding bit for bit, and the ops mixed-precision models run, eagerly and traced. kiln
computes a 16-bit op in float32 and rounds the result once; TensorFlow's CPU kernels round each
operation's result too, so elementwise results agree to the last bit or one unit, and
contractions (which TensorFlow may round inside) to a few units of the 16-bit precision."""
import ml_dtypes
import numpy as np
import pytest

import kiln

tf = pytest.importorskip("tensorflow")
RNG = np.random.default_rng(16)
DTYPES = {"float16": (np.float16, 2.0**-10), "bfloat16": (ml_dtypes.bfloat16, 2.0**-7)}


def _tf_dtype(name):
    return getattr(tf, name)


@pytest.mark.parametrize("name", DTYPES)
def test_numpy_round_trip_keeps_every_bit(name):
    np_type, _ = DTYPES[name]
    bits = np.arange(0, 65536, 97, dtype=np.uint16)
    x = bits.view(np_type)
    t = kiln.constant(x)
    assert t.dtype == getattr(kiln, name) and t.dtype.is_floating
    assert t.numpy().dtype == np.dtype(np_type)
    np.testing.assert_array_equal(t.numpy().view(np.uint16), bits)
    assert repr(t.dtype) == "kiln." + name


@pytest.mark.parametrize("name", DTYPES)
def test_dtype_properties_match_tensorflow(name):
    mine, theirs = getattr(kiln, name), _tf_dtype(name)
    assert (mine.min, mine.max, mine.size) == (theirs.min, theirs.max, theirs.size)
    assert mine.is_floating and not mine.is_integer
    assert kiln.as_dtype("half") == kiln.float16


SPECIAL = np.array([0.0, -0.0, 1.0, -2.5, 65504.0, 65519.0, 65520.0, 1e6, -1e6, 6.1e-5, 5.96e-8, 2.9e-8, 1e-9,
                    1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, 3.4e38, np.inf, -np.inf,
                    np.nan], np.float32)


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("source", [np.float32, np.float64, np.int32, np.int64])
def test_cast_to_16_bits_rounds_as_tensorflow(name, source):
    x = SPECIAL.astype(np.float64) if source in (np.float32, np.float64) else np.array([0, 1, -7, 2049, 65535, 70000,
                                                                                          2**31 - 1], np.int64)
    x = x.astype(source) if source != np.float64 else np.concatenate([x, [1.0 + 2.0**-11 + 2.0**-40]])
    want = tf.cast(tf.constant(x), _tf_dtype(name)).numpy()
    got = kiln.cast(kiln.constant(x), getattr(kiln, name)).numpy()
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("target", ["float32", "float64", "int32", "int64", "uint8", "bool"])
def test_cast_from_16_bits_matches_tensorflow(name, target):
    np_type, _ = DTYPES[name]
    x = np.array([0.0, -0.0, 1.5, -2.5, 100.0, 255.0, 0.0001], np.float32).astype(np_type)
    if target in ("float32", "float64", "bool"):
        x = np.concatenate([x, np.array([np.inf, -np.inf, np.nan], np.float32).astype(np_type)])
    if target == "uint8":
        x = x[x >= 0]
    want = tf.cast(tf.constant(x), _tf_dtype(target)).numpy()
    got = kiln.cast(kiln.constant(x), getattr(kiln, target)).numpy()
    np.testing.assert_array_equal(got, want)


def _values(np_type, *shape):
    return RNG.uniform(-3, 3, shape).astype(np.float32).astype(np_type)


def _cases(np_type):
    a, b = _values(np_type, 3, 4), _values(np_type, 3, 4)
    return [
        ("AddV2", dict(x=a, y=b)), ("Sub", dict(x=a, y=b)), ("Mul", dict(x=a, y=b)), ("RealDiv", dict(x=a, y=b)),
        ("Maximum", dict(x=a, y=b)), ("Neg", dict(x=a)), ("Relu", dict(features=a)), ("Exp", dict(x=a)),
        ("Tanh", dict(x=a)), ("Sigmoid", dict(x=a)), ("Erf", dict(x=a)), ("Erfc", dict(x=a)), ("Rsqrt", dict(x=abs(a))),
        ("Square", dict(x=a)), ("Less", dict(x=a, y=b)),
        ("BiasAdd", dict(value=a, bias=_values(np_type, 4))),
        ("MatMul", dict(a=a, b=_values(np_type, 4, 5))),
        ("Conv2D", dict(input=_values(np_type, 1, 6, 6, 3), filter=_values(np_type, 3, 3, 3, 4), strides=[1, 1, 1, 1],
                        padding="SAME")),
        ("MaxPool", dict(input=_values(np_type, 1, 6, 6, 3), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1],
                         padding="VALID")),
        ("Softmax", dict(logits=a)), ("Mean", dict(input=a, axis=[1])), ("Sum", dict(input=a, axis=[0])),
        ("Reshape", dict(tensor=a, shape=[4, 3])), ("Transpose", dict(x=a, perm=[1, 0])),
        ("ConcatV2", dict(values=[a, b], axis=0)),
    ]


@pytest.mark.parametrize("name", DTYPES)
def test_ops_models_run_match_tensorflow(name):
    np_type, eps = DTYPES[name]
    for op, kwargs in _cases(np_type):
        want = np.asarray(getattr(tf.raw_ops, op)(**kwargs), np.float32)
        got_t = getattr(kiln.raw_ops, op)(**kwargs)
        traced = kiln.function(lambda: getattr(kiln.raw_ops, op)(**kwargs))()
        assert got_t.dtype == traced.dtype
        got = np.asarray(got_t.numpy(), np.float32)
        assert got.shape == want.shape, op
        # One unit of the 16-bit precision per rounding (contractions: a few).
        units = 8 if op in ("MatMul", "Conv2D", "Softmax", "Mean", "Sum") else 1
        np.testing.assert_allclose(got, want, rtol=units * eps, atol=units * eps, err_msg=op)
        np.testing.assert_array_equal(np.asarray(traced.numpy(), np.float32), got, err_msg=op)
