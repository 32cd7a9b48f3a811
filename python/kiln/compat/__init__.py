"""kiln.compat (tf.compat): text and bytes helpers, and the v1/v2 namespaces programs written
for both TensorFlow generations reach into."""
import numbers as _numbers

from . import v1, v2  # noqa: F401


def as_bytes(bytes_or_text, encoding="utf-8"):
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError("Expected binary or unicode string, got %r" % (bytes_or_text,))


def as_text(bytes_or_text, encoding="utf-8"):
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError("Expected binary or unicode string, got %r" % (bytes_or_text,))


as_str = as_text
as_str_any = lambda value, encoding="utf-8": as_text(value, encoding) if isinstance(value, bytes) else str(value)  # noqa: E731
integral_types = (_numbers.Integral,)
real_types = (_numbers.Real,)
complex_types = (_numbers.Complex,)
bytes_or_text_types = (bytes, str)


def dimension_value(dimension):
    """A dimension as an int or None (TensorShape dims already are)."""
    return getattr(dimension, "value", dimension)


def forward_compatible(year, month, day):
    """Whether kiln may use op behavior introduced after the date: it follows TensorFlow 2.21."""
    return (year, month, day) <= (2025, 1, 1)


__all__ = ["v1", "v2", "as_bytes", "as_text", "as_str", "as_str_any", "dimension_value", "forward_compatible",
           "integral_types", "real_types", "complex_types", "bytes_or_text_types"]
