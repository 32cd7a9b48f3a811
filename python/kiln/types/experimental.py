"""kiln.types.experimental: TensorFlow's tf.types.experimental. The function types are abstract
classes kiln's own classes are registered with (isinstance works); TraceType is the base of a
user's tracing type, which a kiln.function keys a call by when an argument has
`__tf_tracing_type__` (equal trace types share one trace)."""
import abc
import typing

import numpy as np


class TraceType(abc.ABC):
    """How a kiln.function keys an argument: equal (and equally hashed) trace types share a trace."""

    @abc.abstractmethod
    def is_subtype_of(self, other):
        """Whether a trace made for `other` serves this type."""

    @abc.abstractmethod
    def most_specific_common_supertype(self, others):
        """The most specific type all of `others` and this one are subtypes of, or None."""

    @abc.abstractmethod
    def placeholder_value(self, placeholder_context):
        """The value the function is traced with."""

    @abc.abstractmethod
    def __eq__(self, other):
        pass

    @abc.abstractmethod
    def __hash__(self):
        pass

    def to_tensors(self, value):
        del value
        return []

    def from_tensors(self, tensors):
        del tensors
        return self.placeholder_value(None)

    def flatten(self):
        return []

    def cast(self, value, cast_context):
        del cast_context
        return value


@typing.runtime_checkable
class SupportsTracingProtocol(typing.Protocol):
    """An object that gives its own TraceType."""

    def __tf_tracing_type__(self, context):
        ...


class Callable(abc.ABC):
    """Something a kiln.function call can run: a Function, ConcreteFunction or AtomicFunction."""


class GenericFunction(Callable):
    """A function that traces per input signature (kiln.Function)."""


PolymorphicFunction = GenericFunction


class ConcreteFunction(Callable):
    """One trace of a function (kiln.ConcreteFunction)."""


class AtomicFunction(Callable):
    """The graph of a concrete function, called with its flat tensor arguments (inference_fn)."""


class FunctionType(abc.ABC):
    """The signature of a concrete function (ConcreteFunction.function_type)."""


def _register():
    from .._function import Function, ConcreteFunction as _Concrete, _AtomicFunction, _FunctionType
    GenericFunction.register(Function)
    ConcreteFunction.register(_Concrete)
    AtomicFunction.register(_AtomicFunction)
    FunctionType.register(_FunctionType)


_register()


def _tensor_like():
    from .._tensor import Tensor
    from .._variable import Variable
    return typing.Union[Tensor, Variable, np.ndarray, np.generic, int, float, bool, str, bytes, list, tuple]


TensorLike = _tensor_like()

__all__ = ["TraceType", "SupportsTracingProtocol", "Callable", "GenericFunction", "PolymorphicFunction",
           "ConcreteFunction", "AtomicFunction", "FunctionType", "TensorLike"]
