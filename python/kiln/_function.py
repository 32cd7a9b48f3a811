"""kiln.function: TensorFlow's tf.function for Python callables.

A call canonicalizes its arguments (defaults and keywords bound to parameters) and hands them
to the C++ core (python/src/function.cc), which builds the call key, finds the cached concrete
function and runs it. On a miss the core calls `_trace` here: the Python function runs once
with placeholders in place of its tensor arguments, its ops recorded into a graph by the same
C++ trace context as C++ code, and its outputs (any nesting of tuples, lists, dicts and
namedtuples; Python values pass through) become the concrete function's structure."""
import atexit
import collections
import functools
import inspect
import itertools
import logging
import sys
import weakref

import numpy as np

from . import _core
from . import _public_name
from . import _dtypes
from . import _nest
from ._convert import convert_to_tensor
from ._spec import TensorSpec, TypeSpec
from ._mirrored import _local as _replica_local, running as _REPLICAS_RUNNING
from ._variable import Variable as _Variable

Tensor = _core.Tensor
_P = inspect.Parameter

_logger = logging.getLogger("kiln")
if not _logger.handlers:
    _handler = logging.StreamHandler(sys.stderr)
    _handler.setFormatter(logging.Formatter("%(levelname)s:kiln:%(message)s"))
    _logger.addHandler(_handler)
    _logger.propagate = False


# -- other objects in a call key: by weak reference ------------------------------------------

_serials = itertools.count(1)
_by_id = {}  # id(obj) -> (serial, weakref): the entry dies with its object
_by_value = {}  # objects that take no weak reference but hash: by value (as TF's Literal)


@atexit.register
def _forget_values():
    # The values (trace types hold the user's objects, and through them tensors) are released
    # while the interpreter still runs, not left to module teardown after kiln's types are gone.
    _by_value.clear()


def _value_key(value):
    serial = _by_value.get(value)
    if serial is None:
        serial = _by_value[value] = next(_serials)
    return serial


def object_key(obj):
    """A number for `obj` that no other object, alive or later, ever gets; for an object with
    `__tf_tracing_type__` (tf.types.experimental.SupportsTracingProtocol), the number of its
    trace type, so objects of equal trace types share a trace."""
    if hasattr(type(obj), "__tf_tracing_type__"):
        return _value_key(obj.__tf_tracing_type__(None))
    entry = _by_id.get(id(obj))
    if entry is not None and entry[1]() is obj:
        return entry[0]
    try:
        i = id(obj)
        ref = weakref.ref(obj, lambda _, i=i: _by_id.pop(i, None))
    except TypeError:
        try:
            return _value_key(obj)
        except TypeError:
            raise TypeError("kiln.function cannot key an argument of type %s: it takes no weak reference and is "
                            "not hashable. Pass tensors, Python literals, or objects that can be weakly "
                            "referenced." % type(obj).__name__) from None
    serial = next(_serials)
    _by_id[i] = (serial, ref)
    return serial


_core._set_function_hooks(TensorSpec, object_key, np.ndarray, np.generic, convert_to_tensor, __import__(
    "kiln._spec", fromlist=["spec_fields"]).spec_fields)
_core._set_variable_type(_Variable)  # keyed by spec, not identity: one trace serves many variables


# -- structures: the same walk as the C++ key (python/src/function.cc) -----------------------

_is_namedtuple = _nest.is_namedtuple
_Slot = _nest.Slot
_rebuild = _nest.rebuild


_ITERATOR_TYPES = []  # kiln.data.Iterator, registered by kiln.data (which imports this module)


def register_iterator_type(iterator_type, fields):
    """tf.data iterators are arguments like tensors: `fields(it)` gives (handle, key text)."""
    _ITERATOR_TYPES.append(iterator_type)
    _core._set_iterator_hooks(iterator_type, fields)


def _map_leaves(x, fn):
    """x with every tensor-like leaf (tensor, numpy array or scalar, TensorSpec, tf.data
    iterator) replaced by fn(leaf), in the order the C++ walk visits them: sequences in order,
    dicts by sorted key."""
    tensor_like = (Tensor, np.ndarray, np.generic, TensorSpec, *_ITERATOR_TYPES)
    return _nest.map_structure(x, lambda v: fn(v) if isinstance(v, tensor_like) else v, sorted_dicts=True)


def _leaf_tensor(x):
    """The tensor a call passes for an argument leaf (an iterator passes its handle)."""
    if isinstance(x, Tensor):
        return x
    if _ITERATOR_TYPES and isinstance(x, tuple(_ITERATOR_TYPES)):
        return x._it.handle
    return convert_to_tensor(x)


