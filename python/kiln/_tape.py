"""kiln.GradientTape (tf.GradientTape): records the ops run inside `with`, eagerly or into the
graph a kiln.function is tracing, and differentiates them (each op's own gradient)."""
from . import _core
from ._convert import convert_to_tensor
from ._variable import Variable

Tensor = _core.Tensor


class GradientTape:
    """with kiln.GradientTape() as tape: ...; tape.gradient(target, sources)."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        if not watch_accessed_variables:
            raise NotImplementedError("kiln.GradientTape(watch_accessed_variables=False) is not implemented: "
                                      "variables read under a tape are always watched")
        self._persistent = bool(persistent)
        self._core = None
        self._used = False

    def __enter__(self):
        if self._core is not None:
            raise ValueError("This tape is already recording: a GradientTape is entered once")
        self._core = _core.TapeCore(self._persistent)
        return self

    def __exit__(self, *exc):
        # The C++ tape records while it lives; it is released after gradient() (or with this
        # object). Ops run between `with` and gradient() are recorded but never differentiated.
        return False

    def watch(self, tensor):
        if self._core is None:
            raise ValueError("GradientTape.watch() outside its `with` block")
        for t in _flatten(tensor):
            if isinstance(t, Variable):
                continue  # variables are watched when read
            self._core.watch(t if isinstance(t, Tensor) else convert_to_tensor(t))

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients="none"):
        if self._core is None:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one set of gradients "
                               "(or was never entered)")
        mode = getattr(unconnected_gradients, "value", unconnected_gradients)
        if mode not in ("none", "zero"):
            raise ValueError("Unknown value for unconnected_gradients: %r" % (unconnected_gradients,))
        target = _one_target(target)
        flat, structure = _flatten_with_structure(sources)
        if all(isinstance(s, Variable) for s in flat) and output_gradients is None:
            grads = self._core.gradient_variables(target, [s._core for s in flat], mode == "zero")
        elif any(isinstance(s, Variable) for s in flat):
            raise NotImplementedError("kiln.GradientTape.gradient takes sources that are all variables or all "
                                      "tensors, not a mix")
        elif output_gradients is not None:
            grads = self._core.gradient_tensors_with(target, list(flat), convert_to_tensor(output_gradients),
                                                     mode == "zero")
        else:
            grads = self._core.gradient_tensors(target, list(flat), mode == "zero")
        if not self._persistent:
            self._core = None  # stops recording, as TF's tape is spent
        return _rebuild(structure, grads)


def _one_target(target):
    flat = _flatten(target)
    if len(flat) != 1:
        # TF sums the gradients of several targets: d(sum of targets).
        from ._ops import add_n, reduce_sum

        return add_n([reduce_sum(_as_tensor(t)) for t in flat])
    return _as_tensor(flat[0])


def _as_tensor(t):
    return t.read_value() if isinstance(t, Variable) else t if isinstance(t, Tensor) else convert_to_tensor(t)


def _flatten(x):
    return _flatten_with_structure(x)[0]


def _flatten_with_structure(x):
    leaves = []

    def walk(v):
        if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
            return type(v)(walk(e) for e in v)
        if isinstance(v, dict):
            return {k: walk(v[k]) for k in sorted(v)}
        leaves.append(v)
        return len(leaves) - 1

    return leaves, walk(x)


def _rebuild(structure, values):
    if isinstance(structure, int):
        return values[structure]
    if isinstance(structure, dict):
        return {k: _rebuild(v, values) for k, v in structure.items()}
    return type(structure)(_rebuild(v, values) for v in structure)
