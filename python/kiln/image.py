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


def _width_axis(image):
    rank = image.shape.rank
    if rank not in (3, 4):
        raise ValueError("'image' (shape %s) must have either 3 or 4 dimensions." % (image.shape,))
    return rank - 2


def flip_left_right(image):
    """tf.image.flip_left_right: reverses the width axis of an [h, w, c] or [n, h, w, c] image."""
    image = _t(image)
    return _raw.ReverseV2(tensor=image, axis=_t([_width_axis(image)], _dtypes.int32))


def flip_up_down(image):
    image = _t(image)
    return _raw.ReverseV2(tensor=image, axis=_t([_width_axis(image) - 1], _dtypes.int32))


def random_flip_left_right(image, seed=None):
    """Flips each image left-right with probability 1/2 (for a batch, each image on its own
    draw, as TensorFlow's). The draws are kiln's random stream, not TensorFlow's bits."""
    from . import random as _random
    from ._ops import reshape, where
    image = _t(image)
    axis = _width_axis(image)
    # One draw per image: the batch's size (a tensor, known when the function runs) as the shape.
    shape = _raw.Slice(input=_raw.Shape(input=image, out_type=_dtypes.int32), begin=_t([0], _dtypes.int32),
                       size=_t([1], _dtypes.int32)) if image.shape.rank == 4 else []
    draw = _random.uniform(shape, seed=seed)
    flip = draw < 0.5
    if image.shape.rank == 4:
        flip = reshape(flip, [-1, 1, 1, 1])
    return where(flip, _raw.ReverseV2(tensor=image, axis=_t([axis], _dtypes.int32)), image)


def random_crop(value, size, seed=None, name=None):
    """tf.image.random_crop: a `size` slice of `value` at a uniformly random offset."""
    del name
    from . import random as _random
    value = _t(value)
    size = _t(size, _dtypes.int32)
    if not size.is_symbolic and value.shape.is_fully_defined():
        want, have = size.numpy().tolist(), value.shape.as_list()
        if len(want) != len(have) or any(w > h for w, h in zip(want, have)):
            from . import errors
            raise errors.InvalidArgumentError(None, None, "Need value.shape >= size, got %s and %s" % (have, want))
    shape = _raw.Shape(input=value, out_type=_dtypes.int32)
    # Known only when the function runs, a too-large size fails in Slice; the floor keeps the
    # modulus defined until then.
    limit = _raw.Maximum(x=shape - size + 1, y=_t(1, _dtypes.int32))
    offset = _random.uniform(_raw.Shape(input=shape, out_type=_dtypes.int32), dtype=_dtypes.int32,
                             maxval=_dtypes.int32.max, seed=seed) % limit
    return _raw.Slice(input=value, begin=offset, size=size)


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    image = _t(image)
    if image.shape.rank == 3:
        return image[offset_height:offset_height + target_height, offset_width:offset_width + target_width]
    return image[:, offset_height:offset_height + target_height, offset_width:offset_width + target_width]


__all__ = ["resize", "convert_image_dtype", "adjust_contrast", "flip_left_right", "flip_up_down",
           "random_flip_left_right", "random_crop", "crop_to_bounding_box"]