def _traced_leaf(leaf, placeholder):
    """What the traced body sees for an argument leaf: its placeholder, or for an iterator a
    graph iterator over the placeholder handle."""
    if _ITERATOR_TYPES and isinstance(leaf, tuple(_ITERATOR_TYPES)):
        return leaf._graph_over(placeholder)
    return placeholder


def _input_spec(leaf, placeholder):
    if _ITERATOR_TYPES and isinstance(leaf, tuple(_ITERATOR_TYPES)):
        return leaf._type_spec
    return TensorSpec(placeholder.shape, placeholder.dtype, _placeholder_name(placeholder))


def _output_tensor(x):
    """The tensor an output leaf becomes, or None for a Python value that passes through.
    Numbers and arrays come back as tensors (graph constants), as TensorFlow's do."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (np.ndarray, np.generic, bool, int, float)):
        return convert_to_tensor(x)
    if hasattr(x, "_kiln_tensor"):  # variables
        return x._kiln_tensor()
    if hasattr(x, "_kiln_composite"):  # values carried as one tensor (an Optional, a TensorArray)
        return _nest.Composite(*x._kiln_composite())
    return None


def _flatten_outputs(result):
    """(tensors, structure with Slot leaves). Python values stay in the structure."""
    return _nest.flatten_to_slots(result, _output_tensor)


# -- printing signatures as TensorFlow does --------------------------------------------------

def _type_text(x, aliases=None):
    """TensorFlow's text of a trace type; `aliases` numbers the variables of one signature."""
    aliases = {} if aliases is None else aliases
    if isinstance(x, TypeSpec):  # TensorSpec, IteratorSpec, ...
        return repr(x)
    if isinstance(x, _Variable):
        alias = aliases.setdefault(id(x), len(aliases))
        return "VariableSpec(shape=%s, dtype=%r, trainable=%s, alias_id=%d)" % (
            x.shape, x.dtype, x.trainable, alias)
    t = type(x)
    if t is tuple:
        return "Tuple[%s]" % ", ".join(_type_text(v, aliases) for v in x)
    if t is list:
        return "List[%s]" % ", ".join(_type_text(v, aliases) for v in x)
    if t is dict:
        return "Dict[%s]" % ", ".join("[%r, %s]" % (k, _type_text(v, aliases)) for k, v in x.items())
    if _is_namedtuple(x):
        return "%s[%s]" % (t.__name__, ", ".join("[%r, %s]" % (f, _type_text(v, aliases))
                                                 for f, v in zip(x._fields, x)))
    if x is None or isinstance(x, (bool, int, float, str)):
        return "Literal[%r]" % (x,)
    return "Weakref[%s]" % t.__name__ if hasattr(t, "__weakref__") else "Literal[%r]" % (x,)


class _GraphTensor:
    """A tensor of a traced graph as ConcreteFunction.inputs/outputs show it."""

    __slots__ = ("name", "shape", "dtype")

    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype = name, shape, dtype

    def __repr__(self):
        return "<%s.Tensor '%s' shape=%s dtype=%s>" % (_public_name.prefix, self.name, self.shape, self.dtype.name)

    def __str__(self):
        return 'Tensor("%s", shape=%s, dtype=%s)' % (self.name, self.shape, self.dtype.name)


class Operation:
    """One node of a traced graph (graph.get_operations()): name, type, inputs and outputs (graph
    tensors with name, shape and dtype), control_inputs (operation names), get_attr."""

    __slots__ = ("name", "type", "_inputs", "control_inputs", "node_def_attrs", "_outputs")

    def __init__(self, d, tensors):
        self.name, self.type = d["name"], d["type"]
        self._inputs = [tensors.get(n) or _GraphTensor(n, None, None) for n in d["inputs"]]
        self.control_inputs = d["control_inputs"]
        self.node_def_attrs = d["attrs"]
        self._outputs = [tensors[_output_name(o)] for o in d["outputs"]]

    @property
    def inputs(self):
        return list(self._inputs)

    @property
    def outputs(self):
        return list(self._outputs)

    def get_attr(self, name):
        return self.node_def_attrs[name]

    def __repr__(self):
        return "<%s.Operation '%s' type=%s>" % (_public_name.prefix, self.name, self.type)


def _output_name(text):
    return text.split(" ", 1)[0]


