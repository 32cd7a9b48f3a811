"""Random numbers with TensorFlow's bits: the same seeds give kiln and TensorFlow the same
numbers, bit for bit, for the stateless ops (V1 seeds, V2 keys and counters), the stateful
ops (whose streams advance per call until set_seed), tf.random's functions, dropout and
tf.random.Generator. TensorFlow runs beside kiln in each test; nothing is copied from it."""
import numpy as np
import pytest

import kiln

SHAPES = [[0], [1], [5], [2, 3, 7], [0, 3]]
FLOATS = ["float32", "float64", "float16", "bfloat16"]


def _same(ours, theirs):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs)


def _both(tf, name, **kwargs):
    """Runs raw op `name` in both; kwargs are numpy values, or dtype names under 'dtype'/'type'."""
    def args(m):
        return {k: getattr(m, v) if k in ("dtype", "type") else v for k, v in kwargs.items()}
    theirs = getattr(tf.raw_ops, name)(**args(tf))
    ours = getattr(kiln.raw_ops, name)(**args(kiln))
    if isinstance(theirs, (list, tuple)):
        for o, t in zip(ours, theirs):
            _same(o.numpy(), t.numpy())
    else:
        _same(ours.numpy(), theirs.numpy())


def _key_counter(seed):
    return np.array([seed * 7919 + 1], np.uint64), np.array([2 ** 64 - 3 + seed % 3, seed], np.uint64)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal"])
def test_stateless_v1_floats(tf, op, dtype, shape):
    for seed in ([1, 2], [-7, 2 ** 40]):
        _both(tf, op, shape=np.array(shape, np.int32), seed=np.array(seed, np.int64), dtype=dtype)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["StatelessRandomUniformV2", "StatelessRandomNormalV2", "StatelessTruncatedNormalV2"])
def test_stateless_v2_floats(tf, op, dtype, shape):
    for seed, alg in ((1, 1), (5, 3)):
        key, counter = _key_counter(seed)  # the counter's low word wraps: the carry reaches the high one
        _both(tf, op, shape=np.array(shape, np.int64), key=key, counter=counter, alg=np.int32(alg), dtype=dtype)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_stateless_bounded_ints(tf, dtype):
    info = np.iinfo(dtype)
    for lo, hi in ((-5, 1000), (info.min, info.max), (0, 1)):
        bounds = dict(minval=np.array(lo, dtype), maxval=np.array(hi, dtype))
        _both(tf, "StatelessRandomUniformInt", shape=np.array([13], np.int32), seed=np.array([3, 4], np.int32),
              **bounds)
        key, counter = _key_counter(2)
        _both(tf, "StatelessRandomUniformIntV2", shape=np.array([2, 7], np.int32), key=key, counter=counter,
              alg=np.int32(1), **bounds)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32", "uint64"])
def test_stateless_full_range_ints(tf, dtype):
    _both(tf, "StatelessRandomUniformFullInt", shape=np.array([9], np.int32), seed=np.array([1, 2], np.int64),
          dtype=dtype)
    key, counter = _key_counter(4)
    _both(tf, "StatelessRandomUniformFullIntV2", shape=np.array([9], np.int32), key=key, counter=counter,
          alg=np.int32(3), dtype=dtype)


def test_seed_scrambling_and_bitcast(tf):
    for seed in ([1, 2], [0, 0], [-1, 2 ** 31 - 1]):
        _both(tf, "StatelessRandomGetKeyCounter", seed=np.array(seed, np.int32))
        _both(tf, "StatelessRandomGetKeyCounterAlg", seed=np.array(seed, np.int64))
    _both(tf, "StatelessRandomGetAlg")
    for value, to in ((np.array([1, -2, 3], np.int64), "uint32"), (np.array([[1, 2], [3, 4]], np.int32), "float64"),
                      (np.array([0.5, -1], np.float32), "uint8"), (np.zeros([0, 2], np.int16), "int32"),
                      (np.array(7, np.uint64), "int64")):
        _both(tf, "Bitcast", input=value, type=to)


@pytest.mark.parametrize("op,dtype", [("RandomUniform", d) for d in FLOATS] +
                         [("RandomStandardNormal", d) for d in FLOATS] + [("TruncatedNormal", d) for d in FLOATS])
