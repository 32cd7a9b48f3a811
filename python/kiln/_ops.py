"""kiln's ops under TensorFlow's names and keyword arguments. Each converts its arguments as
TF does and calls one C++ op (python/src/ops.cc)."""
import numpy as np

from . import _core
from . import _dtypes
from ._convert import convert_to_tensor, convert_pair, constant, same_dtype_for_truediv
from ._dtypes import as_dtype

Tensor = _core.Tensor


def _t(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def _symbolic_shape(v):
    """A shape known only when the traced function runs (a symbolic tensor, or a list holding
    one) as an int64 shape tensor; None for a shape known now."""
    if isinstance(v, Tensor):
        return cast(v, _dtypes.int64) if v.is_symbolic else None
    if isinstance(v, (list, tuple)) and any(isinstance(i, Tensor) and i.is_symbolic for i in v):
        from . import stack

        return stack([cast(_t(i), _dtypes.int64) for i in v])
    return None


def _ints(v, what):
    """A list of Python ints from an int, a sequence, a numpy array or a concrete tensor."""
    if v is None:
        return None
    if isinstance(v, Tensor):
        v = v.numpy()
    if isinstance(v, np.ndarray):
        if v.dtype.kind not in "iu":
            raise TypeError("%s must be integers, got dtype %s" % (what, v.dtype))
        return [int(i) for i in v.reshape(-1)]
    if isinstance(v, (int, np.integer)):
        return [int(v)]
    if hasattr(v, "as_list"):
        v = v.as_list()
    out = []
    for i in v:
        if isinstance(i, Tensor):
            i = int(i)
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
            raise TypeError("%s must be integers, got %r" % (what, v))
        out.append(int(i))
    return out


def _axis(axis):
    if axis is None:
        return None
    return _ints(axis, "axis")


def _one_axis(axis, default=0):
    if axis is None:
        return default
    a = _ints(axis, "axis")
    if len(a) != 1:
        raise ValueError("axis must be a single integer, got %r" % (axis,))
    return a[0]


# kiln.RaggedTensor, set by kiln/_ragged.py: elementwise functions (tf.add, tf.math.square, ...)
# map over its values, as TensorFlow's ragged dispatch does.
_ragged_type = [None]


def _binary(fn, op_name):
    def op(x, y, name=None):
        del name
        ragged = _ragged_type[0]
        if ragged is not None and (type(x) is ragged or type(y) is ragged):
            if type(x) is ragged:
                return x._binary(y, lambda a, b: fn(*convert_pair(a, b, op_name)))
            return y._binary(x, lambda a, b: fn(*convert_pair(b, a, op_name)))
        return fn(*convert_pair(x, y, op_name))

    return op


add = _binary(_core.add, "AddV2")
subtract = _binary(_core.sub, "Sub")
multiply = _binary(_core.mul, "Mul")


def truediv(x, y, name=None):
    del name
    return _core.div(*same_dtype_for_truediv(*convert_pair(x, y, "RealDiv")))


divide = truediv
floordiv = _binary(_core.floordiv, "FloorDiv")
floormod = _binary(_core.floormod, "FloorMod")
mod = floormod
pow = _binary(_core.pow, "Pow")  # noqa: A001
maximum = _binary(_core.maximum, "Maximum")
minimum = _binary(_core.minimum, "Minimum")
squared_difference = _binary(_core.squared_difference, "SquaredDifference")
atan2 = _binary(_core.atan2, "Atan2")
equal = _binary(_core.equal, "Equal")
not_equal = _binary(_core.not_equal, "NotEqual")
greater = _binary(_core.greater, "Greater")
greater_equal = _binary(_core.greater_equal, "GreaterEqual")
less = _binary(_core.less, "Less")
less_equal = _binary(_core.less_equal, "LessEqual")
logical_and = _binary(_core.logical_and, "LogicalAnd")
logical_or = _binary(_core.logical_or, "LogicalOr")


def logical_xor(x, y, name=None):
    x, y = convert_pair(x, y, "LogicalAnd")
    return _core.logical_and(_core.logical_or(x, y), _core.logical_not(_core.logical_and(x, y)))


def _unary(fn):
    def op(x, name=None):
        del name
        if type(x) is _ragged_type[0]:
            return x.with_flat_values(fn(_t(x.flat_values)))
        return fn(_t(x))

    return op


negative = _unary(_core.neg)
def abs(x, name=None):  # noqa: A001 (TensorFlow's name)
    x = _t(x)
    if x.dtype.is_complex:  # TensorFlow's ComplexAbs: the magnitude, in the real dtype
        from ._ops_complex import complex_abs
        return complex_abs(x)
    return _core.abs(x)
sign = _unary(_core.sign)
exp = _unary(_core.exp)
log = _unary(_core.log)
sqrt = _unary(_core.sqrt)
rsqrt = _unary(_core.rsqrt)
square = _unary(_core.square)
floor = _unary(_core.floor)
ceil = _unary(_core.ceil)
round = _unary(_core.round)  # noqa: A001
tanh = _unary(_core.tanh)
sigmoid = _unary(_core.sigmoid)
relu = _unary(_core.relu)
relu6 = _unary(_core.relu6)
logical_not = _unary(_core.logical_not)


def identity(input, name=None):  # noqa: A002
    return _core.identity(_t(input))


def add_n(inputs, name=None):
    inputs = [_t(x) for x in inputs]
    if not inputs:
        raise ValueError("inputs must be a non-empty list of tensors")
    out = inputs[0]
    for x in inputs[1:]:
        out = _core.add(out, x)
    return out


def cast(x, dtype, name=None):
    from ._sparse import SparseTensor
    if isinstance(x, SparseTensor):  # its values cast, its structure kept (as TensorFlow's)
        return x if x.dtype == as_dtype(dtype) else x.with_values(cast(x.values, dtype))
    x = _t(x)
    dtype = as_dtype(dtype)
    return x if x.dtype == dtype else _core.cast(x, dtype)


def zeros_like(input, dtype=None, name=None):  # noqa: A002
    input = _t(input)  # noqa: A001
    if input.dtype == _dtypes.string and dtype is None:  # TensorFlow's zero of a string: b""
        return fill(shape(input), "")
    out = _core.zeros_like(input)
    return out if dtype is None else cast(out, dtype)


def ones_like(input, dtype=None, name=None):  # noqa: A002
    out = _core.ones_like(_t(input))
    return out if dtype is None else cast(out, dtype)


def where(condition, x=None, y=None, name=None):
    if x is None and y is None:
        from ._ops_indexing import where_indices
        return where_indices(condition)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    x, y = convert_pair(x, y, "SelectV2")
    return _core.where(_t(condition), x, y)


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, a_is_sparse=False,
           b_is_sparse=False, output_type=None, grad_a=False, grad_b=False, name=None):
    a, b = convert_pair(a, b, "MatMul")
    out = _core.matmul(a, b, bool(transpose_a or adjoint_a), bool(transpose_b or adjoint_b))
    return out if output_type is None else cast(out, output_type)


