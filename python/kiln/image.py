"""kiln.image: TensorFlow's tf.image names kiln has."""
from ._ops_breadth import resize
from ._ops_composite import convert_image_dtype

__all__ = ["resize", "convert_image_dtype"]
