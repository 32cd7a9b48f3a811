"""Every op kiln has, computed by kiln and by TensorFlow on generated cases: each dtype, edge
values (NaN, ±Inf, −0, denormals, integer extremes, negative operands of // and %), broadcasting,
empty tensors, and bad inputs (the same exception class)."""
import itertools

import numpy as np
import pytest

import kiln

# Denormals are left out here: TensorFlow flushes them to zero on CPU (FTZ/DAZ), kiln keeps
# IEEE arithmetic; test_denormals_are_kept pins that deliberate difference.
FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 7.0, -7.0, 1e-30, -3e-30, 1e30, -1e30, np.inf, -np.inf, np.nan]
INT_EDGES = [0, 1, -1, 2, -3, 7, -7, 100, 2**31 - 1, -(2**31)]
INT64_EDGES = INT_EDGES + [2**40, -(2**40), 2**63 - 1, -(2**63)]
NUMERIC = ["int32", "int64", "float32", "float64"]
FLOATS = ["float32", "float64"]


def edges(dtype):
    if dtype.startswith("float"):
        return np.array(FLOAT_EDGES, dtype=dtype)
    if dtype == "int64":
        return np.array(INT64_EDGES, dtype=dtype)
    if dtype == "int32":
        return np.array(INT_EDGES, dtype=dtype)
    return np.array([True, False])


def all_pairs(dtype, nonzero_y=False):
    """Every pair of edge values, as two 1-D arrays."""
    v = edges(dtype)
    x, y = (np.array(a, dtype=v.dtype) for a in zip(*itertools.product(v, v)))
    if nonzero_y:
        keep = y != 0
        x, y = x[keep], y[keep]
    return x, y


# name -> (dtypes, ulps allowed for floats, integer divisor must be nonzero)
BINARY = {
    "add": (NUMERIC, 0, False),
    "subtract": (NUMERIC, 0, False),
    "multiply": (NUMERIC, 0, False),
    "maximum": (NUMERIC, 0, False),
    "minimum": (NUMERIC, 0, False),
    "squared_difference": (NUMERIC, 0, False),
    "truediv": (NUMERIC, 0, False),
    "floordiv": (NUMERIC, 0, True),
    "floormod": (NUMERIC, 0, True),
    "pow": (FLOATS, 2, False),
    "atan2": (FLOATS, 2, False),
    "equal": (NUMERIC + ["bool"], 0, False),
    "not_equal": (NUMERIC + ["bool"], 0, False),
    "greater": (NUMERIC, 0, False),
    "greater_equal": (NUMERIC, 0, False),
    "less": (NUMERIC, 0, False),
    "less_equal": (NUMERIC, 0, False),
    "logical_and": (["bool"], 0, False),
    "logical_or": (["bool"], 0, False),
}
NAMESPACE = {"atan2": "math", "floormod": "math", "squared_difference": "math", "logical_and": "math",
             "logical_or": "math", "truediv": "math", "floordiv": "math"}


def op(m, name):
    ns = NAMESPACE.get(name)
    return getattr(getattr(m, ns) if ns else m, name)


BINARY_CASES = [(name, d) for name, (dts, _, _) in BINARY.items() for d in dts]


@pytest.mark.parametrize("name,dtype", BINARY_CASES)
def test_binary_every_pair_of_edge_values(oracle, name, dtype):
    _, ulps, nonzero = BINARY[name]
    x, y = all_pairs(dtype, nonzero_y=nonzero and not dtype.startswith("float"))
    oracle(lambda m: op(m, name)(m.constant(x), m.constant(y)), ulps=ulps, where="%s %s" % (name, dtype))


@pytest.mark.parametrize("name", ["floordiv", "floormod"])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_division_by_zero(oracle, name, dtype):
    oracle(lambda m: op(m, name)(m.constant(np.array([5, -5], dtype)), m.constant(np.array([0, 2], dtype))))


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_pow(oracle, dtype):
    x = np.array([0, 1, -1, 2, -3, 7], dtype)
    y = np.array([0, 3, 5, 10, 3, 2], dtype)
    oracle(lambda m: m.pow(m.constant(x), m.constant(y)))
    oracle(lambda m: m.pow(m.constant(x), m.constant(np.array([-1] * 6, dtype))), where="negative exponent")