def _reduction(fn, kind=None):
    def op(input_tensor, axis=None, keepdims=False, name=None):
        if kind is not None and hasattr(input_tensor, "_reduce"):  # a kiln.RaggedTensor
            return input_tensor._reduce(kind, axis, keepdims)
        return fn(_t(input_tensor), _axis(axis), bool(keepdims))

    return op


reduce_sum = _reduction(_core.reduce_sum, "sum")
reduce_mean = _reduction(_core.reduce_mean, "mean")
reduce_max = _reduction(_core.reduce_max, "max")
reduce_min = _reduction(_core.reduce_min, "min")
reduce_prod = _reduction(_core.reduce_prod)


def reduce_any(input_tensor, axis=None, keepdims=False, name=None):
    x = _t(input_tensor)
    if x.dtype != _dtypes.bool:
        raise TypeError("reduce_any needs a bool tensor, got %s" % x.dtype.name)
    return _core.cast(_core.reduce_max(_core.cast(x, _dtypes.int32), _axis(axis), bool(keepdims)), _dtypes.bool)


def reduce_all(input_tensor, axis=None, keepdims=False, name=None):
    x = _t(input_tensor)
    if x.dtype != _dtypes.bool:
        raise TypeError("reduce_all needs a bool tensor, got %s" % x.dtype.name)
    return _core.cast(_core.reduce_min(_core.cast(x, _dtypes.int32), _axis(axis), bool(keepdims)), _dtypes.bool)


def argmax(input, axis=None, output_type=_dtypes.int64, name=None):  # noqa: A002
    out = _core.argmax(_t(input), _one_axis(axis))
    return cast(out, output_type)


def softmax(logits, axis=None, name=None):
    return _core.softmax(_t(logits), _one_axis(axis, -1))


def log_softmax(logits, axis=None, name=None):
    return _core.log_softmax(_t(logits), _one_axis(axis, -1))


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    return _core.sparse_softmax_cross_entropy_with_logits(_t(labels), _t(logits))


