"""kiln.random: tf.random with TensorFlow's numbers.

The ops are TensorFlow's (RandomUniform, StatelessRandomUniformV2, RngReadAndSkip, ...) with
its Philox generator and sampling transforms, and the functions here compose them as
TensorFlow's Python does, so a program that fixes its seeds gets the numbers TensorFlow
gives it: tf.random.set_seed + uniform/normal/truncated_normal eagerly, every stateless_*
function, and tf.random.Generator.
"""
from . import _dtypes, raw_ops
from ._convert import convert_to_tensor
from ._dtypes import as_dtype
from ._generator import Algorithm, Generator, create_rng_state, get_global_generator, set_global_generator
from ._random import get_seed, op_seeds, set_seed

__all__ = ["uniform", "normal", "truncated_normal", "shuffle", "set_seed", "stateless_uniform", "stateless_normal",
           "stateless_truncated_normal", "split", "fold_in", "Generator", "Algorithm", "create_rng_state",
           "get_global_generator", "set_global_generator", "get_seed"]

_UNIFORM_DTYPES = ("float16", "bfloat16", "float32", "float64", "int32", "int64")
_STATELESS_UNIFORM_DTYPES = _UNIFORM_DTYPES + ("uint32", "uint64")


def _shape(shape):
    if hasattr(shape, "dtype"):
        return shape
    try:
        big = any(int(d) >= 2 ** 31 for d in shape)
    except TypeError:  # a traced dimension (tf.shape(x)[0]) among them: packed as int32
        big = False
    return convert_to_tensor(shape, dtype=_dtypes.int64 if big else _dtypes.int32)


def _check_dtype(dtype, accepted):
    if dtype.name not in accepted:
        raise ValueError("Argument `dtype` got invalid value %r. Accepted dtypes are (%s)."
                         % (dtype, ", ".join(repr(as_dtype(d)) for d in accepted)))


def uniform(shape, minval=0, maxval=None, dtype=_dtypes.float32, seed=None, name=None):
    dtype = as_dtype(dtype)
    _check_dtype(dtype, _UNIFORM_DTYPES)
    if maxval is None:
        if dtype.is_integer:
            raise ValueError("Must specify maxval for integer dtype %r" % dtype)
        maxval = 1
    shape = _shape(shape)
    minval_is_zero = isinstance(minval, int) and minval == 0
    maxval_is_one = isinstance(maxval, int) and maxval == 1
    if not minval_is_zero or not maxval_is_one or dtype.is_integer:
        minval = convert_to_tensor(minval, dtype=dtype)
        maxval = convert_to_tensor(maxval, dtype=dtype)
    seed1, seed2 = op_seeds(seed)
    if dtype.is_integer:
        return raw_ops.RandomUniformInt(shape=shape, minval=minval, maxval=maxval, seed=seed1, seed2=seed2)
    result = raw_ops.RandomUniform(shape=shape, dtype=dtype, seed=seed1, seed2=seed2)
    if minval_is_zero:
        return result if maxval_is_one else result * maxval
    return result * (maxval - minval) + minval


def normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    dtype = as_dtype(dtype)
    mean, stddev = convert_to_tensor(mean, dtype=dtype), convert_to_tensor(stddev, dtype=dtype)
    seed1, seed2 = op_seeds(seed)
    rnd = raw_ops.RandomStandardNormal(shape=_shape(shape), dtype=dtype, seed=seed1, seed2=seed2)
    return rnd * stddev + mean


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    """Normal values with those two or more standard deviations from the mean drawn again."""
    dtype = as_dtype(dtype)
    mean, stddev = convert_to_tensor(mean, dtype=dtype), convert_to_tensor(stddev, dtype=dtype)
    seed1, seed2 = op_seeds(seed)
    rnd = raw_ops.TruncatedNormal(shape=_shape(shape), dtype=dtype, seed=seed1, seed2=seed2)
    return rnd * stddev + mean


