"""kiln.dtypes (tf.dtypes): the element types and their conversions."""
from ._dtypes import (DType, as_dtype, bool, int32, int64, float32, float64, double, uint8, int8, int16,  # noqa: A004
                      uint16, uint32, uint64, string, complex64, complex128)

__all__ = ["DType", "as_dtype", "bool", "int32", "int64", "float32", "float64", "double"]


def saturate_cast(value, dtype, name=None):
    from ._environment import saturate_cast as _saturate_cast
    return _saturate_cast(value, dtype)