def _shape_tensor(shape):
    if isinstance(shape, Tensor):
        return shape
    if isinstance(shape, (list, tuple)) and any(isinstance(d, Tensor) and d.is_symbolic for d in shape):
        dtype = next(d.dtype for d in shape if isinstance(d, Tensor))
        return convert_to_tensor(list(shape), dtype=dtype)  # traced dims: stacked, as TensorFlow packs them
    return constant(np.asarray(_ints(shape, "shape"), dtype=np.int32).reshape(-1))


def reshape(tensor, shape, name=None):
    return _core.reshape(_t(tensor), _shape_tensor(shape))


def transpose(a, perm=None, conjugate=False, name=None):
    return _core.transpose(_t(a), _ints(perm, "perm"))


def concat(values, axis, name=None):
    ragged = _ragged_type[0]
    if ragged is not None and any(type(v) is ragged for v in values):
        from ._ragged import concat as ragged_concat

        return ragged_concat(values, _one_axis(axis))
    return _core.concat([_t(v) for v in values], _one_axis(axis))


def stack(values, axis=0, name="stack"):
    return _core.stack([_t(v) for v in values], _one_axis(axis))


def slice(input_, begin, size, name=None):  # noqa: A001
    return _core.slice(_t(input_), _ints(begin, "begin"), _ints(size, "size"))


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                  shrink_axis_mask=0, var=None, name=None):
    begin = _ints(begin, "begin")
    strides = [1] * len(begin) if strides is None else _ints(strides, "strides")
    return _core.strided_slice(_t(input_), begin, _ints(end, "end"), strides, begin_mask, end_mask, ellipsis_mask,
                               new_axis_mask, shrink_axis_mask)


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    if batch_dims != 0:
        raise NotImplementedError("kiln.gather with batch_dims != 0 is not implemented")
    return _core.gather(_t(params), _t(indices), _one_axis(axis))


def expand_dims(input, axis, name=None):  # noqa: A002
    return _core.expand_dims(_t(input), _one_axis(axis))


def squeeze(input, axis=None, name=None):  # noqa: A002
    return _core.squeeze(_t(input), _axis(axis) or [])


def broadcast_to(input, shape, name=None):  # noqa: A002
    symbolic = _symbolic_shape(shape)
    if symbolic is not None:
        from . import raw_ops

        return raw_ops.BroadcastTo(input=_t(input), shape=symbolic)
    return _core.broadcast_to(_t(input), _ints(shape, "shape"))


def tile(input, multiples, name=None):  # noqa: A002
    if type(input) is _ragged_type[0]:
        from ._ragged import tile as ragged_tile

        return ragged_tile(input, _ints(multiples, "multiples"))
    return _core.tile(_t(input), _ints(multiples, "multiples"))


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    if isinstance(num_segments, Tensor) and num_segments.is_symbolic:
        from . import raw_ops

        return raw_ops.UnsortedSegmentSum(data=_t(data), segment_ids=_t(segment_ids), num_segments=num_segments)
    return _core.unsorted_segment_sum(_t(data), _t(segment_ids), int(num_segments))


def shape(input, out_type=_dtypes.int32, name=None):  # noqa: A002
    return cast(_core.shape_of(_t(input)), out_type)


def size(input, out_type=_dtypes.int32, name=None):  # noqa: A002
    return cast(_core.size_of(_t(input)), out_type)


def rank(input, name=None):  # noqa: A002
    return _core.rank_of(_t(input))


def zeros(shape, dtype=_dtypes.float32, name=None, layout=None):
    if as_dtype(dtype) == _dtypes.string:  # TensorFlow's zero of a string: b""
        return fill(shape, "")
    if _symbolic_shape(shape) is not None:
        return fill(shape, _core.zeros([], as_dtype(dtype)))
    return _core.zeros(_ints(shape, "shape"), as_dtype(dtype))


def ones(shape, dtype=_dtypes.float32, name=None, layout=None):
    if _symbolic_shape(shape) is not None:
        return fill(shape, _core.ones([], as_dtype(dtype)))
    return _core.ones(_ints(shape, "shape"), as_dtype(dtype))


def fill(dims, value, name=None, layout=None):
    value = _t(value)
    if value.ndim != 0:
        raise ValueError("value must be a scalar, got shape %s" % (value.shape,))
    symbolic = _symbolic_shape(dims)
    if symbolic is not None:  # known when the traced function runs
        from . import raw_ops

        return raw_ops.Fill(dims=symbolic, value=value)
    return _core.fill(_ints(dims, "dims"), value)