def test_stateful_streams_advance_per_call_until_set_seed(tf, op, dtype):
    for m in (kiln, tf):
        m.random.set_seed(0)  # both restart their streams (TensorFlow clears its kernel cache)
    for shape in ([3], [0], [2, 5], [3]):
        _both(tf, op, shape=np.array(shape, np.int32), dtype=dtype, seed=5, seed2=9)
    kiln.random.set_seed(0)
    tf.random.set_seed(0)
    _both(tf, op, shape=np.array([3], np.int32), dtype=dtype, seed=5, seed2=9)


def test_stateful_uniform_int(tf):
    for m in (kiln, tf):
        m.random.set_seed(0)
    for lo, hi, dtype in ((0, 10, np.int32), (-2 ** 62, 2 ** 62, np.int64), (0, 10, np.int32)):
        _both(tf, "RandomUniformInt", shape=np.array([6], np.int32), minval=np.array(lo, dtype),
              maxval=np.array(hi, dtype), seed=1, seed2=2)


def test_tf_random_functions_follow_the_global_seed(tf):
    """set_seed, then op seeds drawn as TensorFlow draws them: the same numbers in order."""
    for m in (kiln, tf):
        m.random.set_seed(1234)

    def run(m):
        return [m.random.uniform([4]), m.random.uniform([4], seed=3), m.random.uniform([2, 2], -2.0, 3.0),
                m.random.uniform([5], 0, 100, dtype=m.int64), m.random.uniform([3], maxval=4.0, dtype=m.float16),
                m.random.normal([3], 1.0, 2.0, dtype=m.float64), m.random.truncated_normal([6], stddev=0.5),
                m.nn.dropout(m.ones([12]), 0.4), m.nn.dropout(m.ones([8], m.float64), 0.25, seed=9),
                m.random.uniform([4])]

    for ours, theirs in zip(run(kiln), run(tf)):
        _same(ours.numpy(), theirs.numpy())
    for m in (kiln, tf):
        m.random.set_seed(None)
    _same(kiln.random.uniform([4], seed=7).numpy(), tf.random.uniform([4], seed=7).numpy())  # op seed alone


def test_random_ops_in_functions_number_their_seeds_as_tensorflow(tf):
    for m in (kiln, tf):
        m.random.set_seed(77)
    ours = kiln.function(lambda: kiln.random.uniform([3]) + kiln.random.normal([3]))
    theirs = tf.function(lambda: tf.random.uniform([3]) + tf.random.normal([3]))
    for _ in range(3):  # each call advances the two ops' streams
        _same(ours().numpy(), theirs().numpy())


def test_stateless_functions(tf):
    def run(m):
        return [m.random.stateless_uniform([4], seed=[1, 2]),
                m.random.stateless_uniform([4], seed=[1, 2], alg="philox"),
                m.random.stateless_uniform([3], seed=[7, 8], minval=-1.0, maxval=1.0, dtype=m.float64),
                m.random.stateless_uniform([4], seed=[1, 2], minval=3, maxval=9, dtype=m.int32),
                m.random.stateless_uniform([4], seed=[1, 2], minval=None, maxval=None, dtype=m.uint64),
                m.random.stateless_normal([2, 2], seed=[5, 6], mean=2.0, stddev=3.0),
                m.random.stateless_truncated_normal([5], seed=np.array([5, 6], np.int32), dtype=m.bfloat16),
                m.random.split([1, 2], 3), m.random.split(np.array([4, 5], np.int64)), m.random.fold_in([1, 2], 7)]

    for ours, theirs in zip(run(kiln), run(tf)):
        _same(ours.numpy(), theirs.numpy())
    traced = kiln.function(lambda s: kiln.random.stateless_normal([3], seed=s))
    _same(traced(np.array([5, 6], np.int32)).numpy(), tf.random.stateless_normal([3], seed=[5, 6]).numpy())


