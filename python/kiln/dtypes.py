"""kiln.dtypes (tf.dtypes): the element types and their conversions."""
from ._dtypes import (DType, as_dtype, bool, int32, int64, float32, float64, double, uint8, int8, int16,  # noqa: A004
                      uint16, uint32, uint64, string, complex64, complex128, float16, half, bfloat16, variant)

__all__ = ["DType", "as_dtype", "bool", "int32", "int64", "float32", "float64", "double", "uint8", "int8", "int16",
           "uint16", "uint32", "uint64", "string", "complex64", "complex128", "float16", "half", "bfloat16",
           "variant", "cast", "complex", "saturate_cast"]


def saturate_cast(value, dtype, name=None):
    from ._environment import saturate_cast as _saturate_cast
    return _saturate_cast(value, dtype)


def cast(x, dtype, name=None):
    """tf.dtypes.cast: tf.cast."""
    from ._ops import cast as _cast
    return _cast(x, dtype, name=name)


def complex(real, imag, name=None):  # noqa: A001 (TensorFlow's name)
    """tf.dtypes.complex: tf.complex."""
    from ._ops_complex import complex as _complex
    return _complex(real, imag, name=name)