BROADCAST_SHAPES = [((3, 1), (1, 4)), ((2, 3), (3,)), ((), (2, 2)), ((2, 1, 3), (4, 1)), ((0, 3), (1, 3)),
                    ((1,), (0,)), ((5, 4, 3), (5, 1, 1))]


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "truediv", "greater", "equal"])
@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
def test_binary_broadcasting(oracle, name, shapes):
    rng = np.random.default_rng(len(name) * 31 + len(shapes[0]))
    x = rng.standard_normal(shapes[0]).astype(np.float32)
    y = rng.standard_normal(shapes[1]).astype(np.float32)
    oracle(lambda m: op(m, name)(m.constant(x), m.constant(y)))
    oracle(lambda m: op(m, name)(m.constant(y), m.constant(x)), where="swapped")


@pytest.mark.parametrize("name", ["add", "multiply", "less", "logical_and"])
def test_binary_bad_inputs(oracle, name):
    oracle(lambda m: op(m, name)(m.constant([1.0, 2.0]), m.constant([1, 2])), where="mixed dtypes")
    oracle(lambda m: op(m, name)(m.constant([1.0, 2.0]), m.constant([1.0, 2.0, 3.0])), where="shapes")
    oracle(lambda m: op(m, name)(m.constant([True]), m.constant([False])), where="bool")


def test_python_numbers_take_the_tensor_dtype(oracle):
    for dtype in NUMERIC:
        x = np.array([1, 2, 3], dtype)
        oracle(lambda m: m.constant(x) + 1, where=dtype)
        oracle(lambda m: 2 * m.constant(x), where=dtype)
        oracle(lambda m: m.constant(x) - 1.5, where=dtype)
        oracle(lambda m: m.constant(x) / 2, where=dtype)
        oracle(lambda m: m.constant(x) < 2.5, where=dtype)
        oracle(lambda m: m.constant(x) + np.float64(2.5), where=dtype)
        oracle(lambda m: np.array([1.5, 2, 3]) + m.constant(x), where=dtype)
        oracle(lambda m: m.constant(x) + [1, 2, 3], where=dtype)
    oracle(lambda m: m.constant([1, 2]) + 2**40, where="out of int32 range")


OPERATORS = ["__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__", "__lt__",
             "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__radd__", "__rsub__", "__rmul__", "__rtruediv__",
             "__rfloordiv__", "__rmod__", "__rpow__"]


@pytest.mark.parametrize("method", OPERATORS)
@pytest.mark.parametrize("dtype", NUMERIC)
def test_operators(oracle, method, dtype):
    x = np.array([1, 2, -3, 4], dtype)
    y = np.array([3, -2, 2, 4], dtype)
    oracle(lambda m: getattr(m.constant(x), method)(m.constant(y)), ulps=2)
    oracle(lambda m: getattr(m.constant(x), method)(3), ulps=2, where="number")


def test_unary_operators_and_bool_operators(oracle):
    x = np.array([1.5, -2.0, 0.0, -0.0, np.nan], np.float32)
    oracle(lambda m: -m.constant(x))
    oracle(lambda m: abs(m.constant(x)))
    oracle(lambda m: abs(m.constant(np.array([-(2**31), 3], np.int32))))
    b = np.array([True, False, True, False])
    c = np.array([True, True, False, False])
    oracle(lambda m: m.constant(b) & m.constant(c))
    oracle(lambda m: m.constant(b) | m.constant(c))
    oracle(lambda m: m.constant(b) ^ m.constant(c))
    oracle(lambda m: ~m.constant(b))
    oracle(lambda m: m.constant([[1.0, 2.0], [3.0, 4.0]]) @ m.constant([[1.0], [2.0]]))


