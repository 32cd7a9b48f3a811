"""kiln.Variable: mutable state (tf.Variable). Eagerly it holds a value; inside a kiln.function
it is captured by reference, its reads and writes ops that run on every call, in order."""
import enum
import threading
import weakref

import numpy as np

from . import _core
from . import _public_name
from . import errors
from ._convert import convert_to_tensor
from ._dtypes import as_dtype

Tensor = _core.Tensor

# Variables made while tracing, per thread: kiln.function traces a function that made some a
# second time with creation forbidden, as TensorFlow does, so that a function making a new
# variable on every call fails on its first call.
creation = threading.local()
_SINGLETON_MESSAGE = ("kiln.function only supports singleton kiln.Variables created on the first call. Make sure the "
                      "kiln.Variable is only created once or created outside kiln.function.")


# Every live kiln.Variable by its C++ variable's identity: a handle the C++ side returns (a
# tape's watched variables) finds its Python object here.
_BY_ID = weakref.WeakValueDictionary()


def _scoped(name):
    """The name under the enclosing kiln.name_scopes, as TensorFlow names variables."""
    from ._environment import get_current_name_scope

    scope = get_current_name_scope()
    return scope + "/" + name if scope else name


def variable_of(core):
    return _BY_ID.get(core._id())


def _enum_argument(kind, value, what, name):
    if value is None:
        return next(iter(kind))  # AUTO, NONE: the first member
    if isinstance(value, kind):
        return value
    if isinstance(value, enum.Enum) and type(value).__name__ == kind.__name__:  # TensorFlow's own enum
        return kind(value.value)
    raise ValueError("Invalid variable %s mode: %s for variable: %s" % (what, value, name))


class VariableSynchronization(enum.Enum):
    """When a distributed variable's copies agree (tf.VariableSynchronization); TensorFlow's values."""
    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    """How a distributed variable's updates combine (tf.VariableAggregation); TensorFlow's values."""
    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


class Variable:
    """A tensor-valued variable: `v.assign(x)`, `v.assign_add(x)`, `v.numpy()`, operators."""

    __array_priority__ = 100
    __array_ufunc__ = None

    def __new__(cls, *args, **kwargs):
        # In a MirroredStrategy's scope a variable is mirrored: one copy per replica.
        if cls is Variable:
            from ._mirrored import scope_strategy

            if scope_strategy() is not None:
                cls = MirroredVariable
        return object.__new__(cls)

    def __init__(self, initial_value=None, trainable=None, validate_shape=True, name=None, dtype=None, shape=None,
                 synchronization=None, aggregation=None, **kwargs):
        del validate_shape, kwargs
        if initial_value is None:
            raise ValueError("The `initial_value` arg (`None`) must be specified.")
        synchronization = _enum_argument(VariableSynchronization, synchronization, "synchronization", name)
        aggregation = _enum_argument(VariableAggregation, aggregation, "aggregation", name)
        if synchronization is VariableSynchronization.ON_READ and trainable is None:
            trainable = False  # TensorFlow's default for on-read variables (an explicit True stays)
        if callable(initial_value):
            initial_value = initial_value()
        value = convert_to_tensor(initial_value, dtype=as_dtype(dtype) if dtype is not None else None)
        if shape is not None:
            from ._shape import TensorShape

            if not TensorShape(shape).is_compatible_with(value.shape):
                raise ValueError("The initial value's shape (%s) is not compatible with the explicitly supplied "
                                 "`shape` argument (%s)." % (value.shape, TensorShape(shape)))
        if _core.tracing_active():
            if getattr(creation, "forbidden", False):
                raise ValueError(_SINGLETON_MESSAGE)
            creation.count = getattr(creation, "count", 0) + 1
        try:
            self._core = _core.VariableCore(value, _scoped(name) if name else "")
        except errors.FailedPreconditionError:
            # TensorFlow's class and words (its check runs at the first call: it traces twice).
            raise ValueError(_SINGLETON_MESSAGE) from None
        self._name = _scoped(name or "Variable") + ":0"
        self._trainable = True if trainable is None else bool(trainable)
        self._synchronization, self._aggregation = synchronization, aggregation
        self._core.trainable = self._trainable  # a tape watches only trainable variables unasked
        _BY_ID[self._core._id()] = self

    @classmethod
    def _from_core(cls, core, name=None, trainable=True):
        """A Variable over an existing VariableCore (a loaded model's), sharing its state."""
        self = cls.__new__(cls)
        self._core = core
        self._name = (name or core.name or "Variable") + ":0"
        self._trainable = bool(trainable)
        self._core.trainable = self._trainable
        _BY_ID[self._core._id()] = self
        return self

    # -- reading
    def read_value(self):
        return self._core.read()

    value = read_value

    def _kiln_tensor(self):
        return self._core.read()

    def numpy(self):
        return self._core.read().numpy()

    def __array__(self, dtype=None, copy=None):
        a = np.asarray(self.numpy())
        return a if dtype is None and not copy else np.array(a, dtype=dtype, copy=True)

    # -- writing
    def _value_for(self, value, op):
        from ._convert import binary_operand

        t = binary_operand(value, self._core.read(), op)
        if t.dtype != self.dtype:
            raise TypeError("Cannot assign a %s value to a %s variable %s" % (t.dtype.name, self.dtype.name, self._name))
        shape, target = t._shape_tuple(), self._core._shape_tuple()
        if shape is not None and target is not None and (len(shape) != len(target) or any(
                a is not None and b is not None and a != b for a, b in zip(shape, target))):
            raise ValueError("Cannot assign value to variable ' %s': Shape mismatch.The variable shape %s, and the "
                             "assigned value shape %s are incompatible." % (self._name, _text(target), _text(shape)))
        return t

    def assign(self, value, use_locking=False, name=None, read_value=True):
        self._core.assign(self._value_for(value, "AssignVariableOp"))
        return self._unread() if read_value else None

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        self._core.assign_add(self._value_for(delta, "AssignAddVariableOp"))
        return self._unread() if read_value else None

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        self._core.assign_sub(self._value_for(delta, "AssignSubVariableOp"))
        return self._unread() if read_value else None

    def _unread(self):
        """What an assignment returns: the same variable under TensorFlow's name for it,
        'UnreadVariable' (its repr reads the value after the assignment)."""
        view = object.__new__(type(self))
        view.__dict__.update(self.__dict__)
        view._name = "UnreadVariable"
        return view

    # -- what it is
    @property
    def dtype(self):
        return self._core.dtype

    @property
    def shape(self):
        from ._shape import TensorShape

        return TensorShape(self._core._shape_tuple())

    def get_shape(self):
        return self.shape

    @property
    def name(self):
        return self._name

    @property
    def trainable(self):
        return self._trainable

    @property
    def handle(self):
        """The variable itself: kiln has no separate resource tensor. Objects that stand for a
        variable (`_should_act_as_resource_variable`, as Keras's) reach it through `handle`."""
        return self

    @property
    def _unique_id(self):
        """A key no other live variable has (TensorFlow's, used by optimizers to index slots)."""
        return "%s_%d" % (self._name[:-2], self._core._id())

    @property
    def synchronization(self):
        return getattr(self, "_synchronization", VariableSynchronization.AUTO)

    @property
    def aggregation(self):
        return getattr(self, "_aggregation", VariableAggregation.NONE)

    @property
    def ndim(self):
        return self.shape.rank

    def ref(self):
        from ._tensor import _Reference

        return _Reference(self)

    experimental_ref = ref

    def __hash__(self):
        raise TypeError("Variable is unhashable. Instead, use variable.ref() as the key. (Variable: %r)" % (self,))

    def __repr__(self):
        if _core.tracing_active():
            return "<%s.Variable '%s' shape=%s dtype=%s>" % (_public_name.prefix, self._name, self.shape, self.dtype.name)
        from ._tensor import _numpy_text

        return "<%s.Variable '%s' shape=%s dtype=%s, numpy=%s>" % (_public_name.prefix, self._name, self.shape, self.dtype.name,
                                                                      _numpy_text(self.read_value(), True))

    __str__ = __repr__

    def __bool__(self):
        return bool(self.read_value())

    def __int__(self):
        return int(self.read_value())

    def __float__(self):
        return float(self.read_value())

    def __index__(self):
        return self.read_value().__index__()

    def __len__(self):
        return len(self.read_value())

    def __iter__(self):
        return iter(self.read_value())

    def __getitem__(self, key):
        return self.read_value()[key]

    def __format__(self, spec):
        return format(self.read_value(), spec)


