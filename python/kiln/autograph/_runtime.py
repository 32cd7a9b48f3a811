"""What converted code calls (as `ag__`): Python control flow on Python values, kiln.cond and
kiln.while_loop on tensors, decided when the statement runs, as TensorFlow's AutoGraph does."""
import builtins
import functools
import inspect
import sys
import types

import numpy as np

from .. import _core
from .._convert import convert_to_tensor

Tensor = _core.Tensor


class Undefined:
    """The value of a local variable before its first assignment in converted code."""

    __slots__ = ("symbol_name",)

    def __init__(self, symbol_name):
        self.symbol_name = symbol_name

    def _fail(self, *args, **kwargs):
        raise UnboundLocalError("local variable '%s' referenced before assignment" % self.symbol_name)

    __bool__ = __call__ = __add__ = __radd__ = __iter__ = __len__ = __getitem__ = _fail

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        self._fail()

    def __repr__(self):
        return "Undefined(%r)" % self.symbol_name


def _is_tensor_like(v):
    if isinstance(v, Undefined):
        return False
    return isinstance(v, (Tensor, bool, int, float, np.ndarray, np.generic)) or hasattr(v, "_kiln_tensor")


def _as_tensor(v):
    if isinstance(v, Tensor):
        return v
    if hasattr(v, "_kiln_tensor"):
        return v._kiln_tensor()
    return convert_to_tensor(v)


def _tracing_tensor(v):
    return isinstance(v, Tensor) and _core.tracing_active()


# -- if ------------------------------------------------------------------------------------

def if_stmt(test, body, orelse, state, names):
    """`if test:` whose branches assign `names` (current values `state`): new values."""
    if not _tracing_tensor(test):
        return body(*state) if test else orelse(*state)
    return _tensor_if(test, body, orelse, state, names)


def if_return(test, body, orelse, state):
    """`if test:` where both branches end in `return`: the function's return value."""
    if not _tracing_tensor(test):
        return body(*state) if test else orelse(*state)
    from .._control_flow import cond

    return cond(test, lambda: body(*state), lambda: orelse(*state))


def if_exp(test, body, orelse):
    """`body if test else orelse`."""
    if not _tracing_tensor(test):
        return body() if test else orelse()
    from .._control_flow import cond

    return cond(test, body, orelse)


def _tensor_if(test, body, orelse, state, names):
    """kiln.cond over the variables the branches assign. A variable holding a non-tensor must
    be the same object after both branches; one defined in a single branch is an error."""
    outcomes = {}

    def run(fn, which):
        def branch():
            values = fn(*state)
            outcomes[which] = values
            if len(outcomes) == 2:  # both branches seen: TensorFlow's errors before the builder's
                _check_branches(names, outcomes["if"], outcomes["else"])
            return [_as_tensor(v) for v in values if _is_tensor_like(v)]

        return branch

    pred = _scalar_pred(_as_tensor(test))
    if pred.dtype.name != "bool":
        raise TypeError("The condition of an `if` statement must be a bool tensor, got %s" % pred.dtype.name)
    outs = _core.build_cond(pred, run(body, "if"), run(orelse, "else"))
    result, k = [], 0
    for x in outcomes["if"]:
        if _is_tensor_like(x):
            result.append(outs[k])
            k += 1
        else:
            result.append(x)
    return tuple(result)


def _check_branches(names, a, b):
    for name, x, y in zip(names, a, b):
        tx, ty = _is_tensor_like(x), _is_tensor_like(y)
        if tx and ty:
            continue
        if tx or ty:
            missing = "else" if isinstance(y, Undefined) else "if" if isinstance(x, Undefined) else None
            if missing:
                raise ValueError("'%s' must also be initialized in the %s branch" % (name, missing))
            raise TypeError("'%s' is a tensor in one branch of an `if` on a tensor and %r in the other"
                            % (name, y if tx else x))
        if x is not y:
            raise ValueError("'%s' holds different Python values after the branches of an `if` on a tensor (%r and "
                             "%r); only tensors can differ" % (name, x, y))


def _scalar_pred(p):
    """A one-element condition as the scalar the If node needs (TensorFlow accepts one element)."""
    shape = p._shape_tuple()
    if shape and all(d == 1 for d in shape):
        return _core.reshape(p, convert_to_tensor([], dtype="int32"))
    return p


# -- while and for ---------------------------------------------------------------------------

def while_stmt(test, body, state, names, opts=None):
    """`while test:` whose body assigns `names` (current values `state`): final values."""
    del opts
    first = test(*state)
    if not _tracing_tensor(first):
        while first:
            state = body(*state)
            first = test(*state)
        return tuple(state)
    return _tensor_loop(lambda vs: _as_tensor(test(*vs)), body, state, names)


