"""kiln.bitwise: TensorFlow's tf.bitwise over kiln.raw_ops (integer tensors)."""
from . import raw_ops as _raw
from ._convert import convert_to_tensor as _t


def _binary(op):
    def fn(x, y, name=None):
        x = _t(x)
        return op(x=x, y=_t(y, x.dtype))

    return fn


bitwise_and = _binary(_raw.BitwiseAnd)
bitwise_or = _binary(_raw.BitwiseOr)
bitwise_xor = _binary(_raw.BitwiseXor)
left_shift = _binary(_raw.LeftShift)
right_shift = _binary(_raw.RightShift)


def invert(x, name=None):
    return _raw.Invert(x=_t(x))


__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "invert"]