# name -> (namespace, dtypes, ulps)
UNARY = {
    "negative": ("", NUMERIC, 0),
    "abs": ("", NUMERIC, 0),
    "sign": ("", NUMERIC, 0),
    "square": ("", NUMERIC, 0),
    "floor": ("math", FLOATS, 0),
    "ceil": ("math", FLOATS, 0),
    "round": ("", FLOATS, 0),
    "sqrt": ("", FLOATS, 1),
    "rsqrt": ("math", FLOATS, 4),  # TF: a hardware estimate + one Newton step; 3 ulps off on some AVX-512 CPUs
    "exp": ("", FLOATS, 2),
    "log": ("math", FLOATS, 2),
    "tanh": ("", FLOATS, 4),
    "sigmoid": ("", FLOATS, 4),
    "relu": ("nn", NUMERIC, 0),
    "relu6": ("nn", NUMERIC, 0),
    "logical_not": ("", ["bool"], 0),
}
UNARY_CASES = [(n, d) for n, (_, dts, _) in UNARY.items() for d in dts]


def unary(m, name):
    ns = UNARY[name][0]
    return getattr(getattr(m, ns) if ns else m, name)


@pytest.mark.parametrize("name,dtype", UNARY_CASES)
def test_unary_edge_values(oracle, name, dtype):
    ulps = UNARY[name][2]
    x = edges(dtype)
    if dtype.startswith("float"):
        x = np.concatenate([x, np.linspace(-20, 20, 81, dtype=dtype), np.array([0.5, 1.5, 2.5, -0.5, -1.5], dtype)])
    oracle(lambda m: unary(m, name)(m.constant(x)), ulps=ulps, where="%s %s" % (name, dtype))
    oracle(lambda m: unary(m, name)(m.constant(x[:0].reshape(0, 0) if x.size else x)), where="empty")


REDUCTIONS = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod"]
AXES = [None, 0, 1, -1, [0, 1], (1,), []]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("axis", AXES, ids=str)
def test_reductions(oracle, name, dtype, axis):
    rng = np.random.default_rng(7)
    x = rng.integers(-5, 6, size=(3, 4)).astype(dtype)
    # Sums of small integers are exact in every order; means divide once.
    oracle(lambda m: getattr(m, name)(m.constant(x), axis=axis), ulps=1)
    oracle(lambda m: getattr(m, name)(m.constant(x), axis=axis, keepdims=True), ulps=1, where="keepdims")


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("axis", [[1, 2], [1], [2], [0, 1, 2], [-3, -2]], ids=str)
def test_reductions_over_middle_axes(oracle, name, dtype, axis):
    # A run of reduced axes before kept ones ([A, R, B] blocks: a mean over an image's height
    # and width, NHWC) is reduced in place, without a transpose.
    x = np.random.default_rng(3).integers(-3, 4, size=(2, 7, 5, 19)).astype(dtype)
    if name == "reduce_prod":
        x = np.where(x == 0, 1, x).astype(dtype)[:, :3, :2]
    oracle(lambda m: getattr(m, name)(m.constant(x), axis=axis), ulps=1)
    oracle(lambda m: getattr(m, name)(m.constant(x), axis=axis, keepdims=True), ulps=1, where="keepdims")
    y = np.array(x, dtype=np.float64 if dtype == np.float64 else np.float32)
    y[1, 2, 1, 4], y[0, 1, 1, 0] = np.nan, np.inf
    oracle(lambda m: getattr(m, name)(m.constant(y), axis=axis), ulps=1, where="nan and inf")
    oracle(lambda m: getattr(m, name)(m.constant(np.zeros((2, 0, 3, 4), dtype)), axis=axis), where="empty")


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions_edges_and_bad_axes(oracle, name):
    x = np.array([[1.0, np.nan, 3.0], [np.inf, -np.inf, -0.0]], np.float32)
    oracle(lambda m: getattr(m, name)(m.constant(x), axis=1))
    oracle(lambda m: getattr(m, name)(m.constant(np.zeros((0, 3), np.float32)), axis=0), where="empty")
    oracle(lambda m: getattr(m, name)(m.constant(x), axis=2), where="axis out of range")


