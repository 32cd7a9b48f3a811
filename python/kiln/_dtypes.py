"""Element types: kiln.float32 and friends, as TensorFlow's tf.DType objects."""
import builtins

import ml_dtypes
import numpy as np

from . import _public_name

# The order of kiln::DType (include/kiln/dtype.h).
_NAMES = ("bool", "int32", "int64", "float32", "float64", "uint8", "int8", "int16", "uint16", "uint32", "uint64",
          "variant", "float16", "bfloat16", "string", "complex64", "complex128")
# variant (a TensorList handle) is numpy's object, as TensorFlow says: no numpy array holds it.
# string is object too: arrays of Python bytes, as TensorFlow's. bfloat16 is ml_dtypes' (the
# numpy extension type TensorFlow and JAX use).
_NUMPY = (np.bool_, np.int32, np.int64, np.float32, np.float64, np.uint8, np.int8, np.int16, np.uint16, np.uint32,
          np.uint64, object, np.float16, ml_dtypes.bfloat16, object, np.complex64, np.complex128)
_FLOATING = frozenset(("float16", "bfloat16", "float32", "float64"))


class DType:
    """An element type. Compares equal to its name and its numpy type, as tf.DType does."""

    __slots__ = ("_enum",)

    def __init__(self, enum):
        self._enum = enum

    @property
    def name(self):
        return _NAMES[self._enum]

    @property
    def as_numpy_dtype(self):
        return _NUMPY[self._enum]

    @property
    def is_floating(self):
        return self.name in _FLOATING

    @property
    def is_complex(self):
        return self.name in ("complex64", "complex128")

    @property
    def real_dtype(self):
        """float32 for complex64, float64 for complex128, the dtype itself otherwise."""
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    @property
    def is_integer(self):
        return np.issubdtype(self.as_numpy_dtype, np.integer)

    @property
    def is_unsigned(self):
        return np.issubdtype(self.as_numpy_dtype, np.unsignedinteger)

    @property
    def is_bool(self):
        return self._enum == 0

    @property
    def is_numeric(self):
        """Integers, floats and complex numbers (not bool, string or variant), as TensorFlow's."""
        return self.is_integer or self.is_floating or self.is_complex

    @property
    def is_numpy_compatible(self):
        return self._enum != _VARIANT

    @property
    def base_dtype(self):
        return self

    @property
    def size(self):
        if self._enum in (_VARIANT, _STRING):  # as TensorFlow: no fixed element size
            return 0
        return np.dtype(self.as_numpy_dtype).itemsize

    @property
    def min(self):
        if self.is_bool or not self.is_numpy_compatible or self._enum == _STRING or self.is_complex:  # unordered
            raise TypeError("Cannot find minimum value of %s with type %s." % (self, self))
        info = ml_dtypes.finfo(self.as_numpy_dtype) if self.is_floating else np.iinfo(self.as_numpy_dtype)
        return info.min

    @property
    def max(self):
        if self.is_bool or not self.is_numpy_compatible or self._enum == _STRING or self.is_complex:
            raise TypeError("Cannot find maximum value of %s with type %s." % (self, self))
        info = ml_dtypes.finfo(self.as_numpy_dtype) if self.is_floating else np.iinfo(self.as_numpy_dtype)
        return info.max

    def __eq__(self, other):
        if other is None:
            return False
        try:
            return self._enum == as_dtype(other)._enum
        except TypeError:
            return False

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(("kiln.DType", self._enum))

    def __repr__(self):
        return _public_name.prefix + "." + self.name

    def __str__(self):
        return "<dtype: '%s'>" % self.name

    def __reduce__(self):
        return as_dtype, (self.name,)


bool = DType(0)  # noqa: A001 (TensorFlow's name)
int32 = DType(1)
int64 = DType(2)
float32 = DType(3)
float64 = DType(4)
uint8 = DType(5)
int8 = DType(6)
int16 = DType(7)
uint16 = DType(8)
uint32 = DType(9)
uint64 = DType(10)
_VARIANT = 11
variant = DType(_VARIANT)
float16 = DType(12)
bfloat16 = DType(13)
_STRING = 14
string = DType(_STRING)
complex64 = DType(15)
complex128 = DType(16)
half = float16
# The dtypes whose elements are numbers (string's and variant's are objects).
ALL = (bool, int32, int64, float32, float64, uint8, int8, int16, uint16, uint32, uint64, float16, bfloat16, complex64,
       complex128)
BY_ENUM = (bool, int32, int64, float32, float64, uint8, int8, int16, uint16, uint32, uint64, variant, float16,
           bfloat16, string, complex64, complex128)  # indexed by kiln::DType
double = float64

# TensorFlow dtypes kiln does not have: named in errors rather than "unknown".
_TF_ONLY = ("qint8", "quint8", "qint32", "resource")


def as_dtype(type_value):
    """A kiln DType from a DType, a name, a numpy dtype or numpy/Python type (tf.as_dtype)."""
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, str):
        if type_value in _NAMES:
            return DType(_NAMES.index(type_value))
        if type_value == "double":
            return float64
        if type_value == "half":
            return float16
        if type_value in _TF_ONLY:
            raise _unsupported(type_value)
        raise TypeError("Cannot convert the argument `type_value`: %r to a kiln DType." % (type_value,))
    if type_value is float:
        return float32
    if type_value is int:
        return int32
    if type_value is builtins.bool:
        return bool
    if type_value is complex:
        return complex128
    try:
        np_type = np.dtype(type_value)
    except TypeError:
        raise TypeError("Cannot convert the argument `type_value`: %r to a kiln DType." % (type_value,)) from None
    if np_type.kind in "OSU":  # object, bytes and str arrays: TensorFlow's string
        return string
    for d in ALL:
        if np.dtype(d.as_numpy_dtype) == np_type:
            return d
    raise _unsupported(np_type.name)


def _unsupported(name):
    from .errors import UnsupportedDTypeError

    return UnsupportedDTypeError("kiln has no %s dtype (it has %s)" % (name, ", ".join(_NAMES)))