def _tensor_loop(test, body, state, names, extra=()):
    """kiln.while_loop over the tensor-valued variables; the others must not change."""
    # A composite (a TensorArray) is carried as its one tensor and made again around it.
    wraps = {i: v._kiln_composite()[1] for i, v in enumerate(state) if hasattr(v, "_kiln_composite")}
    loop_idx = [i for i, v in enumerate(state) if _is_tensor_like(v) or i in wraps]
    fixed = list(state)
    init = list(extra) + [state[i]._kiln_composite()[0] if i in wraps else _as_tensor(state[i]) for i in loop_idx]
    n_extra = len(extra)

    def full(vs):
        s = list(fixed)
        for j, i in enumerate(loop_idx):
            s[i] = wraps[i](vs[n_extra + j]) if i in wraps else vs[n_extra + j]
        return vs[:n_extra], s

    def cond_flat(vs):
        ex, s = full(vs)
        return test(ex, s) if n_extra else test(s)

    def body_flat(vs):
        ex, s = full(vs)
        new_extra, new = body(ex, s) if n_extra else ([], body(*s))
        out = list(new_extra)
        for i, (name, old, v) in enumerate(zip(names, s, new)):
            if i in wraps:
                if not hasattr(v, "_kiln_composite"):
                    raise ValueError("'%s' must be a %s in every iteration of a loop on a tensor, got %r"
                                     % (name, type(old).__name__, v))
                out.append(v._kiln_composite()[0])
            elif i in loop_idx:
                if not _is_tensor_like(v):
                    raise ValueError("'%s' must be a tensor in every iteration of a loop on a tensor, got %r"
                                     % (name, v))
                t, before = _as_tensor(v), init[n_extra + loop_idx.index(i)]
                if t.dtype != before.dtype:
                    raise TypeError("'%s' has dtype %s before the loop, but dtype %s after one iteration"
                                    % (name, before.dtype.name, t.dtype.name))
                if not before.shape.is_compatible_with(t.shape):
                    raise ValueError("'%s' has shape %s before the loop, but shape %s after one iteration. "
                                     "kiln's AutoGraph keeps loop variables' shapes (it has no "
                                     "set_loop_options yet): use kiln.while_loop with shape_invariants"
                                     % (name, before.shape, t.shape))
                out.append(t)
            elif v is not old and not isinstance(old, Undefined):
                if _is_tensor_like(v):
                    raise ValueError("'%s' must be defined before the loop." % name)
                raise ValueError("'%s' holds a Python value (%r) that a loop on a tensor changes; only tensors "
                                 "can change across iterations" % (name, v))
        return out

    outs = _core.build_while(cond_flat, body_flat, init, None, None)
    _, s = full(outs)
    return tuple(s)


class _TensorRange:
    """What `for` iterates when it walks a tensor, or enumerate/zip of tensors."""

    def __init__(self, n, item):
        self.n, self.item = n, item


def for_stmt(iterable, extra_test, body, state, names, opts=None):
    """`for target in iterable:` (body(target, *state) -> state); extra_test: the break flag."""
    del opts
    if isinstance(iterable, Tensor) and _core.tracing_active():
        t = iterable
        iterable = _TensorRange(_first_dim(t), lambda i: t[i])
    if _core.tracing_active() and hasattr(iterable, "_kiln_element_stream"):
        return _dataset_loop(iterable, extra_test, body, state, names)
    if not isinstance(iterable, _TensorRange):
        for item in iterable:
            if extra_test is not None and not _truth(extra_test(*state)):
                break
            state = body(item, *state)
        return tuple(state)
    n = iterable.n
    i0 = _core.zeros_like(n)

    def test(ex, s):
        (i,) = ex
        more = _core.less(i, n)
        if extra_test is None:
            return more
        extra = extra_test(*s)
        return _core.logical_and(more, _as_tensor(extra)) if not isinstance(extra, bool) else (
            more if extra else _core.logical_and(more, convert_to_tensor(False)))

    def step(ex, s):
        (i,) = ex
        new = body(iterable.item(i), *s)
        return [_core.add(i, _core.ones_like(i))], new

    return _tensor_loop(test, step, state, names, extra=[i0])


def _dataset_loop(iterable, extra_test, body, state, names):
    """`for x in dataset` (or an iterator) in a trace: a while loop that pulls an optional
    element per iteration, as TensorFlow's AutoGraph makes it; the loop ends when it is empty."""
    from .. import nest
    from ..data._dataset import _core_specs

    handle, structure = iterable._kiln_element_stream()
    specs = _core_specs(nest.flatten(structure))

    def test(ex, s):
        (opt,) = ex
        more = _core.data_optional_has_value(opt)
        if extra_test is None:
            return more
        extra = extra_test(*s)
        if isinstance(extra, bool):
            return more if extra else _core.logical_and(more, convert_to_tensor(False))
        return _core.logical_and(more, _as_tensor(extra))

    def step(ex, s):
        (opt,) = ex
        item = nest.pack_sequence_as(structure, _core.data_optional_get_value(opt, specs))
        new = body(item, *s)
        return [_core.data_iterator_get_next_as_optional(handle)], new

    return _tensor_loop(test, step, state, names, extra=[_core.data_iterator_get_next_as_optional(handle)])


