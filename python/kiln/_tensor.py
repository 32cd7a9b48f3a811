"""The parts of kiln.Tensor written in Python: printing, indexing, iteration, equality.
(Arithmetic operators and conversions are in C++: python/src/tensor.cc.)"""
import numpy as np

from . import _core
from . import _public_name
from . import errors
from ._convert import binary_operand, constant
from ._dtypes import string, variant

Tensor = _core.Tensor


def _numpy_text(t, is_repr):
    if t.dtype == variant:
        return "<TensorList>"  # as TensorFlow prints its variants (kiln's only kind)
    a = np.asarray(t) if t.dtype == string else t.numpy()  # a string scalar's numpy() is bytes
    if is_repr:
        text = repr(a.item()) if a.ndim == 0 else repr(a)
    else:
        text = str(a)
    return "\n" + text if "\n" in text else text


def _repr(self):
    if self.is_symbolic:
        return "<%s.Tensor '%s' shape=%s dtype=%s>" % (_public_name.prefix, self.name, self.shape, self.dtype.name)
    label = "value" if self.dtype == variant else "numpy"
    return "<%s.Tensor: shape=%s, dtype=%s, %s=%s>" % (_public_name.prefix, self.shape, self.dtype.name, label, _numpy_text(self, True))


def _str(self):
    if self.is_symbolic:
        return 'Tensor("%s", shape=%s, dtype=%s)' % (self.name, self.shape, self.dtype.name)
    return "%s.Tensor(%s, shape=%s, dtype=%s)" % (_public_name.prefix, _numpy_text(self, False), self.shape, self.dtype.name)


def _index_value(s):
    if isinstance(s, Tensor):
        if s.dtype.is_integer and s.ndim == 0 and not s.is_symbolic:
            return int(s)
    elif isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_)):
        return int(s)
    raise TypeError("Only integers, slices (`:`), ellipsis (`...`), kiln.newaxis (`None`) and scalar "
                    "kiln.int32/kiln.int64 tensors are valid indices, got %r" % (s,))


def _getitem(self, key):
    """NumPy/TensorFlow indexing through StridedSlice and its masks."""
    if not isinstance(key, tuple):
        key = (key,)
    if any(isinstance(k, Tensor) and k.is_symbolic for k in key):
        return _symbolic_index(self, key)
    begin, end, strides = [], [], []
    begin_mask = end_mask = ellipsis_mask = new_axis_mask = shrink_axis_mask = 0
    for i, s in enumerate(key):
        bit = 1 << i
        if isinstance(s, slice):
            step = 1 if s.step is None else _index_value(s.step)
            if s.start is None:
                begin.append(0)
                begin_mask |= bit
            else:
                begin.append(_index_value(s.start))
            if s.stop is None:
                end.append(0)
                end_mask |= bit
            else:
                end.append(_index_value(s.stop))
            strides.append(step)
        elif s is Ellipsis:
            begin.append(0), end.append(0), strides.append(1)
            ellipsis_mask |= bit
        elif s is None:
            begin.append(0), end.append(0), strides.append(1)
            new_axis_mask |= bit
        else:
            v = _index_value(s)
            begin.append(v), end.append(v + 1), strides.append(1)
            shrink_axis_mask |= bit
    return _core.strided_slice(self, begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                               shrink_axis_mask)


def _symbolic_index(x, key):
    """x[i] and x[i, j] with scalar integer tensors of a trace (their values come at run time):
    Gather along the first axis, once per index. Negative tensor indices are out of range."""
    out = x
    for k in key:
        if isinstance(k, Tensor):
            if not k.dtype.is_integer or k.ndim != 0:
                raise TypeError("Only scalar integer tensors can index a tensor, got %r" % (k,))
        elif not isinstance(k, (int, np.integer)) or isinstance(k, (bool, np.bool_)):
            raise NotImplementedError("kiln indexes with a tensor of a trace only in x[i] or x[i, j] form "
                                      "(integers and scalar integer tensors), got %r" % (key,))
        out = _core.gather(out, k if isinstance(k, Tensor) else constant(int(k)), 0)
    return out


def _iter(self):
    if self.is_symbolic:
        raise errors.OperatorNotAllowedInGraphError(
            "Iterating over a symbolic `kiln.Tensor` is not allowed: its value exists only when the traced "
            "function runs. With AutoGraph, `for` over a tensor becomes a kiln.while_loop.")
    shape = self._shape_tuple()
    if shape is None:
        raise TypeError("Cannot iterate over a tensor with unknown shape.")
    if not shape:
        raise TypeError("Cannot iterate over a scalar tensor.")
    if shape[0] is None:
        raise TypeError("Cannot iterate over a tensor with unknown first dimension.")
    return (self[i] for i in range(shape[0]))


def _compare(self, other, fn, op, incompatible):
    if other is None:
        return incompatible
    other = binary_operand(other, self, op)
    try:
        return fn(self, other)
    except errors.InvalidArgumentError as e:
        # TF compares with incompatible_shape_error=False: shapes that do not broadcast are unequal.
        if "Incompatible shapes" in str(e):
            return constant(incompatible)
        raise


def _eq(self, other):
    return _compare(self, other, _core.equal, "Equal", False)


def _ne(self, other):
    return _compare(self, other, _core.not_equal, "NotEqual", True)


class _Reference:
    """A hashable reference to a tensor (Tensor.ref()), as TF's."""

    __slots__ = ("_tensor",)

    def __init__(self, tensor):
        self._tensor = tensor

    def deref(self):
        return self._tensor

    def __hash__(self):
        return id(self._tensor)

    def __eq__(self, other):
        return isinstance(other, _Reference) and other._tensor is self._tensor


def _format(self, spec):
    if self.ndim == 0 and not self.is_symbolic:
        return format(self.numpy().item(), spec)
    return format(str(self), spec)


Tensor.__repr__ = _repr
Tensor.__str__ = _str
Tensor.__getitem__ = _getitem
Tensor.__iter__ = _iter
Tensor.__eq__ = _eq
Tensor.__ne__ = _ne
Tensor.__format__ = _format
Tensor.ref = lambda self: _Reference(self)
Tensor.experimental_ref = Tensor.ref
Tensor.get_shape = lambda self: self.shape
Tensor.__array_ufunc__ = None  # numpy ufuncs on tensors defer to the tensor's operators
Tensor.__module__ = "kiln"