def test_argmax_softmax_and_losses(oracle):
    x = np.array([[1.0, 3.0, 3.0, -1.0], [0.0, -2.0, 5.0, 5.0]], np.float32)
    for axis in (0, 1, -1, None):
        oracle(lambda m: m.argmax(m.constant(x), axis=axis), where="argmax %s" % axis)
    oracle(lambda m: m.argmax(m.constant(x), axis=1, output_type=m.int32))
    oracle(lambda m: m.nn.softmax(m.constant(x)), ulps=4)
    oracle(lambda m: m.nn.softmax(m.constant(x), axis=0), ulps=4)
    oracle(lambda m: m.nn.log_softmax(m.constant(x)), ulps=4)
    big = np.array([[1000.0, 0.0, -1000.0]], np.float32)
    oracle(lambda m: m.nn.softmax(m.constant(big)), ulps=4, where="large logits")
    labels = np.array([1, 3], np.int32)
    oracle(lambda m: m.nn.sparse_softmax_cross_entropy_with_logits(labels=m.constant(labels), logits=m.constant(x)),
           ulps=8)
    oracle(lambda m: m.nn.sparse_softmax_cross_entropy_with_logits(
        labels=m.constant(labels.astype(np.int64)), logits=m.constant(big.repeat(2, 0))), ulps=8, where="big")


@pytest.mark.parametrize("dtype", NUMERIC + ["bool"])
def test_shape_ops(oracle, dtype):
    x = (np.arange(24).reshape(2, 3, 4) % 3).astype(dtype)
    c = lambda m: m.constant(x)  # noqa: E731
    oracle(lambda m: m.reshape(c(m), [4, -1]))
    oracle(lambda m: m.reshape(c(m), [5, 5]), where="bad reshape")
    oracle(lambda m: m.transpose(c(m)))
    oracle(lambda m: m.transpose(c(m), perm=[1, 0, 2]))
    oracle(lambda m: m.concat([c(m), c(m)], axis=1))
    oracle(lambda m: m.concat([c(m), c(m)], axis=-1))
    oracle(lambda m: m.stack([c(m), c(m)], axis=1))
    oracle(lambda m: m.unstack(c(m), axis=1))
    oracle(lambda m: m.slice(c(m), [0, 1, 1], [2, -1, 2]))
    oracle(lambda m: m.gather(c(m), [2, 0], axis=1))
    oracle(lambda m: m.gather(c(m), [3], axis=1), where="index out of range")
    oracle(lambda m: m.expand_dims(c(m), -1))
    oracle(lambda m: m.squeeze(m.expand_dims(c(m), 0)))
    oracle(lambda m: m.squeeze(m.expand_dims(c(m), 0), axis=0))
    oracle(lambda m: m.squeeze(c(m), axis=0), where="squeeze a dim that is not 1")
    oracle(lambda m: m.tile(c(m), [1, 2, 1]))
    oracle(lambda m: m.broadcast_to(m.constant(x[:1]), [3, 3, 4]))
    oracle(lambda m: m.shape(c(m)))
    oracle(lambda m: m.size(c(m)))
    oracle(lambda m: m.rank(c(m)))
    oracle(lambda m: m.zeros_like(c(m)))
    oracle(lambda m: m.ones_like(c(m)))
    oracle(lambda m: m.identity(c(m)))
    oracle(lambda m: m.where(m.constant(x % 2 == 0) if dtype != "bool" else c(m), c(m), m.zeros_like(c(m))))


@pytest.mark.parametrize("src", NUMERIC + ["bool"])
@pytest.mark.parametrize("dst", NUMERIC + ["bool"])
def test_cast(oracle, src, dst):
    if src.startswith("float"):
        # Values whose conversion to every type is defined (out-of-range float->int is UB in C++).
        x = np.array([0.0, -0.0, 1.5, -1.5, 2.5, -7.9, 100.25, 1e-30], src)
    else:
        x = edges(src)
    oracle(lambda m: m.cast(m.constant(x), getattr(m, dst)), where="%s->%s" % (src, dst))


def test_creation(oracle):
    for dtype in NUMERIC + ["bool"]:
        oracle(lambda m: m.zeros([2, 3], dtype=getattr(m, dtype)), where=dtype)
        oracle(lambda m: m.ones((3,), dtype=getattr(m, dtype)), where=dtype)
        oracle(lambda m: m.eye(3, dtype=getattr(m, dtype)), where=dtype)
    oracle(lambda m: m.fill([2, 2], 7))
    oracle(lambda m: m.fill([2], 1.5))
    oracle(lambda m: m.zeros([2, -1]), where="negative dim")
    for args in [(5,), (1, 5), (1.0, 5), (5, 1, -1), (0, 1, 0.25), (3, 3), (10, 0, 3)]:
        oracle(lambda m: m.range(*args), where=str(args))
    oracle(lambda m: m.range(5, dtype=m.float64))
    oracle(lambda m: m.range(0, 5, 0), where="zero delta")
    oracle(lambda m: m.range(5, 0, 1), where="empty direction")


