"""TensorFlow's core initializers (tf.zeros_initializer, tf.ones_initializer,
tf.constant_initializer, tf.random_normal_initializer, tf.random_uniform_initializer): callables
`init(shape, dtype)` giving a variable's initial value. A seeded random initializer draws from
the stateless ops with seed (seed, 0), so it gives TensorFlow's numbers, the same on every call;
an unseeded one draws new numbers (the global seed's stream). tf.initializers (Keras's) is
Keras's, not these."""
import numpy as np

from . import _dtypes

__all__ = ["Initializer", "zeros_initializer", "ones_initializer", "constant_initializer",
           "random_normal_initializer", "random_uniform_initializer"]

_PARTITION_ARGS = ("partition_shape", "partition_offset")


class Initializer:
    """The base class: `__call__(shape, dtype=None, **kwargs)`, `get_config`, `from_config`."""

    def __call__(self, shape, dtype=None, **kwargs):
        raise NotImplementedError

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("dtype", None)
        return cls(**config)

    def _shape(self, shape, kwargs, support_partition=True):
        for k in kwargs:
            if k not in _PARTITION_ARGS:
                raise TypeError("Keyword argument should be one of %s. Received: %s" % (list(_PARTITION_ARGS), k))
            if not support_partition:
                raise ValueError("%s initializer doesn't support partition-related arguments"
                                 % type(self).__name__)
        return kwargs.get("partition_shape", shape)


def _numeric_or_bool(dtype):
    dtype = _dtypes.as_dtype(dtype)
    if dtype == _dtypes.string or dtype.name in ("variant", "resource"):
        raise ValueError("Argument `dtype` expected to be numeric or boolean. Received %s." % dtype)
    return dtype


def _floating(dtype):
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError("Argument `dtype` is expected to be floating point. Received: %s." % dtype)
    return dtype


class zeros_initializer(Initializer):  # noqa: N801 (TensorFlow's name)
    """Zeros of any numeric or bool dtype."""

    def __call__(self, shape, dtype=_dtypes.float32, **kwargs):
        from ._ops import zeros

        return zeros(self._shape(shape, kwargs), _numeric_or_bool(dtype))


class ones_initializer(Initializer):  # noqa: N801
    """Ones of any numeric or bool dtype."""

    def __call__(self, shape, dtype=_dtypes.float32, **kwargs):
        from ._ops import ones

        return ones(self._shape(shape, kwargs), _numeric_or_bool(dtype))


class constant_initializer(Initializer):  # noqa: N801
    """`value` (a scalar, or as many values as the shape has elements) in the requested shape."""

    def __init__(self, value=0, support_partition=False):
        if not (np.isscalar(value) or isinstance(value, (list, tuple, np.ndarray))):
            raise TypeError("Invalid type for initial value: %s. Expected Python scalar, list or tuple of values, "
                            "or numpy.ndarray." % type(value).__name__)
        self.value = value
        self.support_partition = support_partition

    def __call__(self, shape, dtype=None, **kwargs):
        from ._convert import constant

        self._shape(shape, kwargs, support_partition=self.support_partition)
        return constant(self.value, dtype=None if dtype is None else _dtypes.as_dtype(dtype), shape=shape)

    def get_config(self):
        return {"value": self.value}


class random_uniform_initializer(Initializer):  # noqa: N801
    """Uniform in [minval, maxval) for float and integer dtypes."""

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=_dtypes.float32, **kwargs):
        from . import random

        dtype = _dtypes.as_dtype(dtype)
        if not dtype.is_floating and not dtype.is_integer:
            raise ValueError("Argument `dtype` expected to be numeric or boolean. Received %s." % dtype)
        shape = self._shape(shape, kwargs)
        if self.seed is not None:
            return random.stateless_uniform(shape, seed=[self.seed, 0], minval=self.minval, maxval=self.maxval,
                                            dtype=dtype)
        return random.uniform(shape, minval=self.minval, maxval=self.maxval, dtype=dtype)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class random_normal_initializer(Initializer):  # noqa: N801
    """Normal with `mean` and `stddev`, for float dtypes."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=_dtypes.float32, **kwargs):
        from . import random

        dtype = _floating(dtype)
        shape = self._shape(shape, kwargs)
        if self.seed is not None:
            return random.stateless_normal(shape, seed=[self.seed, 0], mean=self.mean, stddev=self.stddev,
                                           dtype=dtype)
        return random.normal(shape, mean=self.mean, stddev=self.stddev, dtype=dtype)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}
