"""TensorFlow's array functions that are compositions of other ops in TensorFlow too, or that
kiln composes: tf.repeat, sequence_mask, searchsorted, math.invert_permutation,
unique_with_counts, broadcast_dynamic_shape/static_shape, ensure_shape, math.reciprocal,
math.in_top_k, linalg.logdet, Assert and debugging.check_numerics. They run eagerly and in
traces alike (their gradients are their parts')."""
from ._convert import convert_to_tensor


def _k():
    import kiln
    return kiln


def repeat(input, repeats, axis=None, name=None):  # noqa: A002
    """tf.repeat: each element (or slice along `axis`) repeated `repeats` times (a scalar, or one
    count per element along axis). With axis None the input is flattened first."""
    del name
    k = _k()
    x = convert_to_tensor(input)
    repeats = k.cast(convert_to_tensor(repeats), k.int32)
    if axis is None:
        x, axis = k.reshape(x, [-1]), 0
    rank = x.shape.rank
    axis = axis % rank if rank else 0
    n = k.shape(x)[axis]
    if repeats.shape.rank == 0:
        repeats = k.fill(k.reshape(n, [1]), repeats)
    elif repeats.shape.rank != 1:
        raise ValueError("repeats must be a scalar or a vector, got rank %d" % repeats.shape.rank)
    # The index of the source slice for every output slice: counts turned into positions.
    ends = k.cumsum(repeats)
    total = ends[-1] if repeats.shape[0] != 0 else k.constant(0)
    sources = k.searchsorted(ends, k.range(total), side="right")
    return k.gather(x, sources, axis=axis)


def sequence_mask(lengths, maxlen=None, dtype=None, name=None):
    """tf.sequence_mask: mask[..., j] = j < lengths[...], of width maxlen (default max(lengths))."""
    del name
    k = _k()
    lengths = convert_to_tensor(lengths)
    if maxlen is None:
        maxlen = k.maximum(k.reduce_max(lengths), k.zeros([], lengths.dtype)) if lengths.shape.num_elements() != 0 \
            else k.zeros([], lengths.dtype)
    maxlen = k.cast(convert_to_tensor(maxlen), lengths.dtype)
    mask = k.range(maxlen, dtype=lengths.dtype) < k.expand_dims(lengths, -1)
    return mask if dtype is None else k.cast(mask, dtype)


def searchsorted(sorted_sequence, values, side="left", out_type=None, name=None):
    """tf.searchsorted: for each value, the index where it would go in its (innermost) sorted row
    (TensorFlow's LowerBound/UpperBound): the count of row elements < value ("left") or <=
    value ("right")."""
    del name
    k = _k()
    if side not in ("left", "right"):
        raise ValueError("side must be either 'right' or 'left'.  Saw: %s." % side)
    seq, vals = convert_to_tensor(sorted_sequence), convert_to_tensor(values)
    if seq.shape.rank is None or vals.shape.rank is None or seq.shape.rank != vals.shape.rank:
        raise ValueError("sorted_sequence and values must have the same rank")
    below = (k.expand_dims(seq, -2) < k.expand_dims(vals, -1)) if side == "left" else (
        k.expand_dims(seq, -2) <= k.expand_dims(vals, -1))
    count = k.reduce_sum(k.cast(below, k.int64), axis=-1)
    return k.cast(count, out_type or k.int32)


def invert_permutation(x, name=None):
    """tf.math.invert_permutation: y[x[i]] = i."""
    del name
    k = _k()
    x = convert_to_tensor(x)
    if x.shape.rank != 1:
        raise ValueError("invert_permutation expects a 1-D vector, got rank %s" % x.shape.rank)
    return k.scatter_nd(k.expand_dims(x, -1), k.range(k.shape(x, out_type=x.dtype)[0], dtype=x.dtype),
                        k.shape(x, out_type=x.dtype))


def unique_with_counts(x, out_idx=None, name=None):
    """tf.unique_with_counts: (y, idx, count), y in order of first occurrence."""
    del name
    k = _k()
    out_idx = out_idx or k.int32
    y, idx = k.unique(x, out_idx=out_idx)
    count = k.math.unsorted_segment_sum(k.ones_like(idx), idx, k.shape(y, out_type=out_idx)[0])
    return _UniqueWithCounts(y, idx, count)


