"""Python values to tensors, by tf.constant's and tf.convert_to_tensor's rules."""
import numpy as np

from . import _core
from . import _dtypes
from . import errors
from ._dtypes import as_dtype

Tensor = _core.Tensor
_INT32 = np.iinfo(np.int32)


def _infer_python(value):
    """A numpy array for a Python value (number, bool, nested lists), with TF's dtype inference."""
    if isinstance(value, (list, tuple)):
        leaves = _leaves(value, [])
        # TF infers from the first element: after a number, bools count as numbers; after a
        # bool, a number is a mixed sequence.
        texts = sum(isinstance(v, (str, bytes)) for v in leaves)
        if (leaves and isinstance(leaves[0], (bool, np.bool_)) and not all(
                isinstance(v, (bool, np.bool_)) for v in leaves)) or 0 < texts < len(leaves):
            raise ValueError("Can't convert Python sequence with mixed types to Tensor.")
    try:
        with np.errstate(all="ignore"):
            arr = np.array(value)
    except OverflowError:
        raise ValueError("Can't convert Python sequence with out-of-range integer to Tensor.") from None
    except ValueError:
        raise ValueError("Can't convert non-rectangular Python sequence to Tensor.") from None
    kind = arr.dtype.kind
    if kind == "f":
        return arr.astype(np.float32) if arr.dtype == np.float64 else arr
    if kind in "iu":
        if arr.dtype == np.uint64 or (arr.size and (arr.max() > _INT32.max or arr.min() < _INT32.min)):
            if arr.dtype == np.uint64:
                raise ValueError("Can't convert Python sequence with out-of-range integer to Tensor.")
            return arr.astype(np.int64)
        return arr.astype(np.int32)
    if kind == "b":
        return arr
    if kind == "c":  # Python complex numbers: complex128, as TensorFlow infers them
        return arr.astype(np.complex128)
    if kind in "US" or (kind == "O" and leaves_are_text(value)):
        # Objects keep each value whole (numpy's bytes arrays drop trailing NULs).
        return arr if isinstance(value, np.ndarray) else _object_array(value)
    if arr.dtype == object:
        if _mixed(value):
            raise ValueError("Can't convert Python sequence with mixed types to Tensor.")
        raise ValueError("Can't convert non-rectangular Python sequence to Tensor.")
    raise TypeError("Cannot convert %r to a kiln tensor" % (value,))


def leaves_are_text(value):
    leaves = _leaves(value, [])
    return bool(leaves) and all(isinstance(v, (str, bytes, np.str_, np.bytes_)) for v in leaves)


def _object_array(value):
    arr = np.empty(np.shape(np.array(value, dtype=object)), dtype=object)
    arr[...] = value if arr.ndim else np.array(value, dtype=object)
    return arr


def _strings_tensor(arr):
    """A string tensor from a numpy array of str (UTF-8 encoded), bytes or such objects."""
    flat = []
    for v in arr.reshape(-1).tolist():
        if isinstance(v, str):
            flat.append(v.encode("utf-8"))
        elif isinstance(v, bytes):
            flat.append(v)
        else:
            raise TypeError("Cannot convert %r to EagerTensor of dtype string" % (v,))
    return Tensor._from_strings(flat, list(arr.shape))


def _mixed(value):
    return isinstance(value, (list, tuple)) and len({type(v) for v in value}) > 1


def _leaves(value, out):
    if isinstance(value, (list, tuple)):
        for v in value:
            _leaves(v, out)
    else:
        out.append(value)
    return out


_NUMBER_TYPES = (bool, int, float, np.bool_, np.integer, np.floating)


