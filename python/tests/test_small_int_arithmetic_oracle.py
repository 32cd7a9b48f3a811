"""Arithmetic (AddV2, Sub, Mul, FloorDiv, Maximum, Minimum, Square), comparisons, Neg/Abs/Sign,
reductions (Sum, Max, Min, Prod, ArgMax, ArgMin) and scans (Cumsum, Cumprod) over int8, uint8,
int16, uint16, uint32 and uint64, as TensorFlow registers them: values (wrapping on overflow),
broadcasting, division by zero, empty inputs, eager and traced."""
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


COMPARISONS = ["Greater", "GreaterEqual", "Less", "LessEqual", "Equal", "NotEqual"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", COMPARISONS)
def test_comparisons_match_tensorflow(tf, op, dtype):
    x, y = _operands(dtype)
    theirs = getattr(tf.raw_ops, op)(x=tf.constant(x), y=tf.constant(y))
    ours = getattr(kiln.raw_ops, op)(x=kiln.constant(x), y=kiln.constant(y))
    assert ours.dtype.name == theirs.dtype.name == "bool"
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["Neg", "Abs", "Sign", "Square"])
def test_unary_match_tensorflow_where_it_registers_them(tf, op, dtype):
    x, _ = _operands(dtype)
    try:
        theirs = getattr(tf.raw_ops, op)(x=tf.constant(x))
    except (tf.errors.NotFoundError, tf.errors.InvalidArgumentError):  # not registered for dtype
        with pytest.raises(kiln.errors.InvalidArgumentError, match="not in the list of allowed values"):
            getattr(kiln.raw_ops, op)(x=kiln.constant(x))
        return
    ours = getattr(kiln.raw_ops, op)(x=kiln.constant(x))
    assert ours.dtype.name == theirs.dtype.name == dtype
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    traced = kiln.function(lambda a: getattr(kiln.raw_ops, op)(x=a))(kiln.constant(x))
    np.testing.assert_array_equal(traced.numpy(), theirs.numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["Sum", "Max", "Min", "Prod", "ArgMax", "ArgMin", "Cumsum", "Cumprod"])
@pytest.mark.parametrize("axis", [0, 1])
def test_reductions_and_scans_match_tensorflow(tf, op, dtype, axis):
    x, _ = _operands(dtype)
    x = np.concatenate([x, x[::-1] // 3])  # ties and large sums and products (which wrap)

    def run(m, value):
        if op in ("ArgMax", "ArgMin"):
            return getattr(m.raw_ops, op)(input=value, dimension=axis)
        if op in ("Cumsum", "Cumprod"):
            return getattr(m.raw_ops, op)(x=value, axis=axis)
        return getattr(m.raw_ops, op)(input=value, axis=axis)

    theirs, ours = run(tf, tf.constant(x)), run(kiln, kiln.constant(x))
    assert ours.dtype.name == theirs.dtype.name
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    traced = kiln.function(lambda a: run(kiln, a))(kiln.constant(x))
    np.testing.assert_array_equal(traced.numpy(), theirs.numpy())
    if op not in ("ArgMax", "ArgMin"):  # over nothing: the identities (TensorFlow's arg ops fail there)
        empty = np.zeros((0, 3), dtype)
        np.testing.assert_array_equal(run(kiln, kiln.constant(empty)).numpy(), run(tf, tf.constant(empty)).numpy())
