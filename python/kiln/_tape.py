"""kiln.GradientTape (tf.GradientTape): records the ops run inside `with`, eagerly or into the
graph a kiln.function is tracing, and differentiates them (each op's own gradient)."""
import contextlib
import enum

import numpy as np

from . import _core
from ._convert import convert_to_tensor
from ._variable import Variable, variable_of

Tensor = _core.Tensor


class GradientTape:
    """with kiln.GradientTape() as tape: ...; tape.gradient(target, sources)."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = bool(persistent)
        self._watch_accessed_variables = bool(watch_accessed_variables)
        self._core = None
        self._recording = False
        self._watched = []  # the watched variables, kept after a non-persistent tape is spent

    def __enter__(self):
        if self._recording:
            raise ValueError("Tape is still recording, This can happen if you try to re-enter an already-active tape.")
        if self._core is None:
            # The C++ tape is always persistent: a non-persistent tape is spent here, after its
            # one gradient or jacobian (a jacobian takes one gradient per target element).
            self._core = _core.TapeCore(True, self._watch_accessed_variables)
        else:
            self._core.set_recording(True)
        self._recording = True
        return self

    def __exit__(self, *exc):
        if self._core is not None:
            self._core.set_recording(False)
        self._recording = False
        return False

    def _require_unspent(self):
        if self._core is None:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one set of gradients "
                               "(or jacobians)")

    def watch(self, tensor):
        if self._core is None:
            raise ValueError("GradientTape.watch() outside its `with` block")
        for t in _flatten(tensor):
            t = _variable_stand_in(t)
            if isinstance(t, Variable):
                self._core.watch_variable(t._core)
            else:
                self._core.watch(t if isinstance(t, Tensor) else convert_to_tensor(t))

    @contextlib.contextmanager
    def stop_recording(self):
        """Ops run inside are not recorded."""
        if not self._recording:
            raise RuntimeError("Trying to stop recording a tape which is not recording.")
        self._core.set_recording(False)
        try:
            yield
        finally:
            if self._core is not None:
                self._core.set_recording(True)

    def reset(self):
        """Forgets what was recorded; recording goes on inside `with`."""
        if self._core is None:
            raise RuntimeError("GradientTape.reset() on a tape that was never entered")
        self._core.reset()
        self._watched = []

    def watched_variables(self):
        if self._core is not None:
            self._watched = [v for v in (variable_of(c) for c in self._core.watched_variables()) if v is not None]
        return tuple(self._watched)

    def _spend(self):
        if not self._persistent:
            self.watched_variables()
            self._core = None  # stops recording: TensorFlow's tape is spent too
            self._recording = False

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients="none"):
        self._require_unspent()
        zero = _zero_mode(unconnected_gradients)
        # Summing several targets, or reading a variable given as the target, is part of what
        # is differentiated: the tape records it even after its `with` ended (as TensorFlow's).
        was = self._recording
        self._core.set_recording(True)
        try:
            target = _one_target(target)
        finally:
            self._core.set_recording(was)
        flat, structure = _flatten_with_structure(sources)
        upstream = convert_to_tensor(output_gradients) if output_gradients is not None else None
        grads = _gradient(self._core, target, [_source(s) for s in flat], upstream, zero)
        self._spend()
        return _rebuild(structure, grads)

    def jacobian(self, target, sources, unconnected_gradients="none", parallel_iterations=None,
                 experimental_use_pfor=True):
        """d target[i...] / d source[j...] for every element pair: target.shape + source.shape per
        source. kiln takes one gradient per target element (TensorFlow vectorizes them)."""
        self._require_unspent()
        zero = _zero_mode(unconnected_gradients)
        target = _as_tensor(target)
        flat, structure = _flatten_with_structure(sources)
        rows = self._rows(target, flat, zero, batch=False)
        self._spend()
        return _rebuild(structure, rows)

    def batch_jacobian(self, target, source, unconnected_gradients="none", parallel_iterations=None,
                       experimental_use_pfor=True):
        """Per batch row b: d target[b, i...] / d source[b, j...], of shape
        [batch] + target.shape[1:] + source.shape[1:] (rows are taken to be independent)."""
        self._require_unspent()
        zero = _zero_mode(unconnected_gradients)
        target = _as_tensor(target)
        result = self._rows(target, [source], zero, batch=True)[0]
        self._spend()
        return result

    def _rows(self, target, sources, zero, batch):
        from ._ops import reshape, stack, transpose, zeros
        shape = target.shape
        if shape.rank is None or any(d is None for d in shape.as_list()):
            raise ValueError("GradientTape.jacobian needs the target's shape when tracing, got %s" % shape)
        dims = shape.as_list()
        if batch and not dims:
            raise ValueError("Need first dimension of `target` shape (%s) and `source` shape to match." % shape)
        lead = dims[:1] if batch else []
        inner = dims[1:] if batch else dims
        n = int(np.prod(inner)) if inner else 1
        per_source = [[] for _ in sources]
        for i in range(n):
            seed = np.zeros([n], target.dtype.as_numpy_dtype)
            seed[i] = 1
            seed = np.broadcast_to(seed, lead + [n]).reshape(dims)
            grads = _gradient(self._core, target, [_source(s) for s in sources],
                                              convert_to_tensor(seed), zero)
            for k, g in enumerate(grads):
                per_source[k].append(g)
        out = []
        for k, rows in enumerate(per_source):
            src = _as_tensor(sources[k])
            src_dims = src.shape.as_list()
            if any(g is None for g in rows):
                # batch_jacobian gives zeros (of the target's dtype) whatever unconnected_gradients
                # says, as TensorFlow's does for compatibility.
                if batch:
                    out.append(zeros(lead + inner + src_dims[1:], target.dtype))
                else:
                    out.append(zeros(dims + src_dims, src.dtype) if zero else None)
                continue
            stacked = stack(rows)  # [n] + source dims
            if batch:  # [n, b, s...] -> [b, n, s...] -> [b] + inner + s...
                stacked = transpose(stacked, [1, 0] + list(range(2, len(src_dims) + 1)))
                out.append(reshape(stacked, lead + inner + src_dims[1:]))
            else:
                out.append(reshape(stacked, dims + src_dims))
        return out


class UnconnectedGradients(enum.Enum):
    """What a gradient is for a source the target does not depend on (tf.UnconnectedGradients)."""
    NONE = "none"
    ZERO = "zero"


def _zero_mode(unconnected_gradients):
    mode = getattr(unconnected_gradients, "value", unconnected_gradients)
    if mode not in ("none", "zero"):
        raise ValueError("Unknown value for unconnected_gradients: %r" % (unconnected_gradients,))
    return mode == "zero"


def _variable_stand_in(s):
    """The kiln Variable an object standing for one refers to (TensorFlow's rule: an object
    with `_should_act_as_resource_variable` is its `handle`), or s."""
    if not isinstance(s, Variable) and getattr(s, "_should_act_as_resource_variable", False):
        return s.handle
    return s


def _source(s):
    s = _variable_stand_in(s)
    if isinstance(s, Variable):
        return s._core
    return s if isinstance(s, Tensor) else convert_to_tensor(s)


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


_NO_GRADIENT = "gradient registry has no entry for: "


def _gradient(core, *args):
    """The tape's gradient; an op without a gradient function is TensorFlow's LookupError."""
    from . import errors
    try:
        return core.gradient_mixed(*args)
    except errors.NotFoundError as e:
        if _NO_GRADIENT in e.message:
            raise LookupError(e.message[e.message.index(_NO_GRADIENT):]) from None
        raise
