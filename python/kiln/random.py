"""kiln.random: tf.random's generators (kiln's own streams: values differ from TensorFlow's)."""
from . import _core
from . import _dtypes
from ._dtypes import as_dtype
from ._ops import _ints
from ._random import set_seed, get_seed

__all__ = ["uniform", "normal", "truncated_normal", "set_seed"]


def uniform(shape, minval=0, maxval=None, dtype=_dtypes.float32, seed=None, name=None):
    dtype = as_dtype(dtype)
    shape = _ints(shape, "shape")
    if dtype.is_integer:
        if maxval is None:
            raise ValueError("Must specify maxval for integer dtype %r" % dtype)
        return _core.random_uniform_int(shape, int(minval), int(maxval), dtype, get_seed(seed))
    if not dtype.is_floating:
        raise ValueError("Invalid dtype %r" % dtype)
    return _core.random_uniform(shape, float(minval), 1.0 if maxval is None else float(maxval), dtype, get_seed(seed))


def normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    dtype = as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError("Invalid dtype %r" % dtype)
    return _core.random_normal(_ints(shape, "shape"), float(mean), float(stddev), dtype, get_seed(seed))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    """Normal values with those two or more standard deviations from the mean drawn again."""
    from . import raw_ops
    from ._ops import constant
    dtype = as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError("Invalid dtype %r" % dtype)
    op_seed = get_seed(seed)
    rnd = raw_ops.TruncatedNormal(shape=_ints(shape, "shape"), dtype=dtype, seed=op_seed or 0, seed2=0)
    return rnd * constant(stddev, dtype) + constant(mean, dtype)