def test_matmul(oracle):
    rng = np.random.default_rng(3)
    for dtype in NUMERIC:
        a = rng.integers(-3, 4, (3, 4)).astype(dtype)
        b = rng.integers(-3, 4, (4, 2)).astype(dtype)
        oracle(lambda m: m.matmul(m.constant(a), m.constant(b)), where=dtype)
        oracle(lambda m: m.matmul(m.constant(a), m.constant(b.T), transpose_b=True), where=dtype)
        oracle(lambda m: m.matmul(m.constant(a.T), m.constant(b), transpose_a=True), where=dtype)
    a = rng.integers(-3, 4, (2, 3, 4)).astype(np.float32)
    b = rng.integers(-3, 4, (4, 5)).astype(np.float32)
    oracle(lambda m: m.matmul(m.constant(a), m.constant(b)), where="batched")
    oracle(lambda m: m.matmul(m.constant(a), m.constant(a)), where="inner dims differ")
    oracle(lambda m: m.matmul(m.constant(np.zeros((0, 3), np.float32)), m.constant(np.zeros((3, 2), np.float32))))


def test_bias_add(oracle):
    rng = np.random.default_rng(5)
    for dtype in NUMERIC:
        v = rng.integers(-9, 9, (2, 3, 4)).astype(dtype)
        b = rng.integers(-9, 9, 4).astype(dtype)
        oracle(lambda m: m.nn.bias_add(m.constant(v), m.constant(b)), where=dtype)
        oracle(lambda m: m.nn.bias_add(m.constant(v[0]), m.constant(b)), where=dtype + " rank 2")
    big = np.array([[2**31 - 1, -(2**31)]], np.int32)
    oracle(lambda m: m.nn.bias_add(m.constant(big), m.constant(np.array([1, -1], np.int32))), where="int32 wraps")
    oracle(lambda m: m.nn.bias_add(m.constant(np.zeros((0, 3), np.float32)), m.constant([1.0, 2.0, 3.0])),
           where="empty")
    oracle(lambda m: m.nn.bias_add(m.constant([1.0, 2.0, 3.0]), m.constant([1.0])), where="rank 1 value")
    oracle(lambda m: m.nn.bias_add(m.constant([[1.0, 2.0]]), m.constant([[1.0, 2.0]])), where="2-D bias")
    oracle(lambda m: m.nn.bias_add(m.constant([[1.0, 2.0, 3.0]]), m.constant([1.0, 2.0])), where="bias size")
    oracle(lambda m: m.nn.bias_add(m.constant([[True]]), m.constant([True])), where="bool")
    oracle(lambda m: m.nn.bias_add(m.constant([[1, 2]]), m.constant([1.0, 2.0])), where="mixed dtypes")


@pytest.mark.parametrize("dtype", FLOATS)
def test_conv2d(oracle, dtype):
    rng = np.random.default_rng(11)
    # Integer-valued inputs: every sum is exact, so any summation order gives the same bits.
    for shape, kernel, strides, padding, dilations in [
        ((1, 5, 5, 1), (3, 3, 1, 1), 1, "VALID", 1),
        ((2, 6, 7, 3), (3, 2, 3, 4), 1, "SAME", 1),
        ((2, 7, 7, 2), (3, 3, 2, 5), 2, "SAME", 1),
        ((1, 8, 9, 2), (2, 3, 2, 3), [2, 3], "VALID", 1),
        ((1, 9, 9, 1), (3, 3, 1, 2), 1, "SAME", 2),
        ((3, 4, 4, 3), (1, 1, 3, 6), 1, "VALID", 1),
        ((1, 2, 2, 1), (3, 3, 1, 1), 1, "SAME", 1),
        # Thin filters (few taps, output channels a multiple of 16): kiln's direct path.
        ((2, 9, 8, 1), (3, 3, 1, 16), 1, "SAME", 1),
        ((1, 11, 10, 2), (3, 3, 2, 32), 2, "SAME", 1),
        ((1, 12, 12, 3), (3, 3, 3, 16), 1, "VALID", 2),
        ((1, 5, 6, 1), (5, 5, 1, 16), [1, 2], "SAME", 1),
    ]:
        x = rng.integers(-3, 4, shape).astype(dtype)
        k = rng.integers(-3, 4, kernel).astype(dtype)
        oracle(lambda m: m.nn.conv2d(m.constant(x), m.constant(k), strides, padding, dilations=dilations),
               where="%s %s %s %s %s" % (shape, kernel, strides, padding, dilations))


