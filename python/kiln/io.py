"""kiln.io: TensorFlow's tf.io, for the parts kiln has (base64 of string tensors)."""
from . import _dtypes
from . import raw_ops as _raw
from ._convert import convert_to_tensor as _t


def encode_base64(input, pad=False, name=None):  # noqa: A002
    """Web-safe base64 (- and _ for + and /), padded with = when `pad`."""
    return _raw.EncodeBase64(input=_t(input, _dtypes.string), pad=pad)


def decode_base64(input, name=None):  # noqa: A002
    """The bytes of web-safe base64 strings."""
    return _raw.DecodeBase64(input=_t(input, _dtypes.string))


__all__ = ["encode_base64", "decode_base64"]
