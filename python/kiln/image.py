"""kiln.image: TensorFlow's tf.image names kiln has."""
from ._ops_breadth import resize

__all__ = ["resize"]