@pytest.mark.parametrize("activation", ["relu", "relu6", None])
def test_conv2d_bias_activation_as_a_function(oracle, activation):
    # Traced, the three ops fuse into one kernel in kiln (and in TensorFlow's remapper):
    # integer-valued inputs keep every sum exact, so the bits must match.
    rng = np.random.default_rng(12)
    x = rng.integers(-3, 4, (3, 30, 30, 2)).astype(np.float32)
    k = rng.integers(-2, 3, (3, 3, 2, 24)).astype(np.float32)
    b = rng.integers(-8, 9, 24).astype(np.float32)

    def program(m):
        def step(x, k, b):
            y = m.nn.bias_add(m.nn.conv2d(x, k, 1, "SAME"), b)
            return getattr(m.nn, activation)(y) if activation else y
        return m.function(step)(m.constant(x), m.constant(k), m.constant(b))
    oracle(program, where=str(activation))


def test_conv2d_cases_tensorflow_gets_wrong():
    empty = kiln.nn.conv2d(kiln.constant(np.zeros((0, 4, 4, 1), np.float32)),
                           kiln.constant(np.ones((2, 2, 1, 1), np.float32)), 1, "VALID")
    assert empty.shape == (0, 3, 3, 1)
    with pytest.raises(kiln.errors.InvalidArgumentError, match="Computed output size would be negative"):
        kiln.nn.conv2d(kiln.constant(np.ones((1, 4, 4, 3), np.float32)),
                       kiln.constant(np.ones((5, 5, 3, 1), np.float32)), 1, "VALID")


def test_conv2d_bad_inputs(oracle):
    x = np.ones((1, 4, 4, 3), np.float32)
    oracle(lambda m: m.nn.conv2d(m.constant(x), m.constant(np.ones((3, 3, 2, 1), np.float32)), 1, "VALID"),
           where="depth not divisible")
    # (A rank-3 input aborts TensorFlow 2.21's process, a CHECK in its oneDNN path: kiln's
    # InvalidArgumentError for it is tested in tests/ops/conv_test.cc.)
    # Not compared: a filter larger than the image (VALID) and an empty batch. TensorFlow 2.21's
    # oneDNN kernel returns uninitialized memory for the first and the input's spatial shape for
    # the second; kiln raises / returns (0, 3, 3, 1) (tests/ops/conv_test.cc, below).
    oracle(lambda m: m.nn.conv2d(m.constant(x), m.constant(np.ones((1, 1, 3, 1), np.float64)), 1, "VALID"),
           where="mixed dtypes")
    oracle(lambda m: m.nn.conv2d(m.constant(x), m.constant(np.ones((1, 1, 3, 1), np.float32)), [1, 2, 3], "VALID"),
           where="three strides")