def _graph_tensor(text):
    """'name:0 float32 [2,-1]' (the core's description of an output) as a _GraphTensor."""
    from . import _dtypes as dtypes
    from ._shape import TensorShape
    name, dtype, dims = text.split(" ")
    shape = TensorShape(None) if not dims.startswith("[") else TensorShape(
        [None if d == "?" or int(d) < 0 else int(d) for d in dims.strip("[]").split(",") if d])
    return _GraphTensor(name, shape, getattr(dtypes, dtype, dtype))


class NodeDef:
    """One node of a GraphDef as TensorFlow's protobuf reads: name, op, input ("node",
    "node:1", "^control"), device, attr (name -> the attribute's value as text)."""

    __slots__ = ("name", "op", "input", "device", "attr")

    def __init__(self, d):
        self.name, self.op, self.device = d["name"], d["type"], ""
        self.input = [n[:-2] if n.endswith(":0") else n for n in d["inputs"]]
        self.input += ["^" + c for c in d["control_inputs"]]
        self.attr = dict(d["attrs"])

    def __repr__(self):
        return "<kiln NodeDef name=%r op=%r>" % (self.name, self.op)


class GraphDef:
    """A traced graph as TensorFlow's GraphDef: .node (NodeDef), str() its protobuf text,
    SerializeToString() its binary form (wire-compatible with TensorFlow's graph_pb2.GraphDef)."""

    def __init__(self, text, data, operations):
        self._text, self._data = text, data
        self.node = [NodeDef(d) for d in operations]

    def __str__(self):
        return self._text

    def SerializeToString(self):  # noqa: N802 (protobuf's name)
        return self._data


class FuncGraph:
    """The graph of a concrete function (cf.graph)."""

    def __init__(self, concrete):
        self._concrete = concrete

    def get_operations(self):
        ops = self._concrete._core.operations()
        tensors = {}
        for d in ops:
            for o in d["outputs"]:
                t = _graph_tensor(o)
                tensors[t.name] = t
        return [Operation(d, tensors) for d in ops]

    def get_operation_by_name(self, name):
        for op in self.get_operations():
            if op.name == name:
                return op
        raise KeyError("The name %r refers to an Operation not in the graph." % name)

    def as_graph_def(self, add_shapes=False):
        core = self._concrete._core
        return GraphDef(core.graph_def_text(), core.graph_def_bytes(), core.operations())

    @property
    def inputs(self):
        return self._concrete.inputs

    @property
    def outputs(self):
        return self._concrete.outputs

    @property
    def name(self):
        return self._concrete.name


