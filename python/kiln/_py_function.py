"""tf.py_function: a Python function called with eager tensors every time it is reached, also
inside a kiln.function (a KilnHostFunction node, C++ kiln::host_function, calls back into
Python when the graph runs). Eagerly its ops are recorded by a GradientTape like any others;
inside a function it has no gradient, and a function holding one cannot be saved."""
from . import _core
from ._convert import convert_to_tensor
from ._dtypes import as_dtype
from ._tensor import Tensor


def _tensor(x, dtype=None):
    if isinstance(x, Tensor) and (dtype is None or x.dtype == dtype):
        return x
    if hasattr(x, "_kiln_tensor"):  # a variable
        x = x._kiln_tensor()
        if dtype is None or x.dtype == dtype:
            return x
    return convert_to_tensor(x, dtype=dtype)


def _call(func, inp, Tout):
    single = not isinstance(Tout, (list, tuple))
    dtypes = [as_dtype(Tout)] if single else [as_dtype(d) for d in Tout]
    inputs = [_tensor(x) for x in (inp or [])]

    def host(tensors):
        result = func(*tensors)
        if not single and not dtypes:
            return []
        results = [result] if single else list(result)
        if len(results) != len(dtypes):
            raise ValueError("py_function: %s returned %d values, Tout lists %d" % (
                getattr(func, "__name__", func), len(results), len(dtypes)))
        return [_tensor(r, d) for r, d in zip(results, dtypes)]

    outputs = _core.host_function(host, inputs, list(dtypes))
    return outputs[0] if single else list(outputs)


def py_function(func=None, inp=None, Tout=None, name=None):
    """func(*inp) with eager tensors; Tout: a dtype (one tensor back) or a list of dtypes (a
    list back; [] for none). Without func, a decorator: @py_function(Tout=...)."""
    del name
    if Tout is None:
        raise TypeError("Missing required argument: 'Tout'\n  If using tf.py_function as a decorator, set `Tout`\n"
                        "  **by name** above the function:\n  `@tf.py_function(Tout=tout)`")
    if func is None:
        def decorate(f):
            def wrapper(*args):
                return _call(f, list(args), Tout)

            wrapper.__name__ = getattr(f, "__name__", "py_function")
            wrapper.__wrapped__ = f
            return wrapper

        return decorate
    return _call(func, inp, Tout)


def numpy_function(func=None, inp=None, Tout=None, stateful=True, name=None):
    """tf.numpy_function: func(*inp) with numpy arrays (bytes objects for strings), its numpy
    results converted to Tout; also inside a kiln.function (the same host node as py_function)."""
    del stateful, name
    if Tout is None:
        raise TypeError("Missing required argument: 'Tout'")

    def with_numpy(f):
        def call(*tensors):
            return f(*[t.numpy() for t in tensors])
        return call

    if func is None:
        def decorate(f):
            def wrapper(*args):
                return _call(with_numpy(f), list(args), Tout)

            wrapper.__name__ = getattr(f, "__name__", "numpy_function")
            wrapper.__wrapped__ = f
            return wrapper

        return decorate
    return _call(with_numpy(func), inp, Tout)
