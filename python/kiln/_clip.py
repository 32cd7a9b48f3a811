"""tf.clip_by_value, tf.clip_by_norm, tf.clip_by_global_norm and tf.linalg.global_norm, with
TensorFlow's formulas (the same ops in the same order, so values agree to rounding)."""
from ._convert import convert_to_tensor


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    from ._ops import maximum, minimum
    t = convert_to_tensor(t)
    return maximum(minimum(t, convert_to_tensor(clip_value_max, dtype=t.dtype)),
                   convert_to_tensor(clip_value_min, dtype=t.dtype))


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """t * clip_norm / max(l2norm(t), clip_norm), the norm over `axes` (all by default)."""
    from ._ops import maximum, ones_like, reduce_sum, sqrt, where
    t = convert_to_tensor(t)
    clip_norm = convert_to_tensor(clip_norm, dtype=t.dtype)
    l2sum = reduce_sum(t * t, axes, keepdims=True)
    positive = l2sum > 0
    l2norm = where(positive, sqrt(where(positive, l2sum, ones_like(l2sum))), l2sum)
    return (t * clip_norm) / maximum(l2norm, clip_norm)


def global_norm(t_list, name=None):
    """sqrt(sum of every tensor's squared elements)."""
    from ._ops import reduce_sum, sqrt, stack
    tensors = [convert_to_tensor(t) for t in t_list if t is not None]
    if not tensors:
        raise ValueError("`t_list` must contain at least one tensor")
    half_squared = reduce_sum(stack([reduce_sum(t * t) / convert_to_tensor(2, dtype=t.dtype) for t in tensors]))
    return sqrt(half_squared * convert_to_tensor(2, dtype=half_squared.dtype))


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Every tensor scaled by clip_norm / max(global_norm, clip_norm); returns (list, norm).
    A non-finite norm makes every value NaN, as TensorFlow's does."""
    from ._ops import cast, minimum
    if isinstance(t_list, (str, bytes)) or not hasattr(t_list, "__iter__"):
        raise TypeError("`t_list` should be a sequence of tensors. Received %s." % type(t_list))
    t_list = list(t_list)
    norm = global_norm(t_list) if use_norm is None else convert_to_tensor(use_norm)
    one = convert_to_tensor(1.0, dtype=norm.dtype)
    clip = convert_to_tensor(clip_norm, dtype=norm.dtype)
    scale = clip * minimum(one / norm, one / clip) + (norm - norm)
    clipped = [None if t is None else convert_to_tensor(t) * cast(scale, convert_to_tensor(t).dtype) for t in t_list]
    return clipped, norm