class ConcreteFunction:
    """One trace of a kiln.function: a graph for one input signature, callable with arguments of
    that signature (tf.types.experimental.ConcreteFunction)."""

    def __init__(self, function, structured_input, structure, single):
        # What it needs of its Function, not the Function: the C++ core holds this object, and a
        # reference back would be a cycle through C++ that Python's collector cannot see.
        self._function = _CallSpec(function)
        self._structured_input = structured_input  # canonical args, tensor leaves as TensorSpecs
        self._structure = structure
        self._single = single
        self._core = None
        self._inference_name = None

    def _attach(self, core):
        self._core = core

    def _rebuild(self, values):
        return _rebuild(self._structure, values)

    @property
    def name(self):
        return self._core.name

    @property
    def graph(self):
        return FuncGraph(self)

    @property
    def inputs(self):
        return [_GraphTensor("%s:0" % (name or "arg%d" % i), _shape_of(dims), dtype)
                for i, (dims, dtype, name) in enumerate(self._core.input_specs())]

    @property
    def outputs(self):
        return [_GraphTensor("Identity%s:0" % ("" if i == 0 else "_%d" % i), _shape_of(dims), dtype)
                for i, (dims, dtype, _) in enumerate(self._core.output_specs())]

    @property
    def structured_outputs(self):
        return _rebuild(self._structure, self.outputs)

    @property
    def structured_input_signature(self):
        f = self._function
        args, kwargs = f._unbind(self._structured_input)
        return tuple(args), kwargs

    @property
    def output_dtypes(self):
        return _rebuild(self._structure, [t.dtype for t in self.outputs])

    @property
    def output_shapes(self):
        return _rebuild(self._structure, [t.shape for t in self.outputs])

    @property
    def captured_inputs(self):
        return list(self._core.captured_inputs())

    @property
    def variables(self):
        """The kiln.Variables the graph reads or writes, in order of first use (its
        control-flow bodies' included)."""
        from ._variable import Variable, variable_of

        found = [(core, variable_of(core)) for core in self._core.variables()]
        return tuple(Variable._from_core(core) if v is None else v for core, v in found)

    @property
    def trainable_variables(self):
        return tuple(v for v in self.variables if v.trainable)

    @property
    def inference_fn(self):
        """The graph alone (tf.types.experimental.AtomicFunction): called with the flat tensor
        arguments, it returns the structured result."""
        return _AtomicFunction(self)

    @property
    def function_type(self):
        """Prints as TensorFlow's FunctionType: (a: TensorSpec(...), b: Literal[2]) -> ..."""
        aliases = {}
        params = ", ".join("%s: %s" % (p.name, _type_text(_unnamed(value), aliases))
                           for p, value in zip(self._function._params, self._structured_input))
        return _FunctionType("(%s) -> %s" % (params, self._output_text()))

    def _output_text(self):
        specs = [TensorSpec(_shape_of(dims), dtype) for dims, dtype, _ in self._core.output_specs()]
        return _type_text(_rebuild(self._structure, specs))

    def pretty_printed_signature(self, verbose=True):
        del verbose
        lines = ["Input Parameters:"]
        aliases = {}
        for p, value in zip(self._function._params, self._structured_input):
            lines.append("  %s (%s): %s" % (p.name, p.kind.name, _type_text(_unnamed(value), aliases)))
        lines.append("Output Type:")
        lines.append("  " + self._output_text())
        lines.append("Captures:")
        captured = self.captured_inputs
        if not captured:
            lines.append("  None")
        for t in captured:
            lines.append("  %d: %r" % (id(t), TensorSpec(t.shape, t.dtype)))
        return "\n".join(lines)

    def __call__(self, *args, **kwargs):
        expected = self._core.input_specs()
        tensors = []
        core = self._core
        try:
            canonical = self._function._canonicalize(args, kwargs)
            self._check_python_values(canonical, args, kwargs)
            core = self._for_variables(canonical)
            _map_leaves(canonical, lambda x: tensors.append(_leaf_tensor(x)))
        except TypeError:
            # A concrete function takes its tensor arguments alone, as TensorFlow's does: the
            # Python values it was traced with (get_concrete_function(spec, 4)) are part of it.
            if kwargs or len(args) != len(expected):
                raise
            tensors = [a if isinstance(a, Tensor) else convert_to_tensor(a) for a in args]
        if len(tensors) != len(expected):
            raise TypeError("%s takes %d tensor arguments (as traced), got %d" % (self.name, len(expected),
                                                                                   len(tensors)))
        for i, (t, (dims, dtype, name)) in enumerate(zip(tensors, expected)):
            if t.dtype != dtype:
                from . import errors
                raise errors.InvalidArgumentError(
                    None, None, "cannot compute %s as input #%d(zero-based) was expected to be a %s tensor but is a %s "
                    "tensor [Op:%s]" % (self.name, i, dtype.name, t.dtype.name, self.name))
            if not _shape_of(dims).is_compatible_with(t.shape):
                raise TypeError("%s: argument %s must be %r, got a tensor of dtype %s and shape %s"
                                % (self.name, name, TensorSpec(_shape_of(dims), dtype), t.dtype.name, t.shape))
        return _rebuild(self._structure, core.call(tensors))

    def _for_variables(self, canonical):
        """The core that runs a call: this trace, or (variables passed in place of those it was
        traced with, of the same specs) a copy rebound to them, as kiln.function's call does."""
        from . import nest
        given, traced = nest.flatten(canonical), nest.flatten(self._structured_input)
        if len(given) != len(traced):
            return self._core
        pairs = [(s, v) for v, s in zip(given, traced) if isinstance(s, _Variable)]
        if all(v is s for s, v in pairs):
            return self._core
        binding = {}
        for s, v in pairs:
            if (not isinstance(v, _Variable) or v.dtype != s.dtype or v.shape != s.shape or v.trainable != s.trainable
                    or binding.setdefault(s._core._id(), v._core._id()) != v._core._id()):
                raise TypeError("Binding inputs to kiln.function failed due to `Can not cast %r to %s`."
                                % (v, _type_text(s)))
        if len(set(binding.values())) != len(binding):  # two traced variables, one given: aliasing differs
            raise TypeError("Binding inputs to kiln.function failed: the variables passed alias each other "
                            "differently from those it was traced with")
        pairs = [(s, v) for s, v in pairs if v is not s]
        key = tuple(v._core._id() for _, v in pairs)
        rebound = self.__dict__.setdefault("_rebound", collections.OrderedDict())
        core = rebound.get(key)
        if core is None:
            core = _core.rebind_variables(self._core, [s._core for s, _ in pairs], [v._core for _, v in pairs])
            rebound[key] = core
            if len(rebound) > 8:  # the oldest goes (and holds its variables no more)
                rebound.popitem(last=False)
        else:
            rebound.move_to_end(key)
        return core

    def _check_python_values(self, canonical, args, kwargs):
        """A Python value the function was traced with must be passed as it was (or left out)."""
        from . import nest
        given, traced = nest.flatten(canonical), nest.flatten(self._structured_input)
        if len(given) != len(traced):
            return
        for v, s in zip(given, traced):
            if isinstance(s, TensorSpec) or isinstance(v, (Tensor, np.ndarray, np.generic)) or hasattr(v, "_kiln_tensor"):
                continue
            if type(v) is not type(s) or v != s:
                raise TypeError("Binding inputs to kiln.function failed due to `Can not cast %r to Literal[%r]`. "
                                "Received args: %r and kwargs: %r for signature: %s."
                                % (v, s, tuple(args), kwargs, self.function_type))

    def __repr__(self):
        return "<ConcreteFunction %s at 0x%X>" % (self.function_type, id(self))

    def __str__(self):
        return "ConcreteFunction " + self.pretty_printed_signature()


