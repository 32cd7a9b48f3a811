"""TensorFlow's Python API over the coordinate-indexing ops (gather_nd, scatter_nd, the
tensor_scatter_nd family), top_k and where(condition). Each is TensorFlow's argument handling
around kiln.raw_ops, so a traced graph holds the ops TensorFlow's would."""
from . import _dtypes
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