@pytest.mark.parametrize("seed", [1234, 0, 2 ** 70 + 5, [3, 4]], ids=str)
def test_generator_draws_tensorflows_numbers(tf, seed):
    g_tf, g = tf.random.Generator.from_seed(seed), kiln.random.Generator.from_seed(seed)
    _same(g.state.numpy(), g_tf.state.numpy())

    def draws(m, gen):
        return [gen.normal([3]), gen.uniform([5], 1.0, 2.0), gen.uniform([4], 0, 10, dtype=m.int32),
                gen.uniform([2], dtype=m.float64), gen.truncated_normal([2, 3], stddev=2.0),
                gen.uniform_full_int([3], m.int64), gen.uniform_full_int([2]), gen.make_seeds(2),
                gen.skip(10), gen.normal([0]), gen.uniform([3], dtype=m.bfloat16)]

    for ours, theirs in zip(draws(kiln, g), draws(tf, g_tf)):
        _same(ours.numpy(), theirs.numpy())
    _same(g.state.numpy(), g_tf.state.numpy())
    for ours, theirs in zip(g.split(2), g_tf.split(2)):
        _same(ours.normal([2]).numpy(), theirs.normal([2]).numpy())
    f_tf, f = tf.function(lambda: g_tf.normal([2])), kiln.function(lambda: g.normal([2]))
    for _ in range(2):  # inside a function the state variable advances on every call
        _same(f().numpy(), f_tf().numpy())
    g.reset_from_seed(99)
    g_tf.reset_from_seed(99)
    _same(g.normal([4]).numpy(), g_tf.normal([4]).numpy())
    state = np.array([5, 2 ** 63 - 1, -3], np.int64)
    a, b = kiln.random.Generator.from_state(state, "philox"), tf.random.Generator.from_state(state, "philox")
    _same(a.uniform([6]).numpy(), b.uniform([6]).numpy())
    _same(a.state.numpy(), b.state.numpy())
    _same(kiln.random.create_rng_state(seed, 1).numpy(), tf.random.create_rng_state(seed, 1).numpy())


def test_generator_from_non_deterministic_state_differs():
    a, b = kiln.random.Generator.from_non_deterministic_state(), kiln.random.Generator.from_non_deterministic_state()
    assert not np.array_equal(a.normal([8]).numpy(), b.normal([8]).numpy())
    g = kiln.random.get_global_generator()
    assert g is kiln.random.get_global_generator() and g.normal([2]).shape == [2]


def _messages(tf, call):
    """Both raise; their messages' TensorFlow part (before " [Op:") must agree."""
    with pytest.raises(Exception) as theirs:
        call(tf)
    with pytest.raises(Exception) as ours:
        call(kiln)
    # TensorFlow's first line, without its function-node prefix and the quantized dtypes
    # (kiln has none) that its allowed-dtype lists end with.
    want = str(theirs.value).split("\n")[0].split(" [Op:")[0].split("}} ")[-1].split(", qint8")[0]
    assert want in str(ours.value), (str(ours.value), want)
    assert type(ours.value).__name__ == type(theirs.value).__name__


def _kc(m):
    return dict(key=m.constant(np.array([1], np.uint64)), counter=m.constant(np.array([1, 2], np.uint64)))


BAD = [
    ("seed_shape", lambda m: m.raw_ops.StatelessRandomUniform(shape=[2], seed=[1, 2, 3])),
    ("seed_dtype", lambda m: m.raw_ops.StatelessRandomNormal(shape=[2], seed=[1.0, 2.0])),
    ("negative_dim", lambda m: m.raw_ops.StatelessRandomUniform(shape=[-2], seed=[1, 2])),
    ("matrix_shape", lambda m: m.raw_ops.StatelessRandomUniform(shape=[[2]], seed=[1, 2])),
    ("scalar_shape", lambda m: m.raw_ops.StatelessRandomNormal(shape=np.int32(3), seed=[1, 2])),
    ("int_dtype", lambda m: m.raw_ops.StatelessRandomUniform(shape=[2], seed=[1, 2], dtype=m.int32)),
    ("empty_range", lambda m: m.raw_ops.StatelessRandomUniformInt(shape=[2], seed=[1, 2], minval=5, maxval=5)),
    ("vector_minval", lambda m: m.raw_ops.StatelessRandomUniformInt(shape=[2], seed=[1, 2], minval=[1], maxval=5)),
    ("full_int_seed", lambda m: m.raw_ops.StatelessRandomUniformFullInt(
        shape=[3], seed=np.array([1, 2], np.uint32), dtype=m.int64)),
    ("key_shape", lambda m: m.raw_ops.StatelessRandomUniformV2(
        shape=[2], key=m.constant(np.array([1, 2], np.uint64)), counter=_kc(m)["counter"], alg=1)),
    ("threefry", lambda m: m.raw_ops.StatelessRandomNormalV2(shape=[2], alg=2, **_kc(m))),
    ("alg_vector", lambda m: m.raw_ops.StatelessRandomUniformV2(shape=[2], alg=[1], **_kc(m))),
    ("v2_empty_range", lambda m: m.raw_ops.StatelessRandomUniformIntV2(shape=[3], alg=1, minval=3, maxval=3,
                                                                         **_kc(m))),
    ("key_counter_seed", lambda m: m.raw_ops.StatelessRandomGetKeyCounter(seed=[1, 2, 3])),
    ("stateful_int_range", lambda m: m.raw_ops.RandomUniformInt(shape=[2], minval=3, maxval=3)),
    ("stateful_dtype", lambda m: m.raw_ops.RandomUniform(shape=[2], dtype=m.int32)),
    ("bitcast_widen", lambda m: m.raw_ops.Bitcast(input=m.constant([1, 2, 3], m.int32), type=m.int64)),
    ("bitcast_scalar", lambda m: m.raw_ops.Bitcast(input=m.constant(1, m.int32), type=m.int64)),
    ("bitcast_bool", lambda m: m.raw_ops.Bitcast(input=m.constant([True]), type=m.int8)),
]