_atomic_numbers = itertools.count(1)


class _AtomicFunction:
    """A concrete function's graph, called with flat tensors (ConcreteFunction.inference_fn)."""

    def __init__(self, concrete):
        self._concrete = concrete

    @property
    def name(self):
        c = self._concrete
        if c._inference_name is None:  # TensorFlow's form, numbered in order of asking
            c._inference_name = "__inference_%s_%d" % (c.name, next(_atomic_numbers))
        return c._inference_name.encode()

    def __call__(self, *tensors):
        tensors = [t if isinstance(t, Tensor) else convert_to_tensor(t) for t in tensors]
        return self._concrete._rebuild(self._concrete._core.call(tensors))

    def __str__(self):
        specs = self._concrete._core.input_specs()
        params = ", ".join("%s: %r" % (name or "arg%d" % i, TensorSpec(_shape_of(dims), dtype))
                           for i, (dims, dtype, name) in enumerate(specs))
        return "<AtomicFunction> %s(%s) -> %s" % (self.name.decode(), params, self._concrete._output_text())


class _FunctionType:
    """What ConcreteFunction.function_type returns: its text is TensorFlow's."""

    def __init__(self, text):
        self._text = text

    def __str__(self):
        return self._text

    __repr__ = __str__


class _CallSpec:
    """A Function's parameters, for its concrete functions' calls and signatures."""

    __slots__ = ("_name", "_signature", "_params")

    def __init__(self, function):
        self._name, self._signature, self._params = function._name, function._signature, function._params

    _canonicalize = None  # set below: the same code as Function's
    _unbind = None


def _unnamed(x):
    """Signatures print their specs without names, as TensorFlow's do."""
    return _map_leaves(x, lambda s: TensorSpec(s.shape, s.dtype) if isinstance(s, TensorSpec) else s)


def _shape_of(dims):
    from ._shape import TensorShape

    return TensorShape(dims)


# -- the Function object ---------------------------------------------------------------------

_WARN_WINDOW = 10
_WARN_THRESHOLD = 5
_MAX_WARNINGS = 2


