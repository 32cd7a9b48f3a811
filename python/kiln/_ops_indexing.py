"""TensorFlow's Python API over the coordinate-indexing ops (gather_nd, scatter_nd, the
tensor_scatter_nd family), top_k, sort and argsort, unique, linspace and where(condition). Each is TensorFlow's argument handling
around kiln.raw_ops, so a traced graph holds the ops TensorFlow's would."""
import numpy as np

from . import _core, _dtypes
from . import errors as _errors
from . import raw_ops
from ._convert import convert_to_tensor


def _t(x, dtype=None):
    return convert_to_tensor(x, dtype=dtype)


def _indices(indices):
    t = convert_to_tensor(indices)
    if not t.dtype.is_integer:
        raise TypeError("indices must be an integer tensor, got %s" % t.dtype.name)
    return t


def gather_nd(params, indices, batch_dims=0, name=None, bad_indices_policy=""):
    if batch_dims != 0:
        raise NotImplementedError("kiln.gather_nd with batch_dims other than 0 is not implemented")
    return raw_ops.GatherNd(params=_t(params), indices=_indices(indices), bad_indices_policy=bad_indices_policy)


def scatter_nd(indices, updates, shape, name=None, bad_indices_policy=""):
    indices = _indices(indices)
    return raw_ops.ScatterNd(indices=indices, updates=_t(updates), shape=_t(shape, indices.dtype),
                             bad_indices_policy=bad_indices_policy)


def _tensor_scatter(op):
    def scatter(tensor, indices, updates, name=None, bad_indices_policy=""):
        tensor = _t(tensor)
        return op(tensor=tensor, indices=_indices(indices), updates=_t(updates, tensor.dtype),
                  bad_indices_policy=bad_indices_policy)

    return scatter


tensor_scatter_nd_update = _tensor_scatter(raw_ops.TensorScatterUpdate)
tensor_scatter_nd_add = _tensor_scatter(raw_ops.TensorScatterAdd)
tensor_scatter_nd_sub = _tensor_scatter(raw_ops.TensorScatterSub)
tensor_scatter_nd_max = _tensor_scatter(raw_ops.TensorScatterMax)
tensor_scatter_nd_min = _tensor_scatter(raw_ops.TensorScatterMin)


def top_k(input, k=1, sorted=True, index_type=_dtypes.int32, name=None):  # noqa: A002 (TensorFlow's names)
    return raw_ops.TopKV2(input=_t(input), k=k, sorted=sorted, index_type=index_type)


def where_indices(condition):
    """where(condition) with one argument: the coordinates of its true elements (int64)."""
    return raw_ops.Where(condition=_t(condition))


def unique(x, out_idx=_dtypes.int32, name=None):
    return raw_ops.Unique(x=_t(x), out_idx=out_idx)


def linspace(start, stop, num, name=None, axis=0):
    start = _t(start)
    if start.dtype.is_integer:  # TensorFlow's linspace computes integers in float64
        start = raw_ops.Cast(x=start, DstT=_dtypes.float64)
    stop = raw_ops.Cast(x=_t(stop), DstT=start.dtype)
    static_num = num if isinstance(num, (int, np.integer)) else None
    if static_num is None and isinstance(num, _core.Tensor) and not num.is_symbolic:
        static_num = int(num.numpy())
    if start.shape.rank == 0 and stop.shape.rank == 0 and axis == 0 and (static_num is None or static_num > 0):
        return raw_ops.LinSpace(start=start, stop=stop, num=num)
    if static_num is None:
        raise NotImplementedError("kiln.linspace of non-scalar start or stop (or another axis) needs a num known "
                                  "when tracing")
    return _linspace_nd(start, stop, static_num, axis)


def _linspace_nd(start, stop, num, axis):
    """TensorFlow's linspace over broadcast N-D start and stop, `num` values along `axis`, computed
    as TensorFlow computes them (start + delta * i between the exact endpoints), num = 0 and 1
    included."""
    import kiln as k
    if num < 0:
        raise _errors.InvalidArgumentError(None, None, "Requires num >= 0: %d" % num)
    shape = k.broadcast_static_shape(start.shape, stop.shape)
    start, stop = k.broadcast_to(start, shape), k.broadcast_to(stop, shape)
    rank = len(shape) + 1
    if not -rank <= axis < rank:
        raise ValueError("axis %d is out of range for a result of rank %d" % (axis, rank))
    axis = axis % rank
    first, last = k.expand_dims(start, axis), k.expand_dims(stop, axis)
    steps = max(num - 1, 1)
    delta = (last - first) / k.cast(steps, first.dtype)
    filler = [1] * rank
    filler[axis] = max(num - 2, 0)
    inner = k.reshape(k.cast(k.range(1, steps, dtype=k.int64), delta.dtype), filler)
    every = k.concat([first, first + delta * inner, last], axis)
    return every[tuple(slice(None) if d != axis else slice(0, num) for d in range(rank))]


