"""kiln.saved_model (tf.saved_model): save writes a SavedModel in TensorFlow's format
(saved_model.pb + variables/), which tf.saved_model.load and TensorFlow Serving read; load gives
back, without the code that made it, what TensorFlow's load gives: an object whose attributes are
the saved variables, tf.functions (each callable with the arguments it was traced for) and
sub-objects, and whose .signatures are called with keyword arguments and return a dict of
tensors. The objects are in _saved_objects.py."""
import os

from .. import _core
from .._convert import convert_to_tensor

__all__ = ["experimental", "load", "save", "DEFAULT_SERVING_SIGNATURE_DEF_KEY", "SaveOptions", "LoadOptions"]

DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"


class SaveOptions:
    """tf.saved_model.SaveOptions: accepted and ignored (kiln writes one meta graph, its
    variables to one shard, no debug info)."""

    def __init__(self, namespace_whitelist=None, save_debug_info=False, function_aliases=None,
                 experimental_debug_stripper=False, experimental_io_device=None, experimental_variable_policy=None,
                 experimental_custom_gradients=True, experimental_image_format=False, experimental_skip_saver=False,
                 experimental_sharding_callback=None, extra_tags=None):
        self.namespace_whitelist = namespace_whitelist
        self.save_debug_info = save_debug_info
        self.function_aliases = function_aliases or {}
        self.experimental_io_device = experimental_io_device
        self.experimental_variable_policy = experimental_variable_policy
        self.experimental_custom_gradients = experimental_custom_gradients
        self.extra_tags = extra_tags


class LoadOptions:
    """tf.saved_model.LoadOptions: accepted and ignored (kiln always restores every variable)."""

    def __init__(self, allow_partial_checkpoint=False, experimental_io_device=None, experimental_skip_checkpoint=False,
                 experimental_variable_policy=None, experimental_load_function_aliases=False):
        self.allow_partial_checkpoint = allow_partial_checkpoint
        self.experimental_io_device = experimental_io_device
        self.experimental_skip_checkpoint = experimental_skip_checkpoint
        self.experimental_variable_policy = experimental_variable_policy
        self.experimental_load_function_aliases = experimental_load_function_aliases


class _Signature:
    """One serving signature: f(**inputs) -> {output name: tensor}."""

    def __init__(self, model, name):
        self._model, self.name = model, name
        self._inputs = model.input_specs(name)  # [(name, dtype, shape)], in call order
        self._outputs = [spec[0] for spec in model.output_specs(name)]

    @property
    def structured_input_signature(self):
        from .._spec import TensorSpec

        return (), {n: TensorSpec(shape, dtype, name=n) for n, dtype, shape in self._inputs}

    @property
    def structured_outputs(self):
        from .._spec import TensorSpec

        return {n: TensorSpec(shape, dtype, name=n) for n, dtype, shape in self._model.output_specs(self.name)}

    @property
    def variables(self):
        """The restored kiln.Variables the signature uses."""
        from .._saved_objects import _variables_of

        return _variables_of([self._model.signature(self.name)])

    @property
    def trainable_variables(self):
        return tuple(v for v in self.variables if v.trainable)

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


def load(export_dir, tags=None, options=None):
    """Loads `export_dir`: the saved root object (see the module's doc), with .signatures
    (name -> callable) and .variables / .trainable_variables (lists of kiln.Variable) unless it
    saved attributes of those names. tags and options are accepted for TensorFlow's signature;
    kiln reads the one meta graph TensorFlow 2 writes."""
    del tags, options
    from .._saved_objects import restore

    model = _core.load_saved_model(os.fspath(export_dir))
    return restore(model, {name: _Signature(model, name) for name in model.signatures()})


def _concrete(name, f):
    from .._function import ConcreteFunction, Function

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


def _default_signature(obj):
    """TensorFlow's rule: the one function attribute with an input_signature whose trace
    returns tensors; none when there is none or more than one."""
    from .._function import Function
    from .._saved_objects import _functions_of

    if isinstance(obj, Function):
        found = [obj] if obj._input_signature is not None else []
    elif getattr(obj, "_default_save_signature", None) is not None:
        # TensorFlow's protocol for objects that know their serving function (Keras models).
        found = [obj._default_save_signature]
    else:
        found = [f for _, f in _functions_of(obj) if f._input_signature is not None]
    found = [f for f in found if f.get_concrete_function()._core.output_specs()]
    return found[0] if len(found) == 1 else None


def save(obj, export_dir, signatures=None, options=None):
    """Writes `export_dir` (tf.saved_model.save): obj's objects (variables, kiln.function
    attributes with their traces, sub-modules; see _saved_objects.py) and its signatures.
    `signatures`: a kiln.function with an input_signature, a ConcreteFunction, or a dict of them
    by signature name; without it, the one kiln.function attribute with an input_signature is
    "serving_default" (none when there are several). A dict's outputs are named by its keys,
    others output_0, output_1, ...; variables that no attribute holds are saved at the paths
    their names give."""
    del options
    from .._checkpoint import Checkpoint
    from .._function import Function
    from .._module import Module
    from .._saved_objects import object_tree
    from .._tracking import Trackable
    from .experimental import TrackableResource

    if obj is not None and not isinstance(obj, (Module, Checkpoint, Function, Trackable)):
        raise ValueError("Expected an object of type `Trackable`, such as `kiln.Module` or a subclass of the "
                         "`Trackable` class, for export. Got %r with type %s." % (obj, type(obj)))
    if signatures is None:
        found = _default_signature(obj)
        signatures = {} if found is None else found
    if not isinstance(signatures, dict):
        signatures = {"serving_default": signatures}
    concrete = {k: _concrete(k, f) for k, f in signatures.items()}
    names = {k: n for k, n in ((k, _output_names(cf)) for k, cf in concrete.items()) if n is not None}
    graph, variables, functions, objects = object_tree(obj)
    resources = [o for o in objects if isinstance(o, TrackableResource)]
    if resources:
        raise NotImplementedError("kiln.saved_model.save: %r is a TrackableResource, which kiln cannot save yet "
                                  "(only variables and functions)" % resources[0])
    _core.save_saved_model_objects(os.fspath(export_dir), {k: cf._core for k, cf in concrete.items()}, names,
                                   graph, variables, functions)


from . import experimental  # noqa: E402 (tf.saved_model.experimental)
