"""tf.io.parse_single_example and parse_example with FixedLenFeature, VarLenFeature and
FixedLenSequenceFeature: one KilnParseExample node (eagerly, or in a trace such as a
Dataset.map function) parses the serialized tf.train.Example protos."""
import collections

import numpy as np

from . import _core
from ._convert import convert_to_tensor
from ._dtypes import as_dtype, float32, int64, string
from ._shape import TensorShape

_FEATURE_DTYPES = ("int64", "float32", "string")


class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A dense feature of a fixed shape; without a default_value it is required."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """Any number of rows of `shape`, padded across a batch with default_value (or zeros)."""

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """Any number of values, parsed into a SparseTensor."""


def _check_dtype(key, dtype):
    dtype = as_dtype(dtype)
    if dtype.name not in _FEATURE_DTYPES:
        raise ValueError("Unsupported dtype %s for feature %s: Example features are int64, float32 or string"
                         % (dtype.name, key))
    return dtype


def _dims(shape):
    s = TensorShape(shape)
    if s.rank is None or any(d is None for d in s.as_list()):
        raise ValueError("A FixedLenFeature's shape must be fully defined, got %s" % (s,))
    return s.as_list()


def _parse(serialized, features, batched):
    if not isinstance(features, dict) or not features:
        raise ValueError("Missing: features was %s." % (features,))
    serialized = convert_to_tensor(serialized, string)
    dense_keys, defaults, dense_specs, sparse_keys, sparse_types = [], [], [], [], []
    for key in sorted(features):
        f = features[key]
        if isinstance(f, VarLenFeature):
            sparse_keys.append(key)
            sparse_types.append(_check_dtype(key, f.dtype))
            continue
        if isinstance(f, FixedLenSequenceFeature):
            dtype = _check_dtype(key, f.dtype)
            row = _dims(f.shape)
            dims = [-1] + row
            default = (np.zeros([0], dtype.as_numpy_dtype) if f.default_value is None and dtype != string else
                       f.default_value if f.default_value is not None else np.zeros([0], object))
        elif isinstance(f, FixedLenFeature):
            dtype = _check_dtype(key, f.dtype)
            dims = _dims(f.shape)
            default = f.default_value
            if default is None:
                default = np.zeros([0], object if dtype == string else dtype.as_numpy_dtype)
            else:
                default = np.reshape(np.asarray(default, object if dtype == string else dtype.as_numpy_dtype), dims)
        else:
            raise ValueError("Unsupported feature type %s for key %s" % (type(f).__name__, key))
        dense_keys.append(key)
        defaults.append(convert_to_tensor(default, dtype))
        dense_specs.append((dims, dtype))
    out = _core.parse_example(serialized, dense_keys, defaults, dense_specs, sparse_keys, sparse_types)
    result = {}
    ns = len(sparse_keys)
    if ns:
        from .sparse import SparseTensor
        for i, key in enumerate(sparse_keys):
            result[key] = SparseTensor(out[i], out[ns + i], out[2 * ns + i])
    for i, key in enumerate(dense_keys):
        result[key] = out[3 * ns + i]
    return {k: result[k] for k in features}


def parse_single_example(serialized, features, example_names=None, name=None):
    """One serialized Example (a string scalar) -> {key: Tensor or SparseTensor}."""
    del example_names, name
    return _parse(serialized, features, batched=False)


def parse_example(serialized, features, example_names=None, name=None):
    """A batch of serialized Examples (a string vector) -> {key: batched Tensor or SparseTensor}."""
    del example_names, name
    return _parse(serialized, features, batched=True)


del float32, int64
