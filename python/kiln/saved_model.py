"""kiln.saved_model (tf.saved_model): save writes a SavedModel in TensorFlow's format
(saved_model.pb + variables/), which tf.saved_model.load and TensorFlow Serving read; load serves
the signatures of a SavedModel written by TensorFlow or kiln, without the code that made it. Each
signature is called with keyword arguments and returns a dict of tensors, as in TensorFlow."""
import os

from . import _core
from ._convert import convert_to_tensor

__all__ = ["load", "save", "DEFAULT_SERVING_SIGNATURE_DEF_KEY"]

DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"


class _Signature:
    """One serving signature: f(**inputs) -> {output name: tensor}."""

    def __init__(self, model, name):
        self._model, self.name = model, name
        self._inputs = model.input_specs(name)  # [(name, dtype, shape)], in call order
        self._outputs = [spec[0] for spec in model.output_specs(name)]

    @property
    def structured_input_signature(self):
        from ._spec import TensorSpec

        return (), {n: TensorSpec(shape, dtype, name=n) for n, dtype, shape in self._inputs}

    @property
    def structured_outputs(self):
        from ._spec import TensorSpec

        return {n: TensorSpec(shape, dtype, name=n) for n, dtype, shape in self._model.output_specs(self.name)}

    def __call__(self, *args, **kwargs):
        names = [n for n, _, _ in self._inputs]
        if len(args) > len(names):
            raise TypeError("%s takes %d inputs, got %d positional arguments" % (self.name, len(names), len(args)))
        bound = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names:
                raise TypeError("Binding inputs to the signature failed due to `got an unexpected keyword argument "
                                "'%s'`" % key)
            if key in bound:
                raise TypeError("Binding inputs to the signature failed due to `multiple values for argument '%s'`"
                                % key)
            bound[key] = value
        for key in names:
            if key not in bound:
                raise TypeError("Binding inputs to the signature failed due to `missing a required argument: '%s'`"
                                % key)
        tensors = [bound[n] if isinstance(bound[n], _core.Tensor) else convert_to_tensor(bound[n], dtype=dtype)
                   for n, dtype, _ in self._inputs]
        return dict(zip(self._outputs, self._model.call(self.name, tensors)))

    def __repr__(self):
        return "<kiln.saved_model signature %r: (%s) -> (%s)>" % (
            self.name, ", ".join(n for n, _, _ in self._inputs), ", ".join(self._outputs))


class _Loaded:
    """What load returns: .signatures (name -> callable) and .variables (name -> value)."""

    def __init__(self, model):
        self._model = model
        self.signatures = {name: _Signature(model, name) for name in model.signatures()}

    @property
    def variables(self):
        return self._model.variables()


def load(export_dir, tags=None, options=None):
    """Loads `export_dir`. tags and options are accepted for TensorFlow's signature; kiln reads
    the one meta graph TensorFlow 2 writes."""
    del tags, options
    return _Loaded(_core.load_saved_model(os.fspath(export_dir)))


def _concrete(name, f):
    from ._function import ConcreteFunction, Function

    if isinstance(f, Function):
        if f._input_signature is None:
            raise ValueError("Expected a TensorFlow function for which to generate a signature, but got a "
                             "kiln.function without an input_signature for signature '%s': pass "
                             "f.get_concrete_function(...) or give the function an input_signature" % name)
        f = f.get_concrete_function()
    if not isinstance(f, ConcreteFunction):
        raise ValueError("Expected a TensorFlow function for which to generate a signature, but got %r for "
                         "signature '%s'" % (f, name))
    return f


def _output_names(cf):
    """A flat dict of tensors is named by its keys, as TensorFlow names signature outputs;
    anything else by position (output_0, ...)."""
    positions = cf._rebuild(list(range(len(cf._core.output_specs()))))
    if isinstance(positions, dict) and sorted(v for v in positions.values() if isinstance(v, int)) == \
            list(range(len(positions))):
        names = [None] * len(positions)
        for key, i in positions.items():
            names[i] = str(key)
        return names
    return None


def save(obj, export_dir, signatures=None, options=None):
    """Writes `export_dir` (tf.saved_model.save). `signatures`: a kiln.function with an
    input_signature, a ConcreteFunction, or a dict of them by signature name; without it, the one
    kiln.function with an input_signature among obj's attributes is "serving_default". A dict's
    outputs are named by its keys, others output_0, output_1, ...; variables are saved at the
    paths their names give."""
    del options
    from ._function import Function

    if signatures is None:
        found = [v for v in vars(obj).values() if isinstance(v, Function) and v._input_signature is not None] \
            if hasattr(obj, "__dict__") else []
        found += [getattr(type(obj), k).__get__(obj, type(obj)) for k, v in vars(type(obj)).items()
                  if isinstance(v, Function) and v._input_signature is not None]
        if isinstance(obj, Function) and obj._input_signature is not None:
            found = [obj]
        if len(found) != 1:
            raise ValueError("save needs signatures=: %s has %d kiln.functions with an input_signature"
                             % (type(obj).__name__, len(found)))
        signatures = found[0]
    if not isinstance(signatures, dict):
        signatures = {"serving_default": signatures}
    concrete = {k: _concrete(k, f) for k, f in signatures.items()}
    names = {k: n for k, n in ((k, _output_names(cf)) for k, cf in concrete.items()) if n is not None}
    _core.save_saved_model(os.fspath(export_dir), {k: cf._core for k, cf in concrete.items()}, names)