def _python_as(value, dtype):
    """A Python value as `dtype`, refusing lossy conversions as TF does (TypeError)."""
    leaves = _leaves(value, [])
    if dtype == _dtypes.string:
        if not leaves_are_text(value) and leaves:
            raise TypeError("Cannot convert %r to EagerTensor of dtype string" % (value,))
        try:
            return _object_array(value)
        except ValueError:
            raise ValueError("Can't convert non-rectangular Python sequence to Tensor.") from None
    if any(isinstance(v, (str, bytes)) for v in leaves) or (
            not dtype.is_complex and any(isinstance(v, (complex, np.complexfloating)) for v in leaves)):
        raise TypeError("Cannot convert %r to EagerTensor of dtype %s" % (value, dtype.name))
    if dtype.is_complex:
        bad = not all(isinstance(v, _NUMBER_TYPES + (complex, np.complexfloating)) for v in leaves)
    elif dtype.is_bool:
        bad = not all(isinstance(v, (bool, np.bool_)) for v in leaves)
    elif dtype.is_integer:
        bad = not all(isinstance(v, _NUMBER_TYPES) and not isinstance(v, (float, np.floating)) for v in leaves)
    else:
        bad = not all(isinstance(v, _NUMBER_TYPES) for v in leaves)
    if bad:
        raise TypeError("Cannot convert %r to EagerTensor of dtype %s" % (value, dtype.name))
    try:
        with np.errstate(all="ignore"):
            return np.array(np.array(value), dtype=dtype.as_numpy_dtype)
    except OverflowError:
        raise ValueError("Can't convert Python sequence with out-of-range integer to Tensor.") from None
    except ValueError:
        raise ValueError("Can't convert non-rectangular Python sequence to Tensor.") from None


def _from_array(arr):
    """A tensor over a numpy array's memory when it can be shared, else over a copy."""
    if arr.dtype.kind in "OSU":
        return _strings_tensor(arr)
    as_dtype(arr.dtype)  # TypeError naming a dtype kiln lacks
    if not arr.flags.c_contiguous or not arr.flags.aligned:
        arr = np.array(arr, order="C", copy=True)
    if arr.dtype == _BFLOAT16:  # numpy hands ml_dtypes' bfloat16 out only as its bits
        return Tensor._from_array(arr.view(np.uint16), bfloat16_bits=True)
    return Tensor._from_array(arr)


_BFLOAT16 = np.dtype(_dtypes.bfloat16.as_numpy_dtype)


def constant(value, dtype=None, shape=None, name=None):
    """A tensor from a Python value or numpy array (tf.constant). numpy arrays are shared, not
    copied, when C-contiguous with a kiln dtype: writing to the array later changes the tensor."""
    del name
    if dtype is not None:
        dtype = as_dtype(dtype)
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype != dtype:
            raise TypeError("Expected tensor %s with dtype %r, but got dtype %r." % (value.numpy(), dtype, value.dtype))
        t = value
    elif isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
        if dtype is not None and dtype == _dtypes.string:
            if arr.dtype.kind not in "OSU":
                raise TypeError("Cannot convert %r to EagerTensor of dtype string" % (value,))
        elif dtype is not None and arr.dtype != dtype.as_numpy_dtype:
            with np.errstate(all="ignore"):
                arr = arr.astype(dtype.as_numpy_dtype)
        t = _from_array(arr)
    else:
        arr = _infer_python(value) if dtype is None else _python_as(value, dtype)
        t = _from_array(arr)
    if shape is not None:
        t = _reshape_for_constant(t, value, shape)
    return t


