"""tensorflow.python.framework.tensor_util: the names libraries import from it."""
from .._indexed_slices import IndexedSlices
from .._ragged import RaggedTensor
from .._sparse import SparseTensor
from .._tensor import Tensor
from .._variable import Variable

_TF_TYPES = (Tensor, Variable, SparseTensor, RaggedTensor, IndexedSlices)


def is_tf_type(x):
    """Whether x is one of the library's tensor types (a tensor, variable or composite tensor)."""
    return isinstance(x, _TF_TYPES)


def is_tensor(x):
    return is_tf_type(x)
