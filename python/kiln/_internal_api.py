"""tf.__internal__: the part of TensorFlow's internal API that libraries built on TensorFlow call
(Keras's TensorFlow backend above all). Namespaces are modules so that a name kiln lacks fails
as an AttributeError naming it."""
import abc
import contextlib
import types as _types

from . import _core
from . import _tracking


def _namespace(name, doc, **members):
    module = _types.ModuleType("kiln.__internal__." + name, doc)
    module.__dict__.update(members)
    return module


class Tensor(abc.ABC):  # noqa: B024 (an interface marker, as TensorFlow's types.core.Tensor)
    """The tensor interface (tf.__internal__.types.Tensor): kiln tensors are instances; libraries
    subclass it for tensor-like objects (Keras's variables)."""


Tensor.register(_core.Tensor)


class CompositeTensor(abc.ABC):  # noqa: B024
    """Tensors made of several tensors (TensorFlow's CompositeTensor)."""


class _EagerTensorType(abc.ABCMeta):
    def __instancecheck__(cls, obj):
        return isinstance(obj, _core.Tensor) and not obj.is_symbolic


class EagerTensor(metaclass=_EagerTensorType):
    """isinstance(x, EagerTensor): x is a kiln tensor holding a value (not a traced one)."""


class FuncGraph:
    """A graph built outside kiln.function: `with FuncGraph("g").as_default():` adds the ops run
    in the block to the graph instead of running them, over inputs from
    tf.compat.v1.placeholder(). What libraries use it for is learning output shapes and dtypes."""

    _stack = []  # the open graphs, innermost last (their placeholders go to the innermost)

    def __init__(self, name):
        self.name = name
        self._scope = _core._GraphScope()

    @contextlib.contextmanager
    def as_default(self):
        self._scope.open()
        FuncGraph._stack.append(self)
        try:
            yield self
        finally:
            FuncGraph._stack.pop()
            self._scope.close()


def placeholder(dtype, shape=None, name=None):
    """tf.compat.v1.placeholder: an input of the innermost FuncGraph being built."""
    from ._dtypes import as_dtype
    from ._shape import TensorShape
    if not FuncGraph._stack:
        raise RuntimeError("tf.placeholder() is not compatible with eager execution.")
    shape = TensorShape(shape)
    dims = None if shape.rank is None else list(shape.as_list())
    return FuncGraph._stack[-1]._scope.placeholder(as_dtype(dtype), dims, name or "Placeholder")


def _smart_cond(pred, true_fn=None, false_fn=None, name=None):
    """Calls one branch when `pred` is known now (a Python bool, or a tensor with a value);
    otherwise builds kiln.cond."""
    from ._control_flow import cond
    if isinstance(pred, _core.Tensor) and not pred.is_symbolic:
        pred = bool(pred)
    if isinstance(pred, bool) or type(pred).__name__ == "bool_":
        return true_fn() if pred else false_fn()
    return cond(pred, true_fn, false_fn, name=name)


def _maybe_merge_call(fn, strategy, *args, **kwargs):
    """With no multi-replica strategy there is nothing to merge: fn runs with the strategy."""
    return fn(strategy, *args, **kwargs)


def _strategy_supports_no_merge_call():
    return True


@contextlib.contextmanager
def _eager_mode():
    with _core.InitScope():
        yield


def _unwrap(target):
    """(decorators, target) as TensorFlow's tf_decorator.unwrap: kiln wraps with functools only."""
    decorators = []
    while hasattr(target, "__wrapped__"):
        decorators.append(target)
        target = target.__wrapped__
    return decorators, target


tracking = _namespace("tracking", "Object tracking for checkpoints.", Trackable=_tracking.Trackable,
                      AutoTrackable=_tracking.AutoTrackable,
                      no_automatic_dependency_tracking=_tracking.no_automatic_dependency_tracking)
types = _namespace("types", "Tensor interfaces.", Tensor=Tensor)
smart_cond = _namespace("smart_cond", "Branching decided at trace time when possible.", smart_cond=_smart_cond)
distribute = _namespace("distribute", "Strategy internals.",
                        interim=_namespace("distribute.interim", "merge_call helpers.",
                                           maybe_merge_call=_maybe_merge_call),
                        strategy_supports_no_merge_call=_strategy_supports_no_merge_call)
eager_context = _namespace("eager_context", "Eager context switches.", eager_mode=_eager_mode)
decorator = _namespace("decorator", "Decorator introspection.", unwrap=_unwrap)
tf2 = _namespace("tf2", "TensorFlow 2 behavior switch.", enabled=lambda: True)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError("module 'kiln.__internal__' has no attribute '%s' (kiln does not provide TensorFlow's "
                         "tf.__internal__.%s)" % (name, name))
