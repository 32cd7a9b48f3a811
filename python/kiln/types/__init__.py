"""kiln.types: TensorFlow's tf.types, the abstract types of kiln's objects."""
from . import experimental

__all__ = ["experimental"]
