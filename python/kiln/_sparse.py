"""tf.sparse.SparseTensor and the tf.sparse functions programs use most, composed of kiln's
dense ops (gather_nd, tensor_scatter_nd_update, unique, unsorted_segment_sum, ...), so they run
eagerly and inside kiln.function bodies alike. A SparseTensor is `indices` (int64 [N, rank]),
`values` ([N]) and `dense_shape` (int64 [rank]); the functions that build one (from_dense, add,
reorder) give TensorFlow's canonical row-major index order. What kiln does not do yet: a
SparseTensor as a kiln.function argument or result (pass its three tensors), and the sparse
kernels themselves (matmul and reductions densify)."""
import numpy as np

from ._convert import convert_to_tensor
from . import _dtypes
from ._dtypes import int64
from ._tensor import Tensor

__all__ = ["SparseTensor", "concat", "to_dense", "from_dense", "reorder", "add", "sparse_dense_matmul", "matmul", "reduce_sum",
           "retain", "map_values", "transpose", "eye"]


def _ops():
    import kiln

    return kiln


class SparseTensor:
    """A tensor given by the coordinates and values of its non-default elements."""

    def __init__(self, indices, values, dense_shape):
        self._indices = convert_to_tensor(indices, dtype=int64)
        self._values = values if isinstance(values, Tensor) else convert_to_tensor(values)
        self._dense_shape = convert_to_tensor(dense_shape, dtype=int64)
        ishape, vshape, dshape = self._indices.shape, self._values.shape, self._dense_shape.shape
        if ishape.rank is not None and ishape.rank != 2:
            raise ValueError("Shape %s must have rank 2" % ishape)
        if vshape.rank is not None and vshape.rank != 1:
            raise ValueError("Shape %s must have rank 1" % vshape)
        if dshape.rank is not None and dshape.rank != 1:
            raise ValueError("Shape %s must have rank 1" % dshape)
        # The rank the indices give and the one dense_shape gives agree.
        if ishape.rank == 2 and vshape.rank == 1 and None not in (ishape[0], vshape[0]) and ishape[0] != vshape[0]:
            raise ValueError("Dimensions %d and %d are not compatible" % (ishape[0], vshape[0]))
        if ishape.rank == 2 and dshape.rank == 1 and None not in (ishape[1], dshape[0]) and ishape[1] != dshape[0]:
            raise ValueError("Dimensions %d and %d are not compatible" % (ishape[1], dshape[0]))

    @classmethod
    def from_value(cls, value):
        if isinstance(value, SparseTensor):
            return value
        return from_dense(value)

    indices = property(lambda self: self._indices)
    values = property(lambda self: self._values)
    dense_shape = property(lambda self: self._dense_shape)
    dtype = property(lambda self: self._values.dtype)

    @property
    def shape(self):
        from ._shape import TensorShape

        try:
            shape = TensorShape([int(d) for d in self._dense_shape.numpy()])
        except (AttributeError, TypeError, ValueError):
            rank = self._dense_shape.shape[0]
            shape = TensorShape(None if rank is None else [None] * rank)
        known = self.__dict__.get("_kiln_static_shape")
        return shape if known is None else shape.merge_with(known)

    def get_shape(self):
        return self.shape

    def set_shape(self, shape):
        """Refines the static shape (TensorFlow's SparseTensor.set_shape): ValueError when
        `shape` is not compatible with what is known."""
        from ._shape import TensorShape

        shape = TensorShape(shape)
        if not self.shape.is_compatible_with(shape):
            raise ValueError("Shapes %s and %s are not compatible" % (self.shape, shape))
        self._kiln_static_shape = self.shape.merge_with(shape)

    def with_values(self, new_values):
        return SparseTensor(self._indices, new_values, self._dense_shape)

    def __repr__(self):
        return "SparseTensor(indices=%s, values=%s, dense_shape=%s)" % (self._indices, self._values,
                                                                         self._dense_shape)

    __str__ = __repr__

    # Elementwise with a dense tensor or number: only the stored elements change, as TensorFlow's.
    def _cwise(self, other, op):
        k = _ops()
        other = other if isinstance(other, Tensor) else convert_to_tensor(other, dtype=self.dtype)
        if other.shape.rank == 0:
            return self.with_values(op(self._values, other))
        dense = k.broadcast_to(other, self._dense_shape)
        return self.with_values(op(self._values, k.gather_nd(dense, self._indices)))

    def __mul__(self, other):
        return self._cwise(other, lambda a, b: a * b)

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self._cwise(other, lambda a, b: a / b)

    def __neg__(self):
        return self.with_values(-self._values)


