"""kiln.compat.v1 (tf.compat.v1): the TensorFlow 1 names that TensorFlow 2 programs and
libraries still call, where they mean what kiln's TensorFlow 2 functions do. Sessions,
collections and global graphs do not exist in kiln; placeholder() builds inputs of a
kiln.__internal__.FuncGraph (how libraries infer shapes)."""
import types as _types

from .._internal_api import placeholder  # noqa: F401


def _kiln():
    import kiln
    return kiln


def __getattr__(name):
    """TensorFlow 1 names that are also TensorFlow 2 names (pad, gather, cond, ...) are kiln's."""
    if name.startswith("__"):
        raise AttributeError(name)
    if name in _V1_ONLY:
        raise AttributeError("module 'kiln.compat.v1' has no attribute '%s' (TensorFlow 1's tf.compat.v1.%s needs "
                             "sessions or global graphs, which kiln does not have)" % (name, name))
    try:
        return getattr(_kiln(), name)
    except AttributeError:
        raise AttributeError("module 'kiln.compat.v1' has no attribute '%s' (not implemented in kiln)" % name) from None


_V1_ONLY = frozenset(("Session", "InteractiveSession", "get_default_graph", "global_variables_initializer",
                      "get_variable", "variable_scope", "get_collection", "add_to_collection", "disable_eager_execution",
                      "disable_v2_behavior"))


def reset_default_graph():
    """kiln has no global graph to reset (each FuncGraph is its own)."""


def sparse_placeholder(dtype, shape=None, name=None):
    """A SparseTensor of placeholders (indices [N, rank], values [N], dense_shape [rank])."""
    from .._sparse import SparseTensor
    from .._shape import TensorShape
    k = _kiln()
    rank = TensorShape(shape).rank if shape is not None else None
    dense = list(TensorShape(shape).as_list()) if rank is not None else None
    indices = placeholder(k.int64, [None, rank])
    values = placeholder(dtype, [None])
    if dense is not None and all(d is not None for d in dense):
        return SparseTensor(indices, values, k.constant(dense, k.int64))
    return SparseTensor(indices, values, placeholder(k.int64, [rank]))


def assign(ref, value, use_locking=None, name=None, validate_shape=None):
    del use_locking, name, validate_shape
    return ref.assign(value)


def assign_add(ref, value, use_locking=None, name=None):
    del use_locking, name
    return ref.assign_add(value)


def assign_sub(ref, value, use_locking=None, name=None):
    del use_locking, name
    return ref.assign_sub(value)


def where(condition, x=None, y=None, name=None):
    """TensorFlow 1's where: x and y of the condition's shape, or the condition's first dim."""
    return _kiln().where(condition, x, y, name=name)


nn = _types.ModuleType("kiln.compat.v1.nn", "tf.compat.v1.nn: kiln.nn's functions under their v1 names.")
nn.__getattr__ = lambda name: getattr(_kiln().nn, name)
math = _types.ModuleType("kiln.compat.v1.math", "tf.compat.v1.math: kiln.math.")
math.__getattr__ = lambda name: getattr(_kiln().math, name)