class MirroredVariable(Variable):
    """A variable made in a MirroredStrategy's scope: one copy per replica. In a replica context
    reads and writes use that replica's copy; elsewhere reads use the first, and writes go to
    every copy (as TensorFlow's MirroredVariable, which a checkpoint saves once)."""

    def __init__(self, *args, **kwargs):
        from ._mirrored import scope_strategy

        strategy = scope_strategy()
        first = Variable._plain(*args, **kwargs)
        self._components = [first] + [Variable._plain(first.read_value(), trainable=first.trainable,
                                                      name="%s/replica_%d" % (first._name[:-2], i))
                                      for i in range(1, strategy.num_replicas_in_sync)]
        self._strategy = strategy
        self._name = first._name
        self._trainable = first._trainable
        for c in self._components:
            _BY_ID[c._core._id()] = self

    @property
    def _core(self):
        from ._mirrored import replica_index

        return self._components[replica_index(self._strategy)]._core

    @property
    def values(self):
        return tuple(self._components)

    def _write(self, method, value, read_value):
        from ._mirrored import current_replica, replica_index

        # In a replica context its own copy; elsewhere every copy, so they stay mirrored.
        targets = self._components if current_replica() is None else [self._components[replica_index(self._strategy)]]
        for c in targets:
            getattr(Variable, method)(c, value, read_value=False)
        return self._unread() if read_value else None

    def assign(self, value, use_locking=False, name=None, read_value=True):
        return self._write("assign", value, read_value)

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        return self._write("assign_add", delta, read_value)

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        return self._write("assign_sub", delta, read_value)

    def __repr__(self):
        return "MirroredVariable:{\n%s\n}" % ",\n".join("  %d: %r" % (i, c) for i, c in enumerate(self._components))

    __str__ = __repr__


def _plain(*args, **kwargs):
    """A kiln.Variable that is never mirrored (a MirroredVariable's copies)."""
    v = object.__new__(Variable)
    v.__init__(*args, **kwargs)
    return v


Variable._plain = staticmethod(_plain)


def _text(dims):
    return "(%s)" % ", ".join("None" if d is None else str(d) for d in dims) if len(dims) != 1 else "(%s,)" % (
        "None" if dims[0] is None else dims[0])


def _forward(name):
    def method(self, *args):
        return getattr(self.read_value(), name)(*args)

    method.__name__ = name
    return method


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
              "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__matmul__",
              "__rmatmul__", "__neg__", "__abs__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__",
              "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__", "__invert__"):
    setattr(Variable, _name, _forward(_name))
Variable.__hash__ = Variable.__dict__["__hash__"]
