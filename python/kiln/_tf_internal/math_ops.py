"""tensorflow.python.ops.math_ops: the names libraries import from it."""
from ..math import is_nan  # noqa: F401