def eye(num_rows, num_columns=None, batch_shape=None, dtype=_dtypes.float32, name=None):
    if (num_columns is not None and num_columns != num_rows) or batch_shape is not None:
        raise NotImplementedError("kiln.eye supports square matrices without batch_shape only")
    return _core.eye(int(num_rows), as_dtype(dtype))


def _symbolic_range(start, limit, delta, dtype):
    """Range inside a trace, over tensors: dtype from the tensors (or `dtype`), as TF infers."""
    tensors = [v for v in (start, limit, delta) if isinstance(v, Tensor)]
    if dtype is None:
        dtype = tensors[0].dtype
        for t in tensors[1:]:
            if t.dtype.is_floating and not dtype.is_floating or t.dtype == _dtypes.float64 or (
                    t.dtype == _dtypes.int64 and dtype == _dtypes.int32):
                dtype = t.dtype
    dtype = as_dtype(dtype)
    args = [cast(v, dtype) if isinstance(v, Tensor) else convert_to_tensor(v, dtype=dtype) for v in (start, limit, delta)]
    return _core.range_of_tensors(*args)


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001
    if limit is None:
        start, limit = 0, start
    if any(isinstance(v, Tensor) and v.is_symbolic for v in (start, limit, delta)):
        return _symbolic_range(start, limit, delta, dtype)
    values = [v.numpy().item() if isinstance(v, Tensor) else v for v in (start, limit, delta)]
    if dtype is None:
        kinds = [_t(v).dtype if isinstance(v, Tensor) else None for v in (start, limit, delta)]
        if any(k is not None and k.is_floating for k in kinds) or any(isinstance(v, float) for v in values):
            dtype = _dtypes.float32
            for k in kinds:
                if k == _dtypes.float64:
                    dtype = _dtypes.float64
        elif any(k == _dtypes.int64 for k in kinds):
            dtype = _dtypes.int64
        else:
            dtype = _dtypes.int32
    return _core.range(float(values[0]), float(values[1]), float(values[2]), as_dtype(dtype))


def print(*inputs, output_stream=None, summarize=3, sep=" ", end="\n", name=None):  # noqa: A001
    """Prints tensors (numpy-like, `summarize` items at each end) and Python values, as tf.print.
    Inside a kiln.function it is an op (KilnPrint) that prints on every call; output_stream is
    sys.stderr (default), sys.stdout, or "file://PATH" (appended to)."""
    import sys

    symbolic = []  # the graph tensors of a traced print, in the order their marks stand

    def text(v):
        if isinstance(v, Tensor):
            if v.is_symbolic:
                symbolic.append(v)
                return "\x01"
            return _core.print_string(v, -1 if summarize is None else int(summarize))
        if isinstance(v, (list, tuple)):
            inner = ", ".join(text(x) for x in v)
            return "[%s]" % inner if isinstance(v, list) else "(%s%s)" % (inner, "," if len(v) == 1 else "")
        if isinstance(v, dict):
            return "{%s}" % ", ".join("%r: %s" % (k, text(x)) for k, x in v.items())
        return str(v)

    stream = sys.stderr if output_stream is None else output_stream
    if isinstance(stream, str) and not stream.startswith("file://"):
        stream = {"stdout": sys.stdout, "stderr": sys.stderr}.get(stream, stream)
    if isinstance(stream, str) and len(stream) <= len("file://"):
        raise ValueError("Unsupported output stream %r" % (output_stream,))
    if (len(inputs) == 1 and isinstance(inputs[0], Tensor) and not inputs[0].is_symbolic
            and inputs[0].dtype == _dtypes.string and inputs[0].ndim == 0):
        line = inputs[0].numpy().decode("utf-8", "replace")  # TensorFlow prints a lone string bare
    else:
        line = sep.join(text(v) for v in inputs)
    if symbolic or _core.tracing_active():  # inside a trace: an op, so every call prints
        from . import raw_ops
        if not (stream is sys.stdout or stream is sys.stderr or isinstance(stream, str)):
            raise ValueError("Unsupported output stream %r inside a kiln.function: it prints to sys.stdout, "
                             "sys.stderr or a \"file://PATH\" on every call" % (output_stream,))
        target = stream if isinstance(stream, str) else "stdout" if stream is sys.stdout else "stderr"
        raw_ops.KilnPrint(inputs=symbolic, template=line, summarize=-1 if summarize is None else int(summarize),
                          output_stream=target, end=end)
        return
    if isinstance(stream, str):
        with open(stream[len("file://"):], "a") as f:
            f.write(line + end)
        return
    stream.write(line + end)
