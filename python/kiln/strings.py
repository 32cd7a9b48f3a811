"""kiln.strings: TensorFlow's tf.strings over kiln.raw_ops (string tensors of bytes; Python
str values are encoded as UTF-8, as TensorFlow encodes them)."""
from . import _dtypes
from . import raw_ops as _raw
from ._convert import convert_to_tensor as _t
from ._convert import convert_to_tensor
from ._ragged import per_value  # a RaggedTensor's strings keep its rows
import numpy as np


def _s(x):
    return _t(x, _dtypes.string)


def join(inputs, separator="", name=None):
    """Elementwise concatenation of string tensors of one shape (scalars broadcast); ragged
    inputs of the same rows join value by value."""
    from ._ragged import RaggedTensor
    ragged = [x for x in inputs if isinstance(x, RaggedTensor)]
    if ragged:
        splits = [s.numpy().tolist() for s in ragged[0].nested_row_splits]
        if len(ragged) != len(inputs) or any([s.numpy().tolist() for s in x.nested_row_splits] != splits
                                             for x in ragged):
            raise ValueError("kiln.strings.join: ragged inputs must all be RaggedTensors of the same rows")
        return ragged[0].with_flat_values(_raw.StringJoin(inputs=[x.flat_values for x in inputs], separator=separator))
    return _raw.StringJoin(inputs=[_s(x) for x in inputs], separator=separator)


@per_value
def length(input, unit="BYTE", name=None):  # noqa: A002
    """The length of each string, in bytes or ("UTF8_CHAR") Unicode characters."""
    return _raw.StringLength(input=_s(input), unit=unit)


@per_value
def upper(input, encoding="", name=None):  # noqa: A002
    return _raw.StringUpper(input=_s(input), encoding=encoding)


@per_value
def lower(input, encoding="", name=None):  # noqa: A002
    return _raw.StringLower(input=_s(input), encoding=encoding)


@per_value
def strip(input, name=None):  # noqa: A002
    """Leading and trailing ASCII whitespace removed."""
    return _raw.StringStrip(input=_s(input))


@per_value
def substr(input, pos, len, unit="BYTE", name=None):  # noqa: A002
    """Substrings [pos, pos + len) of each string (pos < 0 counts from the end)."""
    pos = _t(pos)
    return _raw.Substr(input=_s(input), pos=pos, len=_t(len, pos.dtype), unit=unit)


@per_value
def to_number(input, out_type=_dtypes.float32, name=None):  # noqa: A002
    """Each string parsed as a number of `out_type` (float32, float64, int32 or int64)."""
    return _raw.StringToNumber(string_tensor=_s(input), out_type=_dtypes.as_dtype(out_type))


@per_value
def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="", name=None):  # noqa: A002
    """Each element formatted as text (printf's %f/%e/%g for floats, %d for integers)."""
    return _raw.AsString(input=_t(input), precision=precision, scientific=scientific, shortest=shortest,
                         width=width, fill=fill)


def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """The strings along `axis` (all axes when None) joined with `separator`."""
    inputs = _s(inputs)
    if axis is None:
        axis = list(range(inputs.ndim - 1, -1, -1))  # TensorFlow joins every axis, the last first
    elif isinstance(axis, int):
        axis = [axis]
    return _raw.ReduceJoin(inputs=inputs, reduction_indices=_t(axis, _dtypes.int32), keep_dims=keepdims,
                           separator=separator)


__all__ = ["join", "length", "upper", "lower", "strip", "substr", "to_number", "as_string", "reduce_join", "split",
           "bytes_split", "unicode_split", "unicode_decode", "to_hash_bucket_fast"]


def _pieces(input, cut, name):  # noqa: A002
    """cut(bytes) -> list of bytes per element: a 1-D tensor for a scalar, a RaggedTensor for
    a vector (TensorFlow's shapes); eager only."""
    from ._ragged import RaggedTensor
    t = convert_to_tensor(input)
    if t.dtype != _dtypes.string:
        raise TypeError("%s needs a string tensor, got %s" % (name, t.dtype.name))
    if t.shape.rank == 0:
        return convert_to_tensor(np.array(cut(t.numpy()), dtype=object), dtype=_dtypes.string)
    if t.shape.rank != 1:
        raise NotImplementedError("kiln.strings.%s takes a scalar or a vector of strings" % name)
    rows = [cut(b) for b in t.numpy().tolist()]
    flat = np.array([p for r in rows for p in r], dtype=object)
    return RaggedTensor.from_row_lengths(convert_to_tensor(flat, dtype=_dtypes.string) if flat.size else
                                         convert_to_tensor(np.zeros([0], dtype=object), dtype=_dtypes.string),
                                         [len(r) for r in rows])


def split(input=None, sep=None, maxsplit=-1, name=None):  # noqa: A002
    """Splits each string at sep (None: runs of whitespace, as Python's str.split)."""
    sep_b = sep.encode() if isinstance(sep, str) else sep
    if sep_b == b"":
        raise ValueError("sep must not be empty")
    return _pieces(input, lambda b: b.split(sep_b, maxsplit) if sep_b is not None else b.split(None, maxsplit),
                   "split")


def bytes_split(input, name=None):  # noqa: A002
    return _pieces(input, lambda b: [b[i:i + 1] for i in range(len(b))], "bytes_split")


def unicode_split(input, input_encoding, errors="replace", replacement_char=65533, name=None):  # noqa: A002
    if input_encoding.upper() not in ("UTF-8", "UTF8"):
        raise NotImplementedError("kiln.strings.unicode_split decodes UTF-8 only")
    return _pieces(input, lambda b: [c.encode("utf-8") for c in b.decode("utf-8", "replace")], "unicode_split")


def unicode_decode(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                   replace_control_characters=False, name=None):
    """The code points (int32) of each string: a vector for a scalar, else a RaggedTensor of shape
    input.shape + [None]. Encodings: UTF-8, UTF-16-BE, UTF-32-BE, Latin-1."""
    t = convert_to_tensor(input, _dtypes.string)
    splits, values = _raw.UnicodeDecode(input=t, input_encoding=input_encoding, errors=errors,
                                        replacement_char=replacement_char,
                                        replace_control_characters=replace_control_characters)
    if t.shape.rank == 0:
        return values
    from ._ragged import RaggedTensor
    dims = t.shape.as_list()
    nested, rows = [], dims[0]
    for d in dims[1:]:  # the uniform inner axes of the input, as row splits
        nested.append(np.arange(0, rows * d + 1, d, dtype=np.int64))
        rows *= d
    nested.append(splits.numpy())
    return RaggedTensor.from_nested_row_splits(values, nested)


def to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002
    """Each string's bucket in [0, num_buckets): its 64-bit fingerprint (TensorFlow's) modulo
    num_buckets, so strings land in the buckets TensorFlow puts them in. A RaggedTensor gives a
    RaggedTensor of the same rows."""
    from ._ragged import RaggedTensor
    if isinstance(input, RaggedTensor):
        return input.with_flat_values(to_hash_bucket_fast(input.flat_values, num_buckets))
    return _raw.StringToHashBucketFast(input=convert_to_tensor(input, _dtypes.string), num_buckets=num_buckets)
