"""kiln.image: TensorFlow's tf.image names kiln has."""
from . import _dtypes
from . import raw_ops as _raw
from ._convert import convert_to_tensor as _t
from ._ops_breadth import resize
from ._ops_composite import convert_image_dtype


def adjust_contrast(images, contrast_factor):
    """Per image and channel, (x - mean) * contrast_factor + mean over height and width. Images
    that are not float16/float32 are adjusted as float32 and converted back (saturating), as
    TensorFlow does. There is no gradient (TensorFlow registers none: LookupError)."""
    images = _t(images)
    original = images.dtype
    as_float = images if original in (_dtypes.float16, _dtypes.float32) else convert_image_dtype(images, _dtypes.float32)
    adjusted = _raw.AdjustContrastv2(images=as_float, contrast_factor=_t(contrast_factor, _dtypes.float32))
    return convert_image_dtype(adjusted, original, saturate=True)


__all__ = ["resize", "convert_image_dtype", "adjust_contrast"]