class Function:
    """A Python callable traced into graphs, one per input signature (tf.function's Function)."""

    def __init__(self, python_function, name=None, input_signature=None, autograph=True, reduce_retracing=False,
                 jit_compile=None):
        if not callable(python_function):
            raise TypeError("kiln.function expects a callable, got %r" % (python_function,))
        self._python_function = python_function
        self._name = name or getattr(python_function, "__name__", type(python_function).__name__)
        self._autograph = autograph
        self._reduce_retracing = bool(reduce_retracing)
        self._jit_compile = jit_compile
        self._signature = inspect.signature(python_function)
        self._params = list(self._signature.parameters.values())
        simple = all(p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD) for p in self._params)
        self._fast_arity = len(self._params) if simple else -1
        self._names = tuple(p.name for p in self._params)
        self._input_signature = None
        if input_signature is not None:
            self._input_signature = _check_input_signature(input_signature, self._params)
            self._fast_arity = -1
        # The core reaches back through a weak reference: a strong one would be a cycle through C++.
        self._core = _core.FunctionCore(functools.partial(_trace_through, weakref.ref(self)), self._name,
                                        list(self._names), self._reduce_retracing)
        self._converted = None
        self._bound = weakref.WeakKeyDictionary()
        self._traced_calls = collections.deque()
        self._warnings = 0
        functools.update_wrapper(self, python_function, updated=())

    # -- calling
    def __call__(self, *args, **kwargs):
        if _REPLICAS_RUNNING[0] and _replica_local.__dict__.get("replica") is not None:
            return self._call_in_replica(args, kwargs)
        if not kwargs and len(args) == self._fast_arity:
            result = self._core.call(args, self._names)
        else:
            canonical = self._canonicalize(args, kwargs)
            if self._input_signature is not None:
                return self._call_with_signature(canonical, args, kwargs)
            result = self._core.call(canonical, self._names)
        if result is NotImplemented:
            return self._call_directly(args, kwargs)
        return result

    def _call_in_replica(self, args, kwargs):
        """A MirroredStrategy's replica: its variables' local copies and its replica id are Python
        state, so the function runs directly (TensorFlow traces it once per replica). It is also
        traced once outside the replica (the first copies, no replica id), as TensorFlow saves
        a function used in replicas: what a SavedModel of it holds."""
        replica = _replica_local.replica
        _replica_local.replica = None
        try:
            self.get_concrete_function(*args, **kwargs)
        finally:
            _replica_local.replica = replica
        return self._python_function(*args, **kwargs)

    def _call_directly(self, args, kwargs):
        """Functions run eagerly, or this call is inside another trace (inlined there, converted
        by AutoGraph as the outer function is), or an eager tape records it."""
        if _core.tracing_active() and not _core.functions_run_eagerly():
            return self._traced_callable()(*args, **kwargs)
        return self._python_function(*args, **kwargs)

    def _canonicalize(self, args, kwargs):
        """The value of every parameter, in order (defaults applied): the call as the key sees it."""
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError("%s: %s" % (self._name, e)) from None
        bound.apply_defaults()
        return tuple(bound.arguments[p.name] if p.kind is not _P.VAR_POSITIONAL else tuple(bound.arguments[p.name])
                     for p in self._params)

    def _unbind(self, canonical):
        """Positional and keyword arguments for the Python function from canonical values."""
        args, kwargs = [], {}
        for p, v in zip(self._params, canonical):
            if p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD):
                args.append(v)
            elif p.kind is _P.VAR_POSITIONAL:
                args.extend(v)
            elif p.kind is _P.KEYWORD_ONLY:
                kwargs[p.name] = v
            else:
                kwargs.update(v)
        return args, kwargs

    # -- input_signature
    def _call_with_signature(self, canonical, args, kwargs):
        if _core.call_directly_now():
            return self._call_directly(args, kwargs)
        tensors = _bind_to_signature(self._name, self._input_signature, canonical, self._params)
        concrete = self._signature_concrete()
        return _rebuild(concrete._structure, concrete._core.call(tensors))

    def _signature_concrete(self):
        def rest(p):  # a parameter past the signature: its default, or nothing for *args/**kwargs
            return () if p.kind is _P.VAR_POSITIONAL else {} if p.kind is _P.VAR_KEYWORD else p.default

        grouped = _signature_by_param(self._input_signature, self._params)
        specs = tuple(g if g is not _NOT_IN_SIGNATURE else rest(p) for g, p in zip(grouped, self._params))
        return self._core.concrete(specs, self._names)

    # -- tracing
    def _traced_callable(self):
        if not self._autograph:
            return self._python_function
        if self._converted is None:
            from . import autograph

            self._converted = autograph.to_graph(self._python_function, recursive=True)
        return self._converted

    def _trace(self, canonical, placeholders, call_index):
        self._note_trace(call_index)
        it = iter(placeholders)
        traced = _map_leaves(canonical, lambda leaf: _traced_leaf(leaf, next(it)))
        it = iter(placeholders)
        structured_input = _map_leaves(canonical, lambda leaf: _input_spec(leaf, next(it)))
        args, kwargs = self._unbind(traced)
        from ._variable import creation

        outer, creation.count = getattr(creation, "count", 0), 0
        try:
            result = self._traced_callable()(*args, **kwargs)
        finally:
            made, creation.count = creation.count, outer
        if made and self._core.tracing_count() == 0:
            self._trace_again_without_creating(canonical)
        tensors, structure = _flatten_outputs(result)
        single = type(structure) is _Slot and structure.wrap is None  # a composite result is rebuilt
        return tensors, ConcreteFunction(self, structured_input, structure, single)

    def _trace_again_without_creating(self, canonical):
        """The first trace made variables: trace once more, in a scratch core, with creation
        forbidden (TensorFlow's check that later calls would not make new ones)."""
        from ._variable import creation

        def trace(canonical, placeholders, call_index):
            it = iter(placeholders)
            args, kwargs = self._unbind(_map_leaves(canonical, lambda leaf: _traced_leaf(leaf, next(it))))
            creation.forbidden = True
            try:
                result = self._traced_callable()(*args, **kwargs)
            finally:
                creation.forbidden = False
            tensors, structure = _flatten_outputs(result)
            return tensors, ConcreteFunction(self, canonical, structure, type(structure) is _Slot)

        _core.FunctionCore(trace, self._name, list(self._names), False).concrete(canonical, self._names)

    def _note_trace(self, call_index):
        """TensorFlow's warning when most recent calls traced (at most twice per function)."""
        calls = self._traced_calls
        calls.append(call_index)
        while calls and calls[0] <= call_index - _WARN_WINDOW:
            calls.popleft()
        if len(calls) >= _WARN_THRESHOLD and self._warnings < _MAX_WARNINGS:
            self._warnings += 1
            _logger.warning(
                "%d out of the last %d calls to %r triggered kiln.function retracing. Tracing is expensive and the "
                "excessive number of tracings could be due to (1) creating @kiln.function repeatedly in a loop, "
                "(2) passing tensors with different shapes, (3) passing Python objects instead of tensors. For "
                "(1), please define your @kiln.function outside of the loop. For (2), @kiln.function has "
                "reduce_retracing=True option that can avoid unnecessary retracing. For (3), see why each trace "
                "happened with experimental_trace_log().", len(calls), min(call_index, _WARN_WINDOW),
                self._python_function)

    # -- the rest of tf.function's surface
    @property
    def python_function(self):
        return self._python_function

    @property
    def input_signature(self):
        return self._input_signature

    def get_concrete_function(self, *args, **kwargs):
        if self._input_signature is not None:
            if args or kwargs:
                canonical = self._canonicalize(args, kwargs)
                _bind_to_signature(self._name, self._input_signature, canonical, self._params, specs_ok=True)
            return self._signature_concrete()
        if not args and not kwargs and self._params:
            raise ValueError("get_concrete_function() of %s needs its arguments (tensors or kiln.TensorSpec) or "
                             "an input_signature" % self._name)
        return self._core.concrete(self._canonicalize(args, kwargs), self._names)

    def experimental_get_tracing_count(self):
        return self._core.tracing_count()

    def experimental_trace_log(self):
        """Why each trace happened (kiln's own): one line per trace, in order."""
        return list(self._core.trace_log())

    def pretty_printed_concrete_signatures(self, verbose=True):
        return "\n\n".join(cf.pretty_printed_signature(verbose) for cf in self._core.records())

    def _list_all_concrete_functions(self):
        return list(self._core.records())

    def __get__(self, instance, owner):
        """A method: one Function per instance (its own traces), as TensorFlow does."""
        if instance is None:
            return self
        try:
            bound = self._bound.get(instance)
        except TypeError:
            bound = None
        if bound is None:
            bound = Function(self._python_function.__get__(instance, owner), name=self._name,
                             input_signature=self._input_signature, autograph=self._autograph,
                             reduce_retracing=self._reduce_retracing, jit_compile=self._jit_compile)
            try:
                self._bound[instance] = bound
            except TypeError:
                pass  # not weakly referenceable: a fresh Function per access
        return bound

    def _trackable_children(self, save_type="checkpoint", **kwargs):
        """TensorFlow's tracking protocol: a checkpoint sees nothing below a function; any other
        save type sees its traces, trace_0, trace_1, ... (what a SavedModel saves of it)."""
        del kwargs
        if save_type == "checkpoint":
            return {}
        return {"trace_%d" % i: cf for i, cf in enumerate(self._list_all_concrete_functions())}

    def __repr__(self):
        return "<kiln.Function %s at 0x%X>" % (self._name, id(self))