class _UniqueWithCounts(tuple):
    """(y, idx, count) with those names, as TensorFlow's result."""

    def __new__(cls, y, idx, count):
        return super().__new__(cls, (y, idx, count))

    y = property(lambda self: self[0])
    idx = property(lambda self: self[1])
    count = property(lambda self: self[2])


def broadcast_static_shape(shape_x, shape_y):
    """tf.broadcast_static_shape: the broadcast of two TensorShapes (ValueError if they do not)."""
    from ._shape import TensorShape
    a, b = TensorShape(shape_x), TensorShape(shape_y)
    if a.rank is None or b.rank is None:
        return TensorShape(None)
    da, db = a.as_list(), b.as_list()
    n = max(len(da), len(db))
    da, db = [1] * (n - len(da)) + da, [1] * (n - len(db)) + db
    out = []
    for p, q in zip(da, db):
        if p == 1:
            out.append(q)
        elif q == 1 or q is None and p is not None and p != 1:
            out.append(p if q == 1 else p)
        elif p is None:
            out.append(q if q not in (1,) else None)
        elif p == q:
            out.append(p)
        else:
            raise ValueError("Incompatible shapes for broadcasting. Two shapes are compatible if for each dimension "
                             "pair they are either equal or one of them is 1. Received: %s and %s." % (a, b))
    return TensorShape(out)


def broadcast_dynamic_shape(shape_x, shape_y):
    """tf.broadcast_dynamic_shape: the broadcast of two shape vectors, as a tensor."""
    k = _k()
    x, y = convert_to_tensor(shape_x), convert_to_tensor(shape_y)
    return k.shape(k.zeros(x, k.int32) + k.zeros(y, k.int32), out_type=x.dtype)


def ensure_shape(x, shape, name=None):
    """tf.ensure_shape: x, whose shape must be compatible with `shape` (its static shape is
    refined when tracing); InvalidArgumentError otherwise."""
    del name
    k = _k()
    from ._shape import TensorShape
    x = convert_to_tensor(x)
    shape = TensorShape(shape)
    if not x.shape.is_compatible_with(shape):
        raise k.errors.InvalidArgumentError(
            None, None, "Shape of tensor %s %s is not compatible with expected shape %s." % (
                getattr(x, "name", "x"), list(x.shape.as_list()) if x.shape.rank is not None else x.shape,
                shape.as_list() if shape.rank is not None else shape))
    if x.is_symbolic and shape.rank is not None and x.shape.rank is not None:
        dims = [d if d is not None else -1 for d in shape.as_list()]
        if dims.count(-1) <= 1 and x.shape != shape:
            return k.reshape(x, dims)
    return x


def reciprocal(x, name=None):
    """tf.math.reciprocal: 1 / x elementwise."""
    del name
    x = convert_to_tensor(x)
    return convert_to_tensor(1, x.dtype) / x


def in_top_k(targets, predictions, k, name=None):
    """tf.math.in_top_k: whether each row's target class is among its k largest predictions
    (ties count as in, as TensorFlow's kernel decides them; a non-finite row gives False)."""
    del name
    kk = _k()
    predictions = convert_to_tensor(predictions)
    targets = convert_to_tensor(targets)
    rows = kk.range(kk.shape(predictions)[0], dtype=targets.dtype)
    target_values = kk.gather_nd(predictions, kk.stack([rows, targets], axis=1))
    larger = kk.reduce_sum(kk.cast(predictions > kk.expand_dims(target_values, -1), kk.int32), axis=-1)
    finite = kk.reduce_all(kk.math.is_finite(predictions), axis=-1)
    return kk.logical_and(larger < kk.cast(k, kk.int32), finite)


