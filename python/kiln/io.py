"""kiln.io: TensorFlow's tf.io, for the parts kiln has: base64 of string tensors, decode_raw,
read_file and write_file (ops: inside a kiln.function they run on every call), and gfile (python/kiln/_gfile.py)."""
from . import _dtypes
from . import raw_ops as _raw
from ._convert import convert_to_tensor as _t


def encode_base64(input, pad=False, name=None):  # noqa: A002
    """Web-safe base64 (- and _ for + and /), padded with = when `pad`."""
    return _raw.EncodeBase64(input=_t(input, _dtypes.string), pad=pad)


def decode_base64(input, name=None):  # noqa: A002
    """The bytes of web-safe base64 strings."""
    return _raw.DecodeBase64(input=_t(input, _dtypes.string))


def decode_raw(input_bytes, out_type, little_endian=True, fixed_length=None, name=None):
    """Each string's bytes as a vector of `out_type` (all strings of one length): shape
    input_bytes.shape + [length / element size]. With `fixed_length`, each string's first
    fixed_length bytes, zero-padded (DecodePaddedRaw): strings may differ in length."""
    if fixed_length is not None:
        return _raw.DecodePaddedRaw(input_bytes=_t(input_bytes, _dtypes.string),
                                    fixed_length=_t(fixed_length, _dtypes.int32), out_type=_dtypes.as_dtype(out_type),
                                    little_endian=little_endian)
    return _raw.DecodeRaw(bytes=_t(input_bytes, _dtypes.string), out_type=_dtypes.as_dtype(out_type),
                          little_endian=little_endian)


def read_file(filename, name=None):
    """The bytes of a file as a scalar string tensor."""
    return _raw.ReadFile(filename=_t(filename, _dtypes.string))


def write_file(filename, contents, name=None):
    """Writes a scalar string to a file, making its directory first."""
    _raw.WriteFile(filename=_t(filename, _dtypes.string), contents=_t(contents, _dtypes.string))


from . import _gfile as gfile  # noqa: E402
from ._tfrecord import TFRecordOptions, TFRecordWriter  # noqa: E402
from ._csv import decode_csv  # noqa: E402
from ._parse_example import (FixedLenFeature, FixedLenSequenceFeature, VarLenFeature, parse_example,  # noqa: E402
                             parse_single_example)

__all__ = ["encode_base64", "decode_base64", "decode_raw", "read_file", "write_file", "gfile", "TFRecordOptions",
           "TFRecordWriter", "FixedLenFeature", "FixedLenSequenceFeature", "VarLenFeature", "parse_example",
           "parse_single_example", "decode_csv"]