def _trace_through(function_ref, canonical, placeholders, call_index):
    return function_ref()._trace(canonical, placeholders, call_index)


_CallSpec._canonicalize = Function._canonicalize
_CallSpec._unbind = Function._unbind


def _placeholder_name(t):
    try:
        return t.name.split(":")[0]
    except (AttributeError, ValueError):
        return None


def _check_input_signature(signature, params):
    if not isinstance(signature, (list, tuple)):
        raise TypeError("input_signature must be either a tuple or a list, got %s." % type(signature))
    for leaf in _leaves(signature):
        if not isinstance(leaf, TensorSpec):
            raise TypeError("input_signature must be a possibly nested sequence of TensorSpec objects, got "
                            "invalid args %r with type %s." % (leaf, type(leaf)))
    positional = [p for p in params if p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)]
    if len(signature) > len(positional) and not any(p.kind is _P.VAR_POSITIONAL for p in params):
        raise TypeError("input_signature has %d entries but the function takes %d positional arguments"
                        % (len(signature), len(positional)))
    return tuple(signature)


def _leaves(x):
    if isinstance(x, (list, tuple)):
        for v in x:
            yield from _leaves(v)
    elif isinstance(x, dict):
        for k in sorted(x):
            yield from _leaves(x[k])
    else:
        yield x