def _sort_last_axis(values, direction, indices):
    """TensorFlow's sort: top_k along the last axis (ascending through negation, or for unsigned
    integers through bit inversion, so the order of equal values is kept)."""
    values = _t(values)
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError('`direction` should be one of {"ASCENDING", "DESCENDING"}. Received: direction=%s'
                         % direction)
    n = values.shape[-1]
    ascending = direction == "ASCENDING"
    flipped = values
    if ascending:
        flipped = raw_ops.Invert(x=values) if values.dtype.is_unsigned else raw_ops.Neg(x=values)
    top = raw_ops.TopKV2(input=flipped, k=n if n is not None else raw_ops.Shape(input=values)[-1])
    if indices:
        return top.indices
    if not ascending:
        return top.values
    return raw_ops.Invert(x=top.values) if values.dtype.is_unsigned else raw_ops.Neg(x=top.values)


def _along(values, axis, fn):
    values = _t(values)
    rank = values.shape.rank
    axis = axis + rank if axis < 0 else axis
    if axis == rank - 1:
        return fn(values)
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    moved = raw_ops.Transpose(x=values, perm=perm)
    return raw_ops.Transpose(x=fn(moved), perm=perm)


def sort(values, axis=-1, direction="ASCENDING", name=None):
    return _along(values, axis, lambda v: _sort_last_axis(v, direction, indices=False))


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    return _along(values, axis, lambda v: _sort_last_axis(v, direction, indices=True))


def _sorted_segment(op):
    def fn(data, segment_ids, name=None):
        return op(data=_t(data), segment_ids=_indices(segment_ids))

    return fn


def _unsorted_segment(op):
    def fn(data, segment_ids, num_segments, name=None):
        return op(data=_t(data), segment_ids=_indices(segment_ids), num_segments=num_segments)

    return fn


segment_sum = _sorted_segment(raw_ops.SegmentSum)
segment_mean = _sorted_segment(raw_ops.SegmentMean)
segment_max = _sorted_segment(raw_ops.SegmentMax)
segment_min = _sorted_segment(raw_ops.SegmentMin)
segment_prod = _sorted_segment(raw_ops.SegmentProd)
unsorted_segment_max = _unsorted_segment(raw_ops.UnsortedSegmentMax)
unsorted_segment_min = _unsorted_segment(raw_ops.UnsortedSegmentMin)
unsorted_segment_prod = _unsorted_segment(raw_ops.UnsortedSegmentProd)


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None):  # noqa: A002
    """For each entry b along batch_axis, the first seq_lengths[b] slices along seq_axis reversed."""
    return raw_ops.ReverseSequence(input=_t(input), seq_lengths=_t(seq_lengths), seq_dim=seq_axis,
                                batch_dim=0 if batch_axis is None else batch_axis)


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=_dtypes.int32, name=None, axis=None,
             binary_output=False):
    """Counts (or summed weights) of each value in [0, max(arr)] of a 1-D or flattened int32 array
    (tf.math.bincount without axis or binary_output), over the Bincount op."""
    if axis is not None or binary_output:
        raise NotImplementedError("kiln's bincount has no axis or binary_output yet")
    from ._ops import reduce_max, reshape, maximum, minimum
    arr = reshape(_t(arr, _dtypes.int32), [-1])
    size = maximum(reduce_max(arr) + 1, 0)  # an empty arr's max is int32's least: size 0
    if minlength is not None:
        size = maximum(size, minlength)
    if maxlength is not None:
        size = minimum(size, maxlength)
    w = _t(weights) if weights is not None else convert_to_tensor([], dtype=_dtypes.as_dtype(dtype))
    return raw_ops.Bincount(arr=arr, size=size, weights=w)


def boolean_mask(tensor, mask, axis=None, name="boolean_mask"):
    """tensor's elements (slices along `axis` on) where the bool `mask` is true, as
    tf.boolean_mask: mask's dims match tensor's dims axis ... axis + mask.ndim - 1, which
    become one dimension."""
    import kiln

    tensor, mask = _t(tensor), _t(mask)
    if mask.dtype != _dtypes.bool:
        mask = _t(mask, _dtypes.bool) if not mask.is_symbolic else kiln.cast(mask, _dtypes.bool)
    k = mask.shape.rank
    if k is None:
        raise ValueError("Number of mask dimensions must be specified, even if some dimensions are None.  "
                         "E.g. shape=[None] is ok, but shape=None is not.")
    if k == 0:
        raise ValueError("mask cannot be scalar.")
    axis = 0 if axis is None else int(axis)
    rank = tensor.shape.rank
    if rank is not None:
        axis = axis + rank if axis < 0 else axis
        if not tensor.shape[axis:axis + k].is_compatible_with(mask.shape):
            raise ValueError("Shapes %s and %s are incompatible" % (tensor.shape[axis:axis + k], mask.shape))
    shape = kiln.shape(tensor, out_type=_dtypes.int64)
    flat = kiln.concat([shape[:axis], kiln.constant([-1], _dtypes.int64), shape[axis + k:]], 0)
    chosen = kiln.reshape(kiln.where(kiln.reshape(mask, [-1])), [-1])
    return kiln.gather(kiln.reshape(tensor, flat), chosen, axis=axis)


def roll(input, shift, axis, name=None):  # noqa: A002
    """Elements shifted along axes, wrapping around (tf.roll): element i moves to (i + shift) mod n.
    Shift and axis are ints or int tensors of one size; a repeated axis adds its shifts."""
    return raw_ops.Roll(input=input, shift=shift, axis=axis)
