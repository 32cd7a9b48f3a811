"""TensorSpec: the dtype and (possibly partial) shape a tensor argument must have (tf.TensorSpec),
and TypeSpec, the interface every spec type (TensorSpec, DatasetSpec, ...) is an instance of."""
import abc

from . import _core
from ._dtypes import as_dtype, float32
from ._shape import TensorShape


class TypeSpec(abc.ABC):  # noqa: B024 (an interface marker, as tf.TypeSpec is for isinstance)
    """The type of a value kiln.function takes (tf.TypeSpec): specs register as its subclasses."""


class TensorSpec:
    """A tensor's dtype and shape, and a name for the placeholder it becomes when traced."""

    __slots__ = ("_shape", "_dtype", "_name")

    def __init__(self, shape, dtype=float32, name=None):
        self._shape = TensorShape(shape)
        self._dtype = as_dtype(dtype)
        if name is not None and not isinstance(name, str):
            raise TypeError("TensorSpec name must be a string or None, got %r" % (name,))
        self._name = name

    @classmethod
    def from_tensor(cls, tensor, name=None):
        if not isinstance(tensor, _core.Tensor):
            raise ValueError("`tensor` should be a kiln.Tensor, but got %r." % (tensor,))
        return cls(tensor.shape, tensor.dtype, name)

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self):
        return self._name

    def is_compatible_with(self, spec_or_tensor):
        """True when a tensor (or the tensors of a spec) fits this spec."""
        return self._dtype == spec_or_tensor.dtype and self._shape.is_compatible_with(spec_or_tensor.shape)

    def __repr__(self):
        return "TensorSpec(shape=%s, dtype=%r, name=%r)" % (self._shape, self._dtype, self._name)

    def __eq__(self, other):
        return (type(other) is type(self) and self._shape == other._shape and self._dtype == other._dtype
                and self._name == other._name)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((self._shape, self._dtype, self._name))

    def __reduce__(self):
        return TensorSpec, (self._shape, self._dtype, self._name)


def spec_fields(spec):
    """What the C++ call key reads of a spec: (dims or None, dtype number, name or None)."""
    return spec._shape._dims, spec._dtype._enum, spec._name


TypeSpec.register(TensorSpec)


class SparseTensorSpec:
    """The type of a SparseTensor (tf.SparseTensorSpec): dense shape and values dtype."""

    def __init__(self, shape=None, dtype=float32):
        self._shape, self._dtype = TensorShape(shape), as_dtype(dtype)

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)

    @classmethod
    def from_value(cls, value):
        return cls(value.shape, value.dtype)

    def __eq__(self, other):
        return type(other) is type(self) and self._shape == other._shape and self._dtype == other._dtype

    def __hash__(self):
        return hash((self._shape, self._dtype))

    def __repr__(self):
        return "SparseTensorSpec(TensorShape(%s), %r)" % (self._shape.as_list() if self._shape.rank is not None
                                                          else None, self._dtype)


class RaggedTensorSpec:
    """The type of a RaggedTensor (tf.RaggedTensorSpec)."""

    def __init__(self, shape=None, dtype=float32, ragged_rank=None, row_splits_dtype=None, flat_values_spec=None):
        from ._dtypes import int64
        self._shape, self._dtype = TensorShape(shape), as_dtype(dtype)
        rank = self._shape.rank
        self._ragged_rank = ragged_rank if ragged_rank is not None else (rank - 1 if rank else 1)
        self._row_splits_dtype = as_dtype(row_splits_dtype) if row_splits_dtype is not None else int64
        self._flat_values_spec = flat_values_spec

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    ragged_rank = property(lambda self: self._ragged_rank)
    row_splits_dtype = property(lambda self: self._row_splits_dtype)

    def __eq__(self, other):
        return type(other) is type(self) and (self._shape, self._dtype, self._ragged_rank, self._row_splits_dtype) == (
            other._shape, other._dtype, other._ragged_rank, other._row_splits_dtype)

    def __hash__(self):
        return hash((self._shape, self._dtype, self._ragged_rank))

    def __repr__(self):
        return "RaggedTensorSpec(TensorShape(%s), %r, %d, %r)" % (
            self._shape.as_list() if self._shape.rank is not None else None, self._dtype, self._ragged_rank,
            self._row_splits_dtype)


TypeSpec.register(SparseTensorSpec)
TypeSpec.register(RaggedTensorSpec)