def _first_dim(t):
    """The length of t's first axis as an int32 scalar tensor."""
    return _core.shape_of(t)[0]


def _truth(v):
    return bool(v)


# -- logical operators -----------------------------------------------------------------------

def and_(a, b):
    """`a and b`, b lazily: kiln.cond when a is a tensor in a trace."""
    x = a()
    if not _tracing_tensor(x):
        return x and b()
    from .._control_flow import cond

    return cond(x, lambda: _as_tensor(b()), lambda: x)


def or_(a, b):
    x = a()
    if not _tracing_tensor(x):
        return x or b()
    from .._control_flow import cond

    return cond(x, lambda: x, lambda: _as_tensor(b()))


def not_(a):
    if isinstance(a, Tensor):
        return _core.logical_not(a)
    return not a


# -- builtins that change meaning on tensors ---------------------------------------------------

def range_(*args):
    if any(isinstance(a, Tensor) for a in args):
        from .. import _ops

        return _ops.range(*args)
    return builtins.range(*args)


def len_(x):
    if isinstance(x, Tensor) and x.is_symbolic:
        shape = x._shape_tuple()
        if shape and shape[0] is not None:
            return shape[0]
        return _first_dim(x)
    return builtins.len(x)


def enumerate_(iterable, start=0):
    if isinstance(iterable, Tensor) and _core.tracing_active():
        n = _first_dim(iterable)
        return _TensorRange(n, lambda i: (_core.add(i, _core.cast(convert_to_tensor(start), i.dtype))
                                          if start else i, iterable[i]))
    return builtins.enumerate(iterable, start)


def zip_(*iterables):
    if iterables and all(isinstance(t, Tensor) for t in iterables) and _core.tracing_active():
        ns = [_first_dim(t) for t in iterables]
        n = functools.reduce(_core.minimum, ns)
        return _TensorRange(n, lambda i: tuple(t[i] for t in iterables))
    return builtins.zip(*iterables)


# -- calls: functions called from converted code are converted too ----------------------------

# TensorFlow's list (autograph/core/config.py) and kiln's: libraries whose code runs as written.
_DO_NOT_CONVERT_MODULES = ("kiln", "numpy", "tensorflow", "jax", "torch", "builtins", "functools", "itertools",
                           "collections", "abc", "typing", "inspect", "math", "random", "re", "os", "sys", "keras",
                           "tf_keras", "matplotlib", "pandas", "PIL", "tensorflow_probability", "optree")
_converted = {}


# Whether a module's functions are user code, by module name: a traced op called from converted
# code (kiln.tanh in a tf.function) asks on every call, and splitting the name and looking
# the root up in two tuples cost as much as the op's own Python wrapper.
_module_converts = {}


def _converts_module(module):
    hit = _module_converts.get(module)
    if hit is None:
        root = (module or "").split(".")[0]
        hit = not (root in _DO_NOT_CONVERT_MODULES or root in sys.stdlib_module_names)
        if len(_module_converts) < 4096:  # module names are few; a program making its own stays bounded
            _module_converts[module] = hit
    return hit


def _should_convert(f):
    return (type(f) is types.FunctionType and _converts_module(f.__module__)
            and not getattr(f, "__kiln_do_not_convert__", False))


def converted_call(f, args, kwargs):
    """f(*args, **kwargs), with f converted first when it is user code."""
    if type(f) is types.FunctionType:  # the common case first: no method unwrapping
        if _converts_module(f.__module__) and not getattr(f, "__kiln_do_not_convert__", False):
            g = _convert_cached(f)
            if g is not None:
                return g(*args, **kwargs)
        return f(*args, **kwargs) if kwargs else f(*args)
    if isinstance(f, types.MethodType) and _should_convert(f.__func__):
        g = _convert_cached(f.__func__)
        return g(f.__self__, *args, **kwargs) if g is not None else f(*args, **kwargs)
    return f(*args, **kwargs)


def _convert_cached(f):
    from . import _transform

    key = f.__code__
    hit = _converted.get(key)
    if hit is not None and hit[0] is f:
        return hit[1]
    try:
        g = _transform.convert(f)
    except _transform.CannotConvert:
        g = None
    _converted[key] = (f, g)
    return g


def is_generator_or_coroutine(f):
    return inspect.isgeneratorfunction(f) or inspect.iscoroutinefunction(f)
