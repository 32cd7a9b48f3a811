"""The objects of a SavedModel as tf.saved_model.save writes a tf.Module and tf.saved_model.load
gives it back: a tree of plain objects, variables and tf.functions.

save: the tree is the one kiln.train.Checkpoint walks (a Module's attributes, lists, tuples and
dicts of trackable values) plus each kiln.function attribute (an instance's own, and the class's
methods bound to it) with the traces it has so far; a function with an input_signature and no
trace is traced for it. Each trace is saved with its input and output structures, in TensorFlow's
StructuredValue (C++ kiln::SavedObjects), so TensorFlow's loader rebuilds callable functions.

load: an object per saved object. Its attributes are its children: variables (kiln.Variables
sharing their state with the functions), restored functions and further objects. A restored
function calls the first trace whose input structure the arguments fit (TensorFlow's rule:
tensors by dtype and shape, Python values by equality); none fits -> ValueError in TensorFlow's
words. Its outputs come back in the structure the trace returned."""
import json

import numpy as np

from . import _core, _nest
from ._checkpoint import _children_of
from ._convert import convert_to_tensor
from ._spec import TensorSpec
from ._tensor import Tensor
from ._variable import Variable


# -- structures as JSON (src/io/structured_value.h) -------------------------------------------

def _encode(value, name):
    if value is None:
        return None
    if isinstance(value, TensorSpec):
        shape = None if value.shape.rank is None else [d for d in value.shape.as_list()]
        return {"tensor": {"name": value.name or name, "shape": shape, "dtype": value.dtype.name}}
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, (int, np.integer)):
        return {"int": int(value)}
    if isinstance(value, (float, np.floating)):
        return {"float": float(value)}
    if isinstance(value, str):
        return {"string": value}
    if isinstance(value, dict):
        return {"dict": {str(k): _encode(v, "%s_%s" % (name, k)) for k, v in value.items()}}
    if isinstance(value, list):
        return {"list": [_encode(v, "%s_%d" % (name, i)) for i, v in enumerate(value)]}
    if isinstance(value, tuple):
        return {"tuple": [_encode(v, "%s_%d" % (name, i)) for i, v in enumerate(value)]}
    raise ValueError("kiln.saved_model.save: cannot save a function traced with a %s argument (%r): save "
                     "functions whose arguments are tensors, numbers, strings, None, and lists, tuples and "
                     "dicts of them" % (type(value).__name__, value))


def _decode(s):
    """A structure back as Python values, TensorSpecs at the tensor leaves."""
    if s is None:
        return None
    (kind, value), = s.items()
    if kind == "tensor":
        from ._dtypes import as_dtype

        return TensorSpec(value["shape"], as_dtype(value["dtype"]), name=value["name"] or None)
    if kind in ("tuple", "named_tuple"):
        return tuple(_decode(v) for v in value) if kind == "tuple" else tuple(_decode(p[1]) for p in value[1])
    if kind == "list":
        return [_decode(v) for v in value]
    if kind == "dict":
        return {k: _decode(v) for k, v in value.items()}
    if kind in ("int", "float", "string", "bool"):
        return value
    return _Unsupported(value)


class _Unsupported:
    """A value kind kiln does not model: no argument fits it."""

    def __init__(self, kind):
        self.kind = kind


# -- save ----------------------------------------------------------------------------------------

def _functions_of(obj):
    """[(attribute, kiln.Function)] of an object: its own and its class's, bound to it."""
    from ._function import Function

    found = {}
    for klass in reversed(type(obj).__mro__):
        for name, value in vars(klass).items():
            if isinstance(value, Function):
                found[name] = getattr(obj, name)
    for name, value in (vars(obj).items() if hasattr(obj, "__dict__") else []):
        if isinstance(value, Function):
            found[name] = value
    return sorted(found.items())


def _split_call(params, canonical):
    """A canonical call as TensorFlow saves a trace's input: [(name, value)] of the positional
    parameters then of the *args' elements (args_0, args_1, ...), and the **kwargs' entries."""
    args, kwargs = [], {}
    for p, v in zip(params, canonical):
        if p.kind is p.VAR_POSITIONAL:
            args.extend(("%s_%d" % (p.name, i), x) for i, x in enumerate(v))
        elif p.kind is p.VAR_KEYWORD:
            kwargs.update(v)
        else:
            args.append((p.name, v))
    return args, kwargs


def _trace_entry(cf, function_index):
    args, kwargs = _split_call(cf._function._params, cf._structured_input)
    inputs = {"tuple": [{"tuple": [_encode(v, n) for n, v in args]},
                        {"dict": {str(k): _encode(v, str(k)) for k, v in kwargs.items()}}]}
    specs = [TensorSpec(t.shape, t.dtype) for t in cf.outputs]
    outputs = _encode(cf._rebuild(specs), "output")
    return {"function": function_index, "inputs": inputs, "outputs": outputs}


