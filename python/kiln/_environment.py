"""What TensorFlow programs ask of their environment: tf.executing_eagerly, tf.version,
tf.get_logger, tf.device (a placement scope: kiln runs on the CPU, as TensorFlow does when no
other device exists), tf.is_tensor, tf.bitcast and tf.dtypes.saturate_cast."""
import contextlib
import logging
import threading
import types

from . import _core


def executing_eagerly():
    """False while a kiln.function traces (its ops become graph nodes), True otherwise."""
    return not _core.tracing_active()


def _version():
    from . import __version__
    return types.SimpleNamespace(VERSION=__version__, GIT_VERSION="kiln-" + __version__,
                                 COMPILER_VERSION="", GRAPH_DEF_VERSION=1882, GRAPH_DEF_VERSION_MIN_CONSUMER=0,
                                 GRAPH_DEF_VERSION_MIN_PRODUCER=0)


def get_logger():
    return logging.getLogger("kiln")


@contextlib.contextmanager
def device(device_name):
    """Ops inside run where kiln runs them: on the CPU (TensorFlow places ops of a device it
    does not have on the CPU too, with soft placement, which eager execution uses)."""
    if device_name is not None and not isinstance(device_name, str):
        raise ValueError("tf.device does not support functions when eager execution is enabled.")
    yield


def is_tensor(x):
    from ._variable import Variable
    return isinstance(x, (_core.Tensor, Variable))


def bitcast(input, type, name=None):  # noqa: A002 (TensorFlow's argument names)
    from . import raw_ops
    from ._convert import convert_to_tensor
    return raw_ops.Bitcast(input=convert_to_tensor(input), type=type)


def saturate_cast(value, dtype, name=None):
    """A cast that clamps to the target type's range first, as TensorFlow's: the limits are
    nudged toward zero where the input type cannot hold them exactly, so that no value outside
    the target's range reaches the cast."""
    import numpy as np

    from ._convert import convert_to_tensor
    from ._dtypes import as_dtype
    from ._ops import cast, maximum, minimum
    value = convert_to_tensor(value)
    dtype = as_dtype(dtype)
    if value.dtype.is_complex:
        if dtype.is_complex:
            return cast(value, dtype)
        from .math import real
        value = real(value)
    in_dtype, out = value.dtype, as_dtype(dtype.real_dtype) if dtype.is_complex else dtype
    np_dtype = in_dtype.as_numpy_dtype
    try:
        promoted_type = np.promote_types(np_dtype, out.as_numpy_dtype)
    except TypeError:  # bfloat16 is no numpy dtype
        promoted_type = float
    low = np_dtype(np.maximum(in_dtype.min, out.min))
    if np.array([low, out.min], dtype=promoted_type)[0] < np.array([low, out.min], dtype=promoted_type)[1]:
        low = np.nextafter(low, np_dtype(0), dtype=np_dtype)
    high = np_dtype(np.minimum(float(in_dtype.max), float(out.max)))
    if np.array([high, out.max], dtype=promoted_type)[0] > np.array([high, out.max], dtype=promoted_type)[1]:
        high = np.nextafter(high, np_dtype(0), dtype=np_dtype)
    value = minimum(maximum(value, convert_to_tensor(low, dtype=in_dtype)), convert_to_tensor(high, dtype=in_dtype))
    return cast(value, dtype)


_scopes = threading.local()


def get_current_name_scope():
    """tf.get_current_name_scope: the names of the enclosing name_scopes, "a/b" ("" at top)."""
    return getattr(_scopes, "current", "")


class name_scope:  # noqa: N801 (TensorFlow's name)
    """tf.name_scope(name): inside `with`, new variables' names start with the scope ("outer/
    name/kernel:0"); a name ending in "/" is a scope by its full name, and "" returns to the
    top. `with` gives the scope's full name ("outer/name/"). kiln's traced graphs do not prefix
    node names with it yet."""

    def __init__(self, name):
        if name is None or not isinstance(name, str):
            raise ValueError("name for name_scope must be a string.")
        self._name = name
        self._previous = []

    @property
    def name(self):
        return self._name

    def __enter__(self):
        current = get_current_name_scope()
        if not self._name:
            full = ""
        elif self._name.endswith("/"):
            full = self._name[:-1]
        else:
            full = current + "/" + self._name if current else self._name
        self._previous.append(current)
        _scopes.current = full
        return full + "/" if full else ""

    def __exit__(self, *exc):
        _scopes.current = self._previous.pop()
        return False


def get_static_value(tensor, partial=False):
    """tf.get_static_value: the value of `tensor` if it is known now, else None. An eager tensor
    gives its numpy value and a Python or numpy value comes back as it is. Inside a trace kiln
    folds only what its graph passes fold, after tracing, so a traced tensor gives None (where
    TensorFlow would evaluate some, such as tf.shape of a fully defined shape)."""
    del partial
    from ._core import Tensor
    if isinstance(tensor, Tensor):
        return None if tensor.is_symbolic else tensor.numpy()
    if hasattr(tensor, "_kiln_tensor") or hasattr(type(tensor), "__tf_tensor__"):
        return None  # a variable: its value can change
    return tensor