@pytest.mark.parametrize("name,call", BAD, ids=[b[0] for b in BAD])
def test_bad_arguments_raise_tensorflows_errors(tf, name, call):
    _messages(tf, call)


def _state_var(m, value):
    return m.Variable(np.array(value))


def _skip(m, var, alg=1, delta=None):
    resource = var.handle if m.__name__ == "tensorflow" else var
    return m.raw_ops.RngReadAndSkip(resource=resource, alg=alg,
                                    delta=m.constant(np.uint64(1) if delta is None else delta))


BAD_STATES = [
    ("float_state", [1.0, 2.0, 3.0], {}),
    ("matrix_state", [[1, 2, 3]], {}),
    ("short_state", [1, 2], {}),
    ("threefry", [1, 2, 3], dict(alg=2)),
    ("unknown_alg", [1, 2, 3], dict(alg=7)),
    ("delta_vector", [1, 2, 3], dict(delta=np.array([1], np.uint64))),
]


@pytest.mark.parametrize("name,state,kwargs", BAD_STATES, ids=[b[0] for b in BAD_STATES])
def test_rng_read_and_skip_refuses_bad_states(tf, name, state, kwargs):
    _messages(tf, lambda m: _skip(m, _state_var(m, np.array(state, np.int64 if name != "float_state" else np.float32)),
                                  **kwargs))


def test_rng_read_and_skip_carries_into_the_high_word(tf):
    for state, delta in (([-1, -1, 3], 1), ([2 ** 63 - 1, 5, 0], 2 ** 60), ([1, 2, 3], 0)):
        ours, theirs = _state_var(kiln, np.array(state, np.int64)), _state_var(tf, np.array(state, np.int64))
        _same(_skip(kiln, ours, delta=np.uint64(delta)).numpy(), _skip(tf, theirs, delta=np.uint64(delta)).numpy())
        _same(ours.numpy(), theirs.numpy())
    longer = _state_var(kiln, np.array([1, 2, 3, 4], np.int64))  # TensorFlow's kernel overruns its output here
    _same(_skip(kiln, longer).numpy(), np.array([1, 2, 3], np.int64))
    _same(longer.numpy(), np.array([257, 2, 3, 4], np.int64))


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16", "complex64", "string"])
def test_shuffle(tf, dtype):
    for m in (kiln, tf):
        m.random.set_seed(3)
    for shape in ([10], [7, 2], [1], [0], [5, 0], [2, 2, 3], [300]):
        x = np.arange(int(np.prod(shape))).reshape(shape)
        x = x.astype(bytes) if dtype == "string" else x.astype(dtype)
        for seed in (None, 4):  # each call advances the op's stream
            _same(kiln.random.shuffle(x, seed=seed).numpy(), tf.random.shuffle(x, seed=seed).numpy())
    for m in (kiln, tf):
        m.random.set_seed(5)
    ours = kiln.function(lambda v: kiln.random.shuffle(v))
    theirs = tf.function(lambda v: tf.random.shuffle(v))
    x = np.arange(12).reshape(6, 2).astype(bytes if dtype == "string" else dtype)
    for _ in range(2):
        _same(ours(x).numpy(), theirs(x).numpy())