_NOT_IN_SIGNATURE = object()


def _signature_by_param(signature, params):
    """The input_signature's entries per parameter, as TensorFlow binds them: one per positional
    parameter in order, the rest as a tuple for *args; _NOT_IN_SIGNATURE for the others."""
    out, at = [], 0
    for p in params:
        if p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD) and at < len(signature):
            out.append(signature[at])
            at += 1
        elif p.kind is _P.VAR_POSITIONAL and at < len(signature):
            out.append(tuple(signature[at:]))
            at = len(signature)
        else:
            out.append(_NOT_IN_SIGNATURE)
    return out


def _bind_to_signature(name, signature, canonical, params, specs_ok=False):
    """The flat tensors of a call under an input_signature (TensorFlow's errors when they do not fit)."""
    grouped = _signature_by_param(signature, params)
    def extra(value, p):  # an argument beyond the signature: neither a default nor an empty *args/**kwargs
        if p.kind is _P.VAR_POSITIONAL:
            return len(value) > 0
        if p.kind is _P.VAR_KEYWORD:
            return bool(value)
        return value is not p.default

    if any(g is _NOT_IN_SIGNATURE and extra(c, p) for g, c, p in zip(grouped, canonical, params)):
        raise TypeError("%s has an input_signature of %d arguments; it was called with more" % (name, len(signature)))
    tensors = []

    def bind(spec, value, path):
        if isinstance(spec, (list, tuple)):
            if not isinstance(value, (list, tuple)) or len(value) != len(spec):
                raise TypeError("%s: argument %s does not match the structure of the input_signature %r"
                                % (name, path, spec))
            for i, (s, v) in enumerate(zip(spec, value)):
                bind(s, v, "%s[%d]" % (path, i))
            return
        if isinstance(spec, dict):
            if not isinstance(value, dict) or sorted(value) != sorted(spec):
                raise TypeError("%s: argument %s does not match the structure of the input_signature %r"
                                % (name, path, spec))
            for k in sorted(spec):
                bind(spec[k], value[k], "%s[%r]" % (path, k))
            return
        if specs_ok and isinstance(value, TensorSpec):
            if not spec.is_compatible_with(value):
                raise ValueError("%s: %r is not compatible with the input_signature's %r" % (name, value, spec))
            return
        try:
            t = convert_to_tensor(value, dtype=spec.dtype)
        except (TypeError, ValueError) as e:
            raise TypeError("%s: argument %s cannot be converted to %r: %s" % (name, path, spec, e)) from None
        if not spec.shape.is_compatible_with(t.shape):
            raise TypeError("%s: argument %s with shape %s is not compatible with the input_signature's %r"
                            % (name, path, t.shape, spec))
        tensors.append(t)

    for p, spec, value in zip(params, grouped, canonical):
        if spec is not _NOT_IN_SIGNATURE:
            bind(spec, value, p.name)
    return tensors


def function(func=None, input_signature=None, autograph=True, jit_compile=None, reduce_retracing=False,
             experimental_implements=None, experimental_autograph_options=None, experimental_attributes=None,
             experimental_relax_shapes=None, experimental_compile=None, experimental_follow_type_hints=None,
             name=None):
    """tf.function: `@kiln.function`, `@kiln.function(input_signature=...)` or `kiln.function(f)`."""
    del experimental_implements, experimental_autograph_options, experimental_attributes
    del experimental_follow_type_hints
    if experimental_relax_shapes is not None:
        reduce_retracing = reduce_retracing or experimental_relax_shapes
    if experimental_compile is not None and jit_compile is None:
        jit_compile = experimental_compile

    def decorate(f):
        return Function(f, name=name, input_signature=input_signature, autograph=autograph,
                        reduce_retracing=reduce_retracing, jit_compile=jit_compile)

    return decorate if func is None else decorate(func)


del _dtypes