class _EmptyRoot:
    pass


def object_tree(root):
    """(graph JSON, variable cores, concrete function cores) for kiln::SavedObjects, and the
    objects walked (breadth-first)."""
    nodes, variables, functions = [], [], []
    ids = {}

    def node_of(obj):
        if id(obj) in ids:
            return ids[id(obj)]
        ids[id(obj)] = len(nodes)
        nodes.append(None)
        queue.append(obj)
        return ids[id(obj)]

    queue, objects = [], []
    from ._function import Function

    if isinstance(root, (Function, Variable)) or root is None:
        root = _EmptyRoot()  # a function saved alone: its signatures, under an empty root object
    node_of(root)
    while queue:
        obj = queue.pop(0)
        objects.append(obj)
        me = ids[id(obj)]
        if isinstance(obj, Variable):
            nodes[me] = {"kind": "variable", "variable": len(variables)}
            variables.append(obj._core)
            continue
        if isinstance(obj, Function):
            traces = obj._list_all_concrete_functions()
            if not traces and obj._input_signature is not None:
                traces = [obj.get_concrete_function()]
            entries = []
            for cf in traces:
                entries.append(_trace_entry(cf, len(functions)))
                functions.append(cf._core)
            positional = [p for p in obj._params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            defaults = [p.default for p in positional if p.default is not p.empty]
            # *args become positional parameters args_0, args_1, ... as many as the traces
            # passed (TensorFlow's spec of a function whose input_signature fills *args).
            names = max(([n for n, _ in _split_call(obj._params, cf._structured_input)[0]] for cf in traces),
                        key=len, default=[p.name for p in positional])
            nodes[me] = {"kind": "function", "args": names, "traces": entries,
                         "defaults": _encode(tuple(defaults), "default") if defaults else None}
            continue
        children = []
        for name, child in (_children_of(obj, "savedmodel") or []):
            children.append([name, node_of(child)])
        if not isinstance(obj, (list, tuple, dict)):
            for name, f in _functions_of(obj):
                if f._list_all_concrete_functions() or f._input_signature is not None:
                    children.append([name, node_of(f)])
        nodes[me] = {"kind": "object", "children": children,
                     "identifier": "trackable_list_wrapper" if isinstance(obj, (list, tuple))
                     else "trackable_dict_wrapper" if isinstance(obj, dict) else "_generic_user_object"}
    return json.dumps({"nodes": nodes}), variables, functions, objects


# -- load ----------------------------------------------------------------------------------------

class _UserObject:
    """A restored object: its saved attributes, nothing of its class (as TensorFlow's). A saved
    __call__ makes it callable."""

    def __call__(self, *args, **kwargs):
        call = vars(self).get("__call__")
        if call is None:
            raise TypeError("'_UserObject' object is not callable")
        return call(*args, **kwargs)

    def __repr__(self):
        return "<kiln.saved_model.load.._UserObject object at 0x%X>" % id(self)


def _fits(spec, value):
    """Whether `value` fits a saved input leaf: (fits, tensors it contributes)."""
    if isinstance(spec, TensorSpec):
        if isinstance(value, Variable):
            value = value.read_value()
        if not isinstance(value, Tensor):
            try:
                value = convert_to_tensor(value, dtype=spec.dtype)
            except (TypeError, ValueError):
                return False, None
        if value.dtype != spec.dtype or not spec.shape.is_compatible_with(value.shape):
            return False, None
        return True, [value]
    if isinstance(spec, _Unsupported):
        return False, None
    if isinstance(spec, (tuple, list)):
        if not isinstance(value, (tuple, list)) or len(value) != len(spec):
            return False, None
        out = []
        for s, v in zip(spec, value):
            ok, ts = _fits(s, v)
            if not ok:
                return False, None
            out += ts
        return True, out
    if isinstance(spec, dict):
        if not isinstance(value, dict) or sorted(map(str, value)) != sorted(spec):
            return False, None
        out = []
        for key in sorted(spec):
            ok, ts = _fits(spec[key], {str(k): v for k, v in value.items()}[key])
            if not ok:
                return False, None
            out += ts
        return True, out
    if isinstance(value, (Tensor, np.ndarray)):
        return False, None
    return (type(value) is type(spec) or (isinstance(spec, float) and isinstance(value, int))) and value == spec, []


def _variables_of(cores):
    """The kiln.Variables of ConcreteFunction cores (each once, in order of first use)."""
    from ._variable import variable_of

    out, seen = [], set()
    for core in cores:
        for v in core.variables():
            if v._id() not in seen:
                seen.add(v._id())
                found = variable_of(v)
                out.append(Variable._from_core(v) if found is None else found)
    return tuple(out)


class _RestoredFunction:
    """A saved tf.function: calls the first trace its arguments fit."""

    def __init__(self, model, name, node):
        self._model, self.__name__ = model, name
        self._args = node["args"]
        defaults = _decode(node.get("defaults"))
        self._defaults = dict(zip(self._args[len(self._args) - len(defaults):], defaults)) \
            if isinstance(defaults, (tuple, list)) else {}
        self._traces = [(t["function"], _decode(t["inputs"]), _decode(t["outputs"])) for t in node["traces"]]
        self._cores = {}

    def _bind(self, args, kwargs):
        if len(args) > len(self._args):
            raise TypeError("%s() takes %d positional arguments but %d were given"
                            % (self.__name__, len(self._args), len(args)))
        bound = list(args)
        for name in self._args[len(args):]:
            if name not in kwargs and name in self._defaults:
                bound.append(self._defaults[name])
                continue
            if name not in kwargs:
                raise TypeError("%s() missing required argument: '%s'" % (self.__name__, name))
            bound.append(kwargs.pop(name))
        if kwargs:
            raise TypeError("%s() got an unexpected keyword argument '%s'" % (self.__name__, next(iter(kwargs))))
        return tuple(bound)

    def _core_of(self, name):
        core = self._cores.get(name)
        if core is None:
            core = self._cores[name] = self._model.function(name)
        return core

    @property
    def variables(self):
        """The restored kiln.Variables its traces use, in order of first use."""
        return _variables_of(self._core_of(name) for name, _, _ in self._traces)

    @property
    def trainable_variables(self):
        return tuple(v for v in self.variables if v.trainable)

    def __call__(self, *args, **kwargs):
        bound = self._bind(args, dict(kwargs))
        for name, (positional, _), outputs in self._traces:
            ok, tensors = _fits(tuple(positional), bound)
            if not ok:
                continue
            core = self._core_of(name)
            results = list(core.call(tensors))
            return _nest.map_structure(outputs, lambda s: results.pop(0) if isinstance(s, TensorSpec) else s)
        options = "\n".join("  Option %d:\n    Positional arguments (%d total):\n%s" % (
            i + 1, len(positional), "\n".join("      * %r" % (p,) for p in positional))
            for i, (_, (positional, _), _) in enumerate(self._traces))
        raise ValueError("Could not find matching concrete function to call loaded from the SavedModel. Got:\n"
                         "  Positional arguments (%d total):\n%s\n\n Expected these arguments to match one of the "
                         "following %d option(s):\n\n%s" % (
                             len(bound), "\n".join("    * %r" % (b,) for b in bound), len(self._traces), options))

    def __repr__(self):
        return "<kiln.saved_model restored function %s>" % self.__name__


def restore(model, signatures):
    """The root object of a loaded model (LoadedModelCore), with `signatures` set."""
    graph = json.loads(model.objects())["nodes"]
    if not graph:
        root = _UserObject()
        root.signatures = signatures
        return root
    made = {}
    # The name a function is reached by (its first parent's edge), for its repr and errors.
    edge_name = {}
    for node in graph:
        for name, child in node.get("children", []):
            edge_name.setdefault(child, name)

    def make(i):
        if i in made:
            return made[i]
        node = graph[i]
        kind = node["kind"]
        if kind == "variable":
            made[i] = Variable._from_core(model.variable(node["variable"]), node.get("name"),
                                          node.get("trainable", True))
        elif kind == "function":
            made[i] = _RestoredFunction(model, edge_name.get(i, "function"), node)
        elif kind == "signatures":
            made[i] = signatures
        elif kind == "object" and node.get("identifier") == "trackable_list_wrapper":
            made[i] = []
            for name, child in sorted(node["children"], key=lambda c: int(c[0]) if c[0].isdigit() else -1):
                made[i].append(make(child))
        elif kind == "object" and node.get("identifier") == "trackable_dict_wrapper":
            made[i] = {}
            for name, child in node["children"]:
                made[i][name] = make(child)
        elif kind == "object":
            made[i] = _UserObject()
            for name, child in node["children"]:
                if 0 <= child < len(graph):
                    setattr(made[i], name, make(child))
        else:
            made[i] = None
        return made[i]

    root = make(0)
    if "signatures" not in vars(root):
        root.signatures = signatures
    variables = [v for v in made.values() if isinstance(v, Variable)]
    root.variables = getattr(root, "variables", variables)
    root.trainable_variables = getattr(root, "trainable_variables", [v for v in variables if v.trainable])
    return root
