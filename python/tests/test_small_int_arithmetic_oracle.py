"""AddV2, Sub, Mul, FloorDiv, Maximum and Minimum over int8, uint8, int16, uint16, uint32 and
uint64, as TensorFlow registers them: values (wrapping on overflow), broadcasting, division by
zero, eager and traced."""
import numpy as np
import pytest

import kiln

DTYPES = ["int8", "uint8", "int16", "uint16", "uint32", "uint64"]
OPS = ["AddV2", "Sub", "Mul", "FloorDiv", "Maximum", "Minimum"]


def _operands(dtype):
    info = np.iinfo(dtype)
    x = np.array([[info.min, info.max, 7, 0], [1, info.max // 2, 3, 100]], dtype=dtype)
    y = np.array([info.max, 3, 2, 1], dtype=dtype)  # broadcast over rows; no zero (FloorDiv)
    return x, y


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_values_match_tensorflow(tf, op, dtype):
    x, y = _operands(dtype)
    theirs = getattr(tf.raw_ops, op)(x=tf.constant(x), y=tf.constant(y))
    ours = getattr(kiln.raw_ops, op)(x=kiln.constant(x), y=kiln.constant(y))
    assert ours.dtype.name == theirs.dtype.name == dtype
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    traced = kiln.function(lambda a, b: getattr(kiln.raw_ops, op)(x=a, y=b))(kiln.constant(x), kiln.constant(y))
    np.testing.assert_array_equal(traced.numpy(), theirs.numpy())


@pytest.mark.parametrize("dtype", DTYPES)
def test_integer_division_by_zero_fails_as_tensorflow(tf, dtype):
    x = np.array([1, 2], dtype=dtype)
    y = np.array([1, 0], dtype=dtype)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.raw_ops.FloorDiv(x=x, y=y)
    with pytest.raises(kiln.errors.InvalidArgumentError):
        kiln.raw_ops.FloorDiv(x=kiln.constant(x), y=kiln.constant(y))


def test_operators_on_int8_tensors(tf):
    a, b = np.array([100, -100, 5], np.int8), np.array([100, 100, -3], np.int8)
    for expr in (lambda p, q: p + q, lambda p, q: p - q, lambda p, q: p * q, lambda p, q: p // q):
        ours = expr(kiln.constant(a), kiln.constant(b))
        theirs = expr(tf.constant(a), tf.constant(b))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
