"""kiln.autograph: Python control flow on tensors as graph control flow (tf.autograph).

kiln.function converts the functions it traces (autograph=True, the default); to_graph
converts one explicitly. See _transform.py for what is converted and what keeps its Python
meaning."""
import functools

from . import _runtime
from . import _transform

__all__ = ["to_graph", "to_code", "do_not_convert", "experimental"]


def to_graph(entity, recursive=True, experimental_optional_features=None):
    """The converted version of a Python function, or the function itself when it cannot be
    converted (no source, a lambda, a generator): it then keeps its Python meaning."""
    del recursive, experimental_optional_features
    try:
        return _transform.convert(entity)
    except _transform.CannotConvert:
        return entity


def to_code(entity, recursive=True, experimental_optional_features=None):
    """The source of the converted function (tf.autograph.to_code)."""
    del recursive, experimental_optional_features
    return _transform.convert(entity).__kiln_autograph_source__


def do_not_convert(func=None):
    """A function AutoGraph calls as it is, never converting it."""
    if func is None:
        return do_not_convert

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    wrapper.__kiln_do_not_convert__ = True
    return wrapper


class experimental:  # noqa: N801 (TensorFlow's namespace)
    do_not_convert = staticmethod(do_not_convert)