def _reshape_for_constant(t, value, shape):
    from ._shape import TensorShape

    dims = TensorShape(shape).as_list()
    n = 1
    for d in dims:
        n *= d
    size = int(np.prod(t._shape_tuple(), dtype=np.int64))
    if size == n:
        return _core.reshape(t, _from_array(np.asarray(dims, dtype=np.int64)))
    if size == 1:
        return _core.fill(dims, _core.reshape(t, _from_array(np.zeros(0, dtype=np.int64))))
    raise TypeError("Eager execution of tf.constant with unsupported shape. Tensor %s (converted from %r) has %d "
                    "elements, but got `shape` %s with %d elements)." % (t.numpy(), value, size, tuple(dims), n))


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    """A tensor for `value` (tf.convert_to_tensor): tensors as they are, the rest by constant()."""
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype != as_dtype(dtype):
            raise ValueError("Tensor conversion requested dtype %s for Tensor with dtype %s: %r"
                             % (as_dtype(dtype).name, value.dtype.name, value))
        return value
    convert = getattr(value, "_kiln_tensor", None)  # Variables and other tensor-like objects
    if convert is not None:
        return convert_to_tensor(convert(), dtype=dtype)
    convert = getattr(type(value), "__tf_tensor__", None)  # TensorFlow's protocol (Keras's variables)
    if convert is not None:
        return convert_to_tensor(convert(value, dtype=dtype, name=name), dtype=dtype)
    if isinstance(value, (list, tuple)) and _holds_symbolic(value):
        return _autopack(value, as_dtype(dtype) if dtype is not None else _first_dtype(value))
    if dtype is None and dtype_hint is not None:
        try:
            return constant(value, dtype_hint)
        except (TypeError, ValueError):
            return constant(value)
    return constant(value, dtype)


def _holds_symbolic(seq):
    for e in seq:
        if isinstance(e, Tensor) and e.is_symbolic:
            return True
        if isinstance(e, (list, tuple)) and _holds_symbolic(e):
            return True
    return False


def _first_dtype(seq):
    for e in seq:
        if isinstance(e, Tensor):
            return e.dtype
        if isinstance(e, (list, tuple)):
            d = _first_dtype(e)
            if d is not None:
                return d
    return None


def _autopack(seq, dtype):
    """TensorFlow's conversion of a (nested) list holding traced tensors: the elements stacked, in
    the dtype of the first tensor (Python numbers converted to it; other tensors must match)."""
    parts = [_autopack(e, dtype) if isinstance(e, (list, tuple)) and _holds_symbolic(e) else
             convert_to_tensor(e, dtype=dtype) for e in seq]
    return _core.stack(parts, 0)


# TF converts the right operand of these leniently (a dtype hint: 1.5 next to an int32 tensor
# becomes a float32 tensor and the op reports the mismatch); every other binary op, and every
# reflected one (`1.5 + x`), converts it to the tensor's dtype strictly (TypeError "Cannot
# convert 1.5 to EagerTensor of dtype int32").
_LENIENT = frozenset(("AddV2", "MatMul", "RealDiv"))


def binary_operand(value, like, op, reflected=False):
    """The other operand of `like <op> value` (or, reflected, of `value <op> like`), by TF's rules."""
    if value is None:
        raise ValueError("Attempt to convert a value (None) with an unsupported type (<class 'NoneType'>) "
                         "to a Tensor.")
    if op in _LENIENT and not reflected:
        return convert_to_tensor(value, dtype_hint=like.dtype)
    if isinstance(value, Tensor):
        return value  # a dtype mismatch is the op's InvalidArgumentError
    return convert_to_tensor(value, dtype=like.dtype)


def convert_pair(x, y, op):
    """Both operands of a binary op function (tf.add(x, y), tf.maximum(x, y)), as TF does: add and
    matmul convert the first operand alone and hint its dtype to the second; the others take the
    dtype of the first tensor among them and convert the rest to it strictly."""
    if op in _LENIENT or not isinstance(y, Tensor) or isinstance(x, Tensor):
        x = convert_to_tensor(x)
        return x, binary_operand(y, x, op)
    return binary_operand(x, y, op), y


def same_dtype_for_truediv(x, y):
    """Operands of `/` and tf.math.truediv, which refuses (TypeError) what the others leave to the op."""
    if x.dtype != y.dtype:
        raise TypeError("`x` and `y` must have the same dtype, got %r != %r." % (x.dtype, y.dtype))
    return x, y
