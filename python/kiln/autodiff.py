"""kiln.autodiff (tf.autodiff): GradientTape and ForwardAccumulator.

ForwardAccumulator computes Jacobian-vector products (forward mode) from kiln's reverse mode:
for y = f(x), the vector-Jacobian product g(u) = J^T u is linear in u, so J t is the gradient
of <g(u), t> with respect to u (the "double backward" trick). It records the forward ops on a
tape of its own and takes two gradients per `jvp` call; values agree with TensorFlow's
forward-mode rules to rounding."""
from ._convert import convert_to_tensor
from ._tape import GradientTape, UnconnectedGradients, _zero_mode
from ._variable import Variable

__all__ = ["GradientTape", "ForwardAccumulator"]


class ForwardAccumulator:
    """with kiln.autodiff.ForwardAccumulator(primals, tangents) as acc: y = f(primals);
    acc.jvp(y) is the derivative of y along `tangents`."""

    def __init__(self, primals, tangents):
        from . import nest

        nest.assert_same_structure(primals, tangents)
        self._primals = nest.flatten(primals)
        self._tangents = []
        for p, t in zip(self._primals, nest.flatten(tangents)):
            t = convert_to_tensor(t, dtype=p.dtype)
            if not p.shape.is_compatible_with(t.shape):
                raise ValueError("Tangent shape %s does not match the primal's %s" % (t.shape, p.shape))
            self._tangents.append(t)
        self._tape = GradientTape(persistent=True, watch_accessed_variables=False)
        self._entered = False

    def __enter__(self):
        self._tape.__enter__()
        self._entered = True
        for p in self._primals:
            self._tape.watch(p)
        return self

    def __exit__(self, *exc):
        return self._tape.__exit__(*exc)

    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        """The JVP of each tensor in `primals` (a structure), None (or zeros with
        UnconnectedGradients.ZERO) where it does not depend on the accumulator's primals."""
        from . import nest

        zero = _zero_mode(unconnected_gradients)
        if not self._entered:
            raise ValueError("ForwardAccumulator.jvp() before its `with` block recorded anything")
        return nest.map_structure(lambda y: self._jvp_one(y, zero), primals)

    def _jvp_one(self, y, zero):
        from ._ops import add_n, reduce_sum, zeros_like

        y = y.read_value() if isinstance(y, Variable) else convert_to_tensor(y)
        if not y.dtype.is_floating and not y.dtype.is_complex:
            return zeros_like(y) if zero else None
        recording = self._tape._recording
        if recording:
            self._tape._core.set_recording(False)  # the two gradients below are not forward ops
        try:
            with GradientTape() as outer:
                u = zeros_like(y)
                outer.watch(u)
                pulled = self._tape.gradient(y, self._primals, output_gradients=u)
                terms = [reduce_sum(g * t) for g, t in zip(pulled, self._tangents) if g is not None]
                if not terms:
                    return zeros_like(y) if zero else None
                total = add_n(terms) if len(terms) > 1 else terms[0]
            out = outer.gradient(total, u)
        finally:
            if recording:
                self._tape._core.set_recording(True)
        if out is None:
            return zeros_like(y) if zero else None
        return out
