"""kiln.dtypes (tf.dtypes): the element types and their conversions."""
from ._dtypes import DType, as_dtype, bool, int32, int64, float32, float64, double  # noqa: A004

__all__ = ["DType", "as_dtype", "bool", "int32", "int64", "float32", "float64", "double"]