def nextafter(x1, x2, name=None):
    """tf.math.nextafter: the float after x1 in the direction of x2 (float32 or float64, both
    the same dtype, broadcast), as std::nextafter: x2 where they are equal, NaN where either
    is NaN, the smallest subnormal of x2's side after a zero. Computed on the bits: one
    step of the magnitude's integer, up or down."""
    k = _k()
    x1 = k.convert_to_tensor(x1)
    x2 = k.convert_to_tensor(x2, dtype=x1.dtype)
    if x1.dtype.name not in ("float32", "float64"):
        raise k.errors.InvalidArgumentError(None, None, "Value for attr 'T' of %s is not in the list of allowed "
                                                        "values: double, float [Op:NextAfter]" % x1.dtype.name)
    ints = k.int32 if x1.dtype.name == "float32" else k.int64
    shape = k.broadcast_dynamic_shape(k.shape(x1), k.shape(x2))
    x1, x2 = k.broadcast_to(x1, shape), k.broadcast_to(x2, shape)
    bits = k.bitcast(x1, ints)
    # Away from zero when x2 is beyond x1 on x1's side of zero: the magnitude grows.
    away = k.logical_or(k.logical_and(x1 > 0, x2 > x1), k.logical_and(x1 < 0, x2 < x1))
    one = k.ones_like(bits)
    stepped = k.bitcast(k.where(away, bits + one, bits - one), x1.dtype)
    tiny = k.bitcast(one, x1.dtype)  # the smallest subnormal
    from_zero = k.where(x2 > x1, tiny, -tiny)
    out = k.where(x1 == 0, from_zero, stepped)
    out = k.where(x1 == x2, x2, out)
    nan = k.fill(shape, k.constant(float("nan"), x1.dtype))
    return k.where(k.logical_or(k.math.is_nan(x1), k.math.is_nan(x2)), nan, out)


def logdet(matrix, name=None):
    """tf.linalg.logdet: log(det(matrix)) of Hermitian positive-definite matrices, from the
    Cholesky factor: 2 * sum(log(diag(L)))."""
    del name
    k = _k()
    chol = k.linalg.cholesky(matrix)
    return 2.0 * k.reduce_sum(k.math.log(k.linalg.diag_part(chol)), axis=-1)


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 (TensorFlow's name)
    """tf.debugging.Assert: InvalidArgumentError ("assertion failed: [data...]") when condition is
    False. Eagerly it checks now; in a trace it adds a host node that checks on every call (kiln
    has no Assert kernel: the node is a numpy_function, stateful, so it is never pruned)."""
    del name
    k = _k()
    condition = convert_to_tensor(condition)
    data = [convert_to_tensor(d) for d in data]

    def check(ok, *values):
        if not bool(ok):
            raise ValueError("assertion failed: [%s]" % "] [".join(_summary(v, summarize) for v in values))
        return True

    if condition.is_symbolic or any(d.is_symbolic for d in data):
        k.numpy_function(check, [condition] + data, k.bool)
        return None
    if not bool(condition):  # TensorFlow's eager words
        raise k.errors.InvalidArgumentError(None, None, "Expected '%s' to be true. Summarized data: %s" % (
            condition, "\n".join(_summary(d.numpy(), summarize) for d in data)))
    return None


def _summary(value, summarize):
    """The first `summarize` (default 3) elements, flattened and joined by ", " (TensorFlow's)."""
    import numpy as np
    flat = np.asarray(value).reshape(-1)
    limit = 3 if summarize is None else summarize
    shown = flat if limit < 0 else flat[:limit]
    text = ", ".join(v.decode() if isinstance(v, bytes) else str(v) for v in shown.tolist())
    return text + (", ..." if len(shown) < len(flat) else "")


def check_numerics(tensor, message, name=None):
    """tf.debugging.check_numerics: the tensor, or InvalidArgumentError if it holds a NaN or an
    infinity (TensorFlow's message); in a trace, checked on every call by a host node."""
    del name
    k = _k()
    x = convert_to_tensor(tensor)

    def check(values):
        import numpy as np
        if not np.all(np.isfinite(values)):
            raise ValueError("%s : Tensor had %s values" % (message, "NaN" if np.any(np.isnan(values)) else "Inf"))
        return True

    if x.is_symbolic:
        ok = k.numpy_function(check, [x], k.bool)
        with_check = k.identity(x)
        del ok  # the host node is stateful: it runs on every call though its result is unused
        return with_check
    try:
        check(x.numpy())
    except ValueError as e:
        raise k.errors.InvalidArgumentError(None, None, str(e)) from None
    return x
