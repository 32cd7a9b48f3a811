"""kiln.custom_gradient (tf.custom_gradient): a function that returns its result and the
function computing its gradient. The forward runs with every tape stopped; the tapes then
record the result as one step whose gradient is the user's function (C++
kiln::record_custom_gradient), eagerly or inside a traced function."""
import functools
import inspect

from . import _core, nest
from ._convert import convert_to_tensor
from ._tape import GradientTape
from ._variable import Variable

Tensor = _core.Tensor


def custom_gradient(f=None):
    """@kiln.custom_gradient over f(*args) -> (result, grad_fn); grad_fn(*dy) returns one
    gradient per argument, and with variables read by f, grad_fn(*dy, variables=...) returns
    (argument gradients, variable gradients)."""
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        return _call(f, args, kwargs)
    # functools.wraps gives it f's module and source: AutoGraph must not rebuild it from f's text
    decorated.__kiln_do_not_convert__ = True
    return decorated


def _call(f, args, kwargs):
    args = nest.map_structure(lambda a: a if isinstance(a, Variable) else convert_to_tensor(a), args)
    inputs = [a for a in nest.flatten(args) if isinstance(a, Tensor)]
    with _core.StopRecording():
        with GradientTape() as watcher:  # sees which variables f reads
            result, grad_fn = f(*args, **kwargs)
    variables = [v for v in watcher.watched_variables() if v.trainable]
    takes_variables = _accepts_variables(grad_fn)
    if variables and not takes_variables:
        raise TypeError("@kiln.custom_gradient grad_fn must accept keyword argument 'variables', since function "
                        "uses variables: %s" % variables)
    flat = [convert_to_tensor(r) for r in nest.flatten(result)]
    # One read per variable, recorded by the tapes: its gradient is the variable's.
    reads = [v.read_value() for v in variables]

    def backward(dy):
        if takes_variables:
            grads, variable_grads = grad_fn(*dy, variables=variables)
            variable_grads = list(variable_grads)
            if len(variable_grads) != len(variables):
                raise ValueError("Must return gradient for each variable from @custom_gradient grad_fn.")
        else:
            grads, variable_grads = grad_fn(*dy), []
        grads = list(grads) if isinstance(grads, (list, tuple)) else [grads]
        if len(grads) != len(inputs):
            raise ValueError("custom_gradient function expected to return %d gradients, but returned %d instead."
                             % (len(inputs), len(grads)))
        return [None if g is None else convert_to_tensor(g) for g in grads + variable_grads]

    passed = _core.record_custom_gradient(inputs + reads, flat, backward)
    return nest.pack_sequence_as(result, passed)


def _accepts_variables(fn):
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "variables" in params or any(p.kind == p.VAR_KEYWORD for p in params.values())


def recompute_grad(f):
    """tf.recompute_grad: the same values and gradients; kiln keeps the forward's activations
    instead of recomputing them (memory, not results, differs)."""
    return f


def init_scope():
    """tf.init_scope: `with kiln.init_scope():` runs its ops eagerly even inside a kiln.function
    being traced (once, at trace time), with every tape paused (C++ kiln::InitScope)."""
    return _core.InitScope()