def _linear(indices, dense_shape):
    """Row-major position of each index row (int64 [N])."""
    k = _ops()
    strides = k.math.cumprod(dense_shape, exclusive=True, reverse=True)
    return k.reduce_sum(indices * strides[None, :], axis=1)


def _delinear(linear, dense_shape):
    k = _ops()
    strides = k.math.cumprod(dense_shape, exclusive=True, reverse=True)
    return (linear[:, None] // strides[None, :]) % dense_shape[None, :]


def _check_indices(sp):
    """SparseToDense's validation (eagerly): in bounds, row-major order, no repeats."""
    from . import errors

    try:
        indices, shape = sp.indices.numpy(), sp.dense_shape.numpy()
    except (AttributeError, TypeError, ValueError):
        return  # traced: the values are not known here
    for i, row in enumerate(indices):
        if np.any(row < 0) or np.any(row >= shape):
            raise errors.InvalidArgumentError(None, None, "indices[%d] = [%s] is out of bounds: need 0 <= index < [%s]"
                                              % (i, ",".join(map(str, row)), ",".join(map(str, shape))))
        if i and tuple(row) == tuple(indices[i - 1]):
            raise errors.InvalidArgumentError(None, None, "indices[%d] = [%s] is repeated" % (i, ",".join(map(str, row))))
        if i and tuple(row) < tuple(indices[i - 1]):
            raise errors.InvalidArgumentError(
                None, None, "indices[%d] = [%s] is out of order. Many sparse ops require sorted indices.\n    Use "
                "`tf.sparse.reorder` to create a correctly ordered copy.\n\n" % (i, ",".join(map(str, row))))


def to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """The dense tensor: `values` at `indices`, `default_value` (0) elsewhere."""
    del name
    k = _ops()
    if not isinstance(sp_input, SparseTensor):
        raise TypeError("Input must be a SparseTensor.")
    if validate_indices:
        _check_indices(sp_input)
    default = k.zeros([], sp_input.dtype) if default_value is None else convert_to_tensor(default_value,
                                                                                         dtype=sp_input.dtype)
    if sp_input.dtype == _dtypes.string:  # kiln's TensorScatterUpdate moves numbers only: strings eagerly here
        dense = np.full([int(d) for d in sp_input.dense_shape.numpy()], default.numpy(), dtype=object)
        for index, value in zip(sp_input.indices.numpy(), sp_input.values.numpy()):
            dense[tuple(index)] = value
        return convert_to_tensor(dense, dtype=_dtypes.string)
    dense = k.fill(sp_input.dense_shape, default)
    return k.tensor_scatter_nd_update(dense, sp_input.indices, sp_input.values)


def from_dense(tensor, name=None):
    """The SparseTensor of a dense tensor's non-zero elements, in row-major order."""
    del name
    k = _ops()
    tensor = tensor if isinstance(tensor, Tensor) else convert_to_tensor(tensor)
    indices = k.where(k.not_equal(tensor, k.zeros([], tensor.dtype)))
    return SparseTensor(indices, k.gather_nd(tensor, indices), k.cast(k.shape(tensor), int64))


def reorder(sp_input, name=None):
    """The same SparseTensor with its indices in row-major order."""
    del name
    k = _ops()
    order = k.argsort(_linear(sp_input.indices, sp_input.dense_shape), stable=True)
    return SparseTensor(k.gather(sp_input.indices, order), k.gather(sp_input.values, order), sp_input.dense_shape)


def add(a, b, threshold=0):
    """Sparse + sparse: a SparseTensor with repeated coordinates summed (row-major order,
    values with magnitude below `threshold` dropped); sparse + dense: a dense tensor."""
    k = _ops()
    if not isinstance(a, SparseTensor):
        a, b = b, a
    if not isinstance(b, SparseTensor):
        return to_dense(a, validate_indices=False) + b
    if a.dtype != b.dtype:
        raise TypeError("SparseAdd: the operands have different dtypes %s and %s" % (a.dtype.name, b.dtype.name))
    linear = k.concat([_linear(a.indices, a.dense_shape), _linear(b.indices, b.dense_shape)], 0)
    values = k.concat([a.values, b.values], 0)
    positions, slots = k.unique(linear, out_idx=int64)
    summed = k.math.unsorted_segment_sum(values, slots, k.shape(positions, out_type=int64)[0])
    order = k.argsort(positions)
    positions, summed = k.gather(positions, order), k.gather(summed, order)
    if threshold:
        keep = k.abs(summed) >= threshold
        positions, summed = k.boolean_mask(positions, keep), k.boolean_mask(summed, keep)
    return SparseTensor(_delinear(positions, a.dense_shape), summed, a.dense_shape)


def concat(axis, sp_inputs, expand_nonconcat_dims=False, name=None):
    """SparseTensors joined along `axis` (their other dims equal, or grown to the largest with
    expand_nonconcat_dims), in row-major order."""
    del name
    k = _ops()
    shapes = [sp.dense_shape for sp in sp_inputs]
    rank = int(sp_inputs[0].indices.shape[1])
    axis = axis + rank if axis < 0 else axis
    offset = k.zeros([], int64)
    indices, values = [], []
    for sp in sp_inputs:
        shift = k.one_hot(axis, rank, on_value=offset, off_value=k.zeros([], int64), dtype=int64)
        indices.append(sp.indices + shift[None, :])
        values.append(sp.values)
        offset = offset + sp.dense_shape[axis]
    others = k.reduce_max(k.stack(shapes), axis=0)
    if not expand_nonconcat_dims:
        others = shapes[0]
    dense_shape = k.tensor_scatter_nd_update(others, [[axis]], k.reshape(offset, [1]))
    return reorder(SparseTensor(k.concat(indices, 0), k.concat(values, 0), dense_shape))


def sparse_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """sp_a @ b (the sparse operand densified)."""
    del name
    k = _ops()
    return k.matmul(to_dense(sp_a, validate_indices=False), b, adjoint_a=adjoint_a, adjoint_b=adjoint_b)


matmul = sparse_dense_matmul


def reduce_sum(sp_input, axis=None, keepdims=None, output_is_sparse=False, name=None):
    """The sum of the elements (implicit zeros add nothing)."""
    del name
    k = _ops()
    out = k.reduce_sum(to_dense(sp_input, validate_indices=False), axis=axis, keepdims=bool(keepdims))
    return from_dense(out) if output_is_sparse else out


def retain(sp_input, to_retain):
    """The elements where the bool vector `to_retain` is true."""
    k = _ops()
    return SparseTensor(k.boolean_mask(sp_input.indices, to_retain), k.boolean_mask(sp_input.values, to_retain),
                        sp_input.dense_shape)


def map_values(op, *args, **kwargs):
    """op applied to the values of the SparseTensor arguments (all with the same indices)."""
    sparse = [a for a in list(args) + list(kwargs.values()) if isinstance(a, SparseTensor)]
    if not sparse:
        raise ValueError("No SparseTensor in argument list of map_values")
    unwrap = lambda a: a.values if isinstance(a, SparseTensor) else a  # noqa: E731
    values = op(*[unwrap(a) for a in args], **{key: unwrap(v) for key, v in kwargs.items()})
    return sparse[0].with_values(values)


def transpose(sp_input, perm=None, name=None):
    """The transposed SparseTensor (reversed dimensions unless `perm`), in row-major order."""
    del name
    k = _ops()
    rank = sp_input.indices.shape[1]
    perm = list(range(rank))[::-1] if perm is None else list(perm)
    indices = k.gather(sp_input.indices, perm, axis=1)
    return reorder(SparseTensor(indices, sp_input.values, k.gather(sp_input.dense_shape, perm)))


def eye(num_rows, num_columns=None, dtype=None, name=None):
    """The identity matrix as a SparseTensor."""
    del name
    from ._dtypes import as_dtype, float32

    k = _ops()
    num_columns = num_rows if num_columns is None else num_columns
    n = k.minimum(k.cast(num_rows, int64), k.cast(num_columns, int64))
    diagonal = k.range(n, dtype=int64)
    return SparseTensor(k.stack([diagonal, diagonal], axis=1), k.ones([n], as_dtype(dtype or float32)),
                        k.stack([k.cast(num_rows, int64), k.cast(num_columns, int64)]))


def _union_pairwise(a, b, op):
    """op over the union of two SparseTensors' coordinates, a missing element counting as 0
    (TensorFlow's SparseSparseMaximum/Minimum); row-major order."""
    k = _ops()
    if a.dtype != b.dtype:
        raise TypeError("the operands have different dtypes %s and %s" % (a.dtype.name, b.dtype.name))
    la, lb = _linear(a.indices, a.dense_shape), _linear(b.indices, b.dense_shape)
    positions, slots = k.unique(k.concat([la, lb], 0), out_idx=int64)
    n = k.shape(positions, out_type=int64)[0]
    na = k.shape(la, out_type=int64)[0]
    va = k.math.unsorted_segment_sum(a.values, slots[:na], n)
    vb = k.math.unsorted_segment_sum(b.values, slots[na:], n)
    order = k.argsort(positions)
    values = op(k.gather(va, order), k.gather(vb, order))
    return SparseTensor(_delinear(k.gather(positions, order), a.dense_shape), values, a.dense_shape)


def maximum(sp_a, sp_b, name=None):
    """tf.sparse.maximum: elementwise max over the union of coordinates (absent elements are 0)."""
    del name
    return _union_pairwise(sp_a, sp_b, _ops().maximum)


def minimum(sp_a, sp_b, name=None):
    """tf.sparse.minimum: elementwise min over the union of coordinates (absent elements are 0)."""
    del name
    return _union_pairwise(sp_a, sp_b, _ops().minimum)


def reduce_max(sp_input, axis=None, keepdims=None, output_is_sparse=False, name=None):
    """The max over the elements present (TensorFlow's SparseReduceMax): implicit zeros take no
    part, and a slice with no element present gives 0 (or, with output_is_sparse, no element)."""
    del name
    k = _ops()
    dtype = sp_input.dtype
    lowest = -np.inf if dtype.is_floating else np.iinfo(dtype.as_numpy_dtype).min
    dense = to_dense(sp_input, default_value=k.cast(lowest, dtype), validate_indices=False)
    present = to_dense(SparseTensor(sp_input.indices, k.ones_like(sp_input.values, dtype=_dtypes.bool),
                                    sp_input.dense_shape), default_value=False, validate_indices=False)
    keep = bool(keepdims)
    out = k.reduce_max(dense, axis=axis, keepdims=keep)
    has = k.reduce_any(present, axis=axis, keepdims=keep)
    if output_is_sparse:
        where = k.where(has)
        return SparseTensor(where, k.gather_nd(out, where), k.shape(out, out_type=int64))
    return k.where(has, out, k.zeros_like(out))
