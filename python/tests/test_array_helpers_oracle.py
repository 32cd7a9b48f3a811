"""TensorFlow's array, math and assertion functions kiln composes (python/kiln/_array_helpers.py,
scan/foldl/foldr/vectorized_map in _functional.py), against TensorFlow: values, dtypes, bad
input, and traced equal to eager."""
import numpy as np
import pytest

import kiln

rng = np.random.default_rng(3)
M = rng.normal(size=(4, 5)).astype("f")
SPD = (lambda a: a @ a.T + 4 * np.eye(4, dtype="f"))(rng.normal(size=(4, 4)).astype("f"))

CASES = {
    "repeat_scalar": lambda m: m.repeat([1, 2, 3], 2),
    "repeat_axis": lambda m: m.repeat(M, [1, 0, 2, 1], axis=0),
    "repeat_axis1": lambda m: m.repeat(M, 2, axis=1),
    "repeat_flat": lambda m: m.repeat([[1, 2], [3, 4]], [1, 2, 0, 3]),
    "sequence_mask": lambda m: m.sequence_mask([1, 3, 2], 5),
    "sequence_mask_default": lambda m: m.sequence_mask([[1, 3], [0, 2]]),
    "sequence_mask_dtype": lambda m: m.sequence_mask([2, 0], 3, dtype=m.float32),
    "searchsorted_left": lambda m: m.searchsorted([[1.0, 2.0, 2.0, 5.0]], [[2.0, 0.0, 6.0]]),
    "searchsorted_right": lambda m: m.searchsorted([1, 2, 2, 5], [2, 0, 6, 5], side="right"),
    "searchsorted_int64": lambda m: m.searchsorted([1, 3], [2], out_type=m.int64),
    "invert_permutation": lambda m: m.math.invert_permutation([3, 0, 2, 1]),
    "reciprocal": lambda m: m.math.reciprocal(M),
    "in_top_k": lambda m: m.math.in_top_k([1, 4, 0, 2], M, 2),
    "in_top_k_nn": lambda m: m.nn.in_top_k([1, 4, 0, 2], M, 3),
    "logdet": lambda m: m.linalg.logdet(SPD),
    "broadcast_dynamic_shape": lambda m: m.broadcast_dynamic_shape([2, 1, 3], [4, 1]),
    "scan": lambda m: m.scan(lambda a, x: a + x, M),
    "scan_initializer": lambda m: m.scan(lambda a, x: a * x, M, initializer=m.ones([5])),
    "scan_reverse": lambda m: m.scan(lambda a, x: a + x, M, reverse=True),
    "foldl": lambda m: m.foldl(lambda a, x: a + x, M),
    "foldr": lambda m: m.foldr(lambda a, x: a - x, M, initializer=m.zeros([5])),
    "vectorized_map": lambda m: m.vectorized_map(lambda r: m.reduce_sum(r * r), M),
    "floor": lambda m: m.floor(M),
    # Zero-sized inputs.
    "repeat_empty": lambda m: m.repeat(np.zeros((0, 3), "f"), 2, axis=1),
    "repeat_zero_counts": lambda m: m.repeat(M, [0, 0, 0, 0], axis=0),
    "sequence_mask_empty": lambda m: m.sequence_mask(np.zeros([0], "int32"), 4),
    "searchsorted_empty_values": lambda m: m.searchsorted([[1.0, 2.0]], np.zeros((1, 0), "f")),
    "reciprocal_empty": lambda m: m.math.reciprocal(np.zeros((0, 2), "f")),
    "scan_empty_initializer": lambda m: m.scan(lambda a, x: a + x, np.zeros((0, 5), "f"), initializer=m.ones([5])),
    "foldl_empty_initializer": lambda m: m.foldl(lambda a, x: a + x, np.zeros((0, 5), "f"),
                                                 initializer=m.ones([5])),
    "foldr_empty_initializer": lambda m: m.foldr(lambda a, x: a + x, np.zeros((0, 5), "f"),
                                                 initializer=m.ones([5])),
    "vectorized_map_empty": lambda m: m.vectorized_map(lambda r: r * 2, np.zeros((0, 3), "f")),
    "linspace_vectors": lambda m: m.linspace([0.0, 1.0], [1.0, 3.0], 3),
    "linspace_last_axis": lambda m: m.linspace([0.0, 5.0], [10.0, 40.0], 5, axis=-1),
    "linspace_broadcast": lambda m: m.linspace([[0.0], [2.0]], [1.0, 3.0, 5.0], 4, axis=1),
    "linspace_ints": lambda m: m.linspace([1, 2], 9, 5),
    "linspace_zero": lambda m: m.linspace(0.0, 1.0, 0),
    "linspace_one": lambda m: m.linspace([1.0, 2.0], 9.0, 1),
    "cross": lambda m: m.linalg.cross(M[:, :3], M[:, 2:]),
    "cross_empty": lambda m: m.linalg.cross(np.zeros((0, 3), "f"), np.zeros((0, 3), "f")),
    "argmin_type_name": lambda m: m.argmin(M, axis=1, output_type="int32"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_match_tensorflow(tf, case):
    theirs, ours = CASES[case](tf), CASES[case](kiln)
    assert ours.dtype.name == theirs.dtype.name, (ours.dtype, theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["repeat_axis", "sequence_mask", "searchsorted_left", "in_top_k", "scan", "logdet"])
def test_traced_equals_eager(case):
    eager = CASES[case](kiln)
    traced = kiln.function(lambda: CASES[case](kiln))()
    np.testing.assert_array_equal(traced.numpy(), eager.numpy())


def test_unique_with_counts(tf):
    ours, theirs = kiln.unique_with_counts([4, 1, 4, 2, 1, 4]), tf.unique_with_counts([4, 1, 4, 2, 1, 4])
    for a, b in zip((ours.y, ours.idx, ours.count), (theirs.y, theirs.idx, theirs.count)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert a.dtype.name == b.dtype.name


def test_broadcast_static_shape(tf):
    for a, b in (([2, 1, 3], [4, 1]), ([None, 3], [1]), ([5], [5]), ([1], [None])):
        assert str(kiln.broadcast_static_shape(kiln.TensorShape(a), kiln.TensorShape(b))) == str(
            tf.broadcast_static_shape(tf.TensorShape(a), tf.TensorShape(b)))
    with pytest.raises(ValueError):
        kiln.broadcast_static_shape(kiln.TensorShape([2]), kiln.TensorShape([3]))
    with pytest.raises(ValueError):
        tf.broadcast_static_shape(tf.TensorShape([2]), tf.TensorShape([3]))


def test_ensure_shape(tf):
    x = kiln.ones([2, 3])
    assert kiln.ensure_shape(x, [2, None]) is x
    with pytest.raises(kiln.errors.InvalidArgumentError):
        kiln.ensure_shape(x, [3, 3])
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.ensure_shape(tf.ones([2, 3]), [3, 3])
    f = kiln.function(lambda t: kiln.ensure_shape(t, [None, 3]))
    assert f.get_concrete_function(kiln.TensorSpec([None, None])).structured_outputs.shape.as_list() == [None, 3]


def test_assert_and_check_numerics_eager_and_traced(tf):
    with pytest.raises(kiln.errors.InvalidArgumentError) as ours:
        kiln.debugging.Assert(kiln.constant(False), [kiln.constant([1, 2, 3, 4])])
    with pytest.raises(tf.errors.InvalidArgumentError) as theirs:
        tf.debugging.Assert(tf.constant(False), [tf.constant([1, 2, 3, 4])])
    assert ours.value.message.replace("kiln.", "tf.") == theirs.value.message
    kiln.Assert(True, ["fine"])

    @kiln.function
    def f(x):
        kiln.Assert(x > 0, [x])
        return kiln.debugging.check_numerics(x * 2.0, "doubled")

    assert float(f(kiln.constant(1.0))) == 2.0
    with pytest.raises(kiln.errors.InvalidArgumentError, match="assertion failed"):
        f(kiln.constant(-1.0))
    with pytest.raises(kiln.errors.InvalidArgumentError, match="doubled : Tensor had Inf values"):
        f(kiln.constant(np.float32(3e38)))
    with pytest.raises(kiln.errors.InvalidArgumentError, match="x : Tensor had NaN values"):
        kiln.debugging.check_numerics(kiln.constant([np.nan]), "x")
    with pytest.raises(tf.errors.InvalidArgumentError, match="x : Tensor had NaN values"):
        tf.debugging.check_numerics(tf.constant([np.nan]), "x")


def test_top_level_assertions_are_the_debugging_ones(tf):
    for name in ("assert_equal", "assert_less", "assert_greater", "assert_less_equal", "assert_greater_equal"):
        assert getattr(kiln, name) is getattr(kiln.debugging, name)
    with pytest.raises(kiln.errors.InvalidArgumentError):
        kiln.assert_greater(kiln.constant([1]), kiln.constant([2]))


def test_bad_input():
    with pytest.raises(ValueError):
        kiln.searchsorted([1, 2], [1], side="middle")
    with pytest.raises(ValueError):
        kiln.math.invert_permutation([[0, 1]])
    with pytest.raises(ValueError):
        kiln.repeat([1, 2], [[1, 2]])


@pytest.mark.parametrize("dtype", ["float64", "int32", "int8", "uint8", "int16", "uint16", "int64", "float16",
                                   "bfloat16", "uint32", "uint64"])
def test_cross_in_every_dtype_tensorflow_registers(tf, dtype):
    """Integers wrap as TensorFlow's Cross kernel's do."""
    values = np.random.default_rng(1).integers(-100, 100, size=(2, 5, 3))
    ours = kiln.linalg.cross(kiln.cast(values[0], dtype), kiln.cast(values[1], dtype))
    theirs = tf.linalg.cross(tf.cast(values[0], dtype), tf.cast(values[1], dtype))
    assert ours.dtype.name == theirs.dtype.name
    np.testing.assert_array_equal(kiln.cast(ours, "float64").numpy(), tf.cast(theirs, "float64").numpy())


@pytest.mark.parametrize("a,b,dtype", [([2, 3], [3], "float32"), ([2, 2], [2, 2], "float32"), ([3], [3], "complex64"),
                                       ([3], [3], "bool")])
def test_cross_bad_input_raises_as_tensorflow(tf, a, b, dtype):
    with pytest.raises(Exception) as theirs:
        tf.linalg.cross(tf.cast(tf.ones(a), dtype), tf.cast(tf.ones(b), dtype))
    with pytest.raises(Exception) as ours:
        kiln.linalg.cross(kiln.cast(kiln.ones(a), dtype), kiln.cast(kiln.ones(b), dtype))
    assert type(ours.value).__name__ == type(theirs.value).__name__
    assert str(ours.value).split(" [Op:")[0] in str(theirs.value)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nextafter_bit_for_bit(tf, dtype):
    """Zeros of both signs, equal arguments, NaNs, infinities, the smallest subnormal, broadcasting."""
    tiny = np.finfo(dtype).smallest_subnormal
    x1 = np.array([0.0, -0.0, 1.0, 1.0, -1.0, -1.0, 2.5, np.nan, 3.0, np.inf, -np.inf, tiny, 7.0], dtype)
    x2 = np.array([1.0, -1.0, 2.0, 0.0, 0.0, -2.0, 2.5, 1.0, np.nan, 0.0, 0.0, 0.0, np.inf], dtype)
    ours, theirs = kiln.math.nextafter(x1, x2), tf.math.nextafter(tf.constant(x1), tf.constant(x2))
    assert ours.dtype.name == theirs.dtype.name
    assert ours.numpy().tobytes() == theirs.numpy().tobytes() or np.array_equal(ours.numpy(), theirs.numpy(),
                                                                                 equal_nan=True)
    # Tensors, not arrays, for TensorFlow: its wrapper gave some float64 arrays a float32 result.
    np.testing.assert_array_equal(kiln.math.nextafter(x1[:2, None], x2[None, 2:5]).numpy(),
                                  tf.math.nextafter(tf.constant(x1[:2, None]), tf.constant(x2[None, 2:5])).numpy())
    traced = kiln.function(lambda a, b: kiln.math.nextafter(a, b))(kiln.constant(x1), kiln.constant(x2))
    np.testing.assert_array_equal(traced.numpy(), theirs.numpy())


def test_sparse_cast_and_set_shape(tf):
    for m in (kiln, tf):
        s = m.SparseTensor([[0, 1], [1, 2]], [1.5, -2.0], [2, 3])
        c = m.cast(s, "int32")
        assert isinstance(c, m.SparseTensor) and c.dtype.name == "int32"
        assert c.values.numpy().tolist() == [1, -2] and c.indices.numpy().tolist() == [[0, 1], [1, 2]]
        c.set_shape([2, None])
        assert c.shape.as_list() == [2, 3]
        with pytest.raises(ValueError, match="not compatible"):
            c.set_shape([3, 3])