@pytest.mark.parametrize("pool", ["max_pool2d", "avg_pool2d"])
def test_pooling(oracle, pool):
    rng = np.random.default_rng(12)
    for dtype in (FLOATS if pool == "avg_pool2d" else NUMERIC):
        for shape, ksize, strides, padding in [
            ((1, 4, 4, 1), 2, 2, "VALID"),
            ((2, 5, 7, 3), 3, 2, "SAME"),
            ((1, 6, 6, 2), [2, 3], [1, 2], "SAME"),
            ((1, 3, 3, 1), 3, 1, "SAME"),
            ((1, 5, 5, 2), 2, 3, "VALID"),
            # Wide: channels in whole register blocks (256 bytes) and a shorter rest.
            ((2, 7, 9, 150), 3, 1, "SAME"),
            ((1, 9, 8, 70), [3, 2], [2, 1], "VALID"),
        ]:
            x = rng.integers(-50, 50, shape).astype(dtype)
            oracle(lambda m: getattr(m.nn, pool)(m.constant(x), ksize, strides, padding),
                   ulps=2, where="%s %s %s %s %s" % (dtype, shape, ksize, strides, padding))
    x = np.ones((1, 2, 2, 1), np.float32)
    # (A VALID window larger than the image kills TensorFlow 2.21's process with SIGFPE; kiln's
    # InvalidArgumentError for it is tested in tests/ops/conv_test.cc.)
    oracle(lambda m: getattr(m.nn, pool)(m.constant(x[0]), 1, 1, "VALID"), where="rank 3")


def test_max_pool_nan_and_signed_zeros_as_tensorflow(oracle):
    # TensorFlow's max pooling keeps a value only when it is greater: a NaN never wins, a
    # window of NaNs gives the lowest float, and of +0 and -0 the first stays.
    x = np.array([1.0, np.nan, 3.0, -np.inf], np.float32).reshape(1, 2, 2, 1)
    oracle(lambda m: m.nn.max_pool2d(m.constant(x), 2, 1, "VALID"))
    for vals in ([np.nan, 1.0], [1.0, np.nan], [np.nan, np.nan], [0.0, -0.0], [-0.0, 0.0]):
        for dtype in (np.float32, np.float64):
            x = np.array(vals, dtype).reshape(1, 1, 2, 1)
            oracle(lambda m: m.nn.max_pool2d(m.constant(x), [1, 2], 1, "VALID"), where="%s %s" % (vals, dtype))
            x5 = x.reshape(1, 1, 1, 2, 1)
            oracle(lambda m: m.nn.max_pool3d(m.constant(x5), [1, 1, 2], 1, "VALID"), where="3-D %s %s" % (vals, dtype))
    # Across a register block of channels and its rest: NaN and infinities anywhere in a window.
    wide = np.random.default_rng(5).standard_normal((1, 5, 5, 150)).astype(np.float32)
    wide.reshape(-1)[::7] = np.nan
    wide.reshape(-1)[3::11] = np.inf
    wide.reshape(-1)[5::13] = -np.inf
    oracle(lambda m: m.nn.max_pool2d(m.constant(wide), 3, 1, "SAME"), where="wide")


def test_unsorted_segment_sum_and_add_n(oracle):
    data = np.arange(12, dtype=np.float32).reshape(4, 3)
    ids = np.array([0, 2, 0, 1], np.int32)
    oracle(lambda m: m.math.unsorted_segment_sum(m.constant(data), m.constant(ids), 3))
    oracle(lambda m: m.add_n([m.constant(data), m.constant(data), m.constant(data)]))


def test_denormals_are_kept(tf):
    """A deliberate difference: kiln computes with denormals as IEEE (and numpy) do; TensorFlow's
    CPU kernels flush them to zero."""
    import kiln

    x = np.array([1e-40, -1e-42, 1e-39], np.float32)
    y = np.array([1e-40, 0.0, 1.0], np.float32)
    np.testing.assert_array_equal(kiln.add(kiln.constant(x), kiln.constant(y)).numpy(), x + y)
    assert tf.add(x, y).numpy()[0] == 0.0  # if TensorFlow ever stops flushing, revisit the note in docs/python.md


@pytest.mark.parametrize("dtype", ["uint8", "int16", "uint16", "int32", "int64", "uint32", "uint64"])
def test_truediv_of_integers_takes_tensorflows_float(tf, dtype):
    # 8- and 16-bit integers divide in float32, wider ones in float64 (mlp_core's x / 255).
    x, y = np.array([0, 7, 200], dtype), np.array([255, 2, 3], dtype)
    want = tf.constant(x) / tf.constant(y)
    for got in (kiln.constant(x) / kiln.constant(y), kiln.function(lambda a, b: a / b)(x, y)):
        assert got.dtype.name == want.dtype.name
        np.testing.assert_array_equal(got.numpy(), want.numpy())