def shuffle(value, seed=None, name=None):
    """value's rows (dimension 0) in a random order (TensorFlow's shuffle and numbers)."""
    seed1, seed2 = op_seeds(seed)
    return raw_ops.RandomShuffle(value=convert_to_tensor(value), seed=seed1, seed2=seed2)


# ---- stateless: the seed is a shape-[2] int tensor; the same seed, the same numbers ----------

def _key_counter_alg(seed, alg):
    from ._generator import alg_to_int, philox_scramble_seed
    alg = alg_to_int(3 if alg is None else alg)
    if alg == Algorithm.AUTO_SELECT.value:
        key, counter = raw_ops.StatelessRandomGetKeyCounter(seed=seed)
    elif alg == Algorithm.PHILOX.value:
        key, counter = philox_scramble_seed(seed)
    else:
        raise ValueError("Argument `alg` got unsupported value %s. Supported values are %s for the Philox "
                         "algorithm and %s for auto-selection (kiln runs on CPUs, where TensorFlow has no ThreeFry)."
                         % (alg, Algorithm.PHILOX.value, Algorithm.AUTO_SELECT.value))
    return key, counter, alg


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=_dtypes.float32, name=None, alg="auto_select"):
    dtype = as_dtype(dtype)
    _check_dtype(dtype, _STATELESS_UNIFORM_DTYPES)
    if dtype.is_integer:
        if (minval is None) != (maxval is None):
            raise ValueError("For integer `dtype` argument %s, argument `minval` and `maxval` must be both None or "
                             "not None. Got `minval`=%s and `maxval`=%s." % (dtype, minval, maxval))
        if minval is not None and dtype.name in ("uint32", "uint64"):
            raise ValueError("Argument `dtype` got invalid value %s when argument `minval` is not None. Please don't "
                             "use unsigned integers in this case." % dtype)
    elif maxval is None:
        maxval = 1
    shape = _shape(shape)
    key, counter, alg = _key_counter_alg(seed, alg)
    if dtype.is_integer and minval is None:
        return raw_ops.StatelessRandomUniformFullIntV2(shape=shape, key=key, counter=counter, alg=alg, dtype=dtype)
    minval, maxval = convert_to_tensor(minval, dtype=dtype), convert_to_tensor(maxval, dtype=dtype)
    if dtype.is_integer:
        return raw_ops.StatelessRandomUniformIntV2(shape=shape, key=key, counter=counter, alg=alg, minval=minval,
                                                   maxval=maxval)
    rnd = raw_ops.StatelessRandomUniformV2(shape=shape, key=key, counter=counter, alg=alg, dtype=dtype)
    return rnd * (maxval - minval) + minval


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None, alg="auto_select"):
    dtype = as_dtype(dtype)
    mean, stddev = convert_to_tensor(mean, dtype=dtype), convert_to_tensor(stddev, dtype=dtype)
    key, counter, alg = _key_counter_alg(seed, alg)
    rnd = raw_ops.StatelessRandomNormalV2(shape=_shape(shape), key=key, counter=counter, alg=alg, dtype=dtype)
    return rnd * stddev + mean


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None,
                               alg="auto_select"):
    dtype = as_dtype(dtype)
    mean, stddev = convert_to_tensor(mean, dtype=dtype), convert_to_tensor(stddev, dtype=dtype)
    key, counter, alg = _key_counter_alg(seed, alg)
    rnd = raw_ops.StatelessTruncatedNormalV2(shape=_shape(shape), key=key, counter=counter, alg=alg, dtype=dtype)
    return rnd * stddev + mean


def split(seed, num=2, alg="auto_select"):
    """num new seeds ([num, 2], the seed's dtype) from one."""
    seed = convert_to_tensor(seed)
    return stateless_uniform(shape=[num, 2], seed=seed, dtype=seed.dtype, minval=None, maxval=None, alg=alg)


def fold_in(seed, data, alg="auto_select"):
    """A new seed from a seed and an integer."""
    from ._ops import stack
    data = convert_to_tensor(data)
    seed1 = stateless_uniform(shape=[], seed=seed, dtype=data.dtype, minval=None, maxval=None, alg=alg)
    return stack([seed1, data])
