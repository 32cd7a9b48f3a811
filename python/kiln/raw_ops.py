"""kiln.raw_ops: every op kiln registers, called as TensorFlow's tf.raw_ops calls it.

Nothing here is written per op: each function is generated at import from the op's registry
row (its TensorFlow input and attr names, its defaults), keyword-only as TensorFlow's raw ops
are, and runs through one generic binding (`_core.execute_op`), eagerly or as a node of the
function being traced. docs/ops.md is generated from the same rows (scripts/gen_op_docs.py).
"""
import collections
import inspect
import keyword
import re

import numpy as np

from . import _core
from ._convert import convert_to_tensor
from ._dtypes import as_dtype

_Tensor = _core.Tensor
_UNSET = object()  # an attr left to the row's default
_VARIABLE = object()  # marks the `resource` input of an op that takes a variable


def _variable(value, op_name):
    core = getattr(value, "_core", None)
    if not isinstance(core, _core.VariableCore):
        raise TypeError("%s: 'resource' must be a kiln.Variable, got %s" % (op_name, type(value).__name__))
    return core


def _snake(op_name):
    """TensorFlow's Python name of an op: AddV2 -> add_v2, Conv2D -> conv2d, TopKV2 -> top_kv2."""
    out = []
    for i, ch in enumerate(op_name):
        if ch.isupper() and i > 0:
            prev, nxt = op_name[i - 1], op_name[i + 1] if i + 1 < len(op_name) else ""
            if prev.islower() or (prev.isupper() and nxt.islower()):
                out.append("_")
        out.append(ch.lower())
    return "".join(out)


def _py_name(arg):
    return arg + "_" if keyword.iskeyword(arg) else arg


def _default(text):
    """A row's default (TensorFlow's text form) as the Python value TensorFlow's signature shows."""
    if text in ("true", "false"):
        return text == "true"
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if text.startswith('"'):
        return text[1:-1]
    if text.startswith("DT_"):
        return as_dtype({"FLOAT": "float32", "DOUBLE": "float64"}.get(text[3:], text[3:].lower()))
    if text == "[]":
        return []
    if text.startswith("[") and re.fullmatch(r"\[[-\d, ]*\]", text):
        return [int(v) for v in text[1:-1].split(",")]
    try:
        return float(str(np.float32(text)))  # a float attr is float32: its shortest text
    except ValueError:
        return _UNSET  # shapes: the row fills its own default


def _tensor(value):
    return value if isinstance(value, _Tensor) else convert_to_tensor(value)


def _attr(value):
    if isinstance(value, tuple):
        return list(value)
    try:
        return as_dtype(value) if not isinstance(value, (bool, int, float, str, list, _Tensor)) else value
    except TypeError:
        return value


def _make(op):
    name, fn_name = op["name"], _snake(op["name"])
    number_attrs = {n for _, is_list, n, _ in op["inputs"] if is_list and n}
    # (Python parameter, is list, number attr) per input; (Python parameter, attr, default) per attr.
    inputs = [(_py_name(api), is_list, n) for _, is_list, n, api in op["inputs"]]
    if op["variable_arg"]:  # TensorFlow's resource handle input: the kiln.Variable itself
        inputs.insert(0, (op["variable_arg"], False, _VARIABLE))
    attrs = [(_py_name(api), a, _default(d) if d is not None else None) for a, _, d, api in op["attrs"]
             if a not in number_attrs and a not in op["variable_attrs"]]  # those come from the variable
    # A type attr also takes a dtype's name ("int32"), as TensorFlow's raw ops do.
    type_attrs = {a for a, kind, _, _ in op["attrs"] if kind == "type"}
    required = [p for p, _, d in attrs if d is None]
    optional = [(p, d) for p, _, d in attrs if d is not None]
    params = [p for p, _, _ in inputs] + required + [p for p, _ in optional] + ["name"]
    outputs = op["outputs"]
    result = collections.namedtuple(name, outputs) if len(outputs) > 1 else None
    list_output = op["list_output"]

    def run(*args):
        values = dict(zip(params, args))
        flat, attr_values = [], {}
        for param, is_list, number_attr in inputs:
            v = values[param]
            if number_attr is _VARIABLE:
                attr_values[param] = _variable(v, name)
                continue
            if is_list:
                v = [_tensor(x) for x in v]
                if number_attr:
                    attr_values[number_attr] = len(v)
                flat.extend(v)
            else:
                flat.append(_tensor(v))
        for param, attr, _ in attrs:
            v = values[param]
            if v is not _UNSET:
                attr_values[attr] = as_dtype(v) if attr in type_attrs and isinstance(v, str) else _attr(v)
        out = _core.execute_op(name, flat, attr_values)
        if not outputs:
            return None
        if result is not None:
            return result(*out)
        return list(out) if list_output else out[0]

    # A real signature (as TensorFlow's generated functions have): Python's own messages for a
    # missing or unknown argument name the op's arguments.
    namespace = {"_run": run}
    sig = [p for p, _, _ in inputs] + required
    for i, (p, d) in enumerate(optional):
        namespace["_d%d" % i] = d
        sig.append("%s=_d%d" % (p, i))
    sig.append("name=None")
    src = "def %s(%s):\n    return _run(%s)\n" % (fn_name, ", ".join(sig), ", ".join(params))
    exec(src, namespace)  # noqa: S102: generated from the registry's identifiers only
    inner = namespace[fn_name]

    def wrapper(*args, **kwargs):
        if args:
            raise TypeError("%s only takes keyword args (possible keys: %s). Please pass these args as kwargs "
                            "instead." % (fn_name, params))
        return inner(**kwargs)

    wrapper.__signature__ = inspect.signature(inner)
    wrapper.__name__ = name
    wrapper.__qualname__ = name
    wrapper.__doc__ = _doc(op)
    return wrapper


def _doc(op):
    lines = ["TensorFlow's %s op (generated from kiln's registry row)." % op["name"], "", "Args:"]
    number_attrs = {n for _, is_list, n, _ in op["inputs"] if is_list and n}
    if op["variable_arg"]:
        lines.append("  %s: A `kiln.Variable` (TensorFlow's resource handle)." % op["variable_arg"])
    for _, is_list, _, api in op["inputs"]:
        lines.append("  %s: A %s." % (_py_name(api), "list of `Tensor`s" if is_list else "`Tensor`"))
    for a, kind, d, api in op["attrs"]:
        if a not in number_attrs and a not in op["variable_attrs"]:
            lines.append("  %s: %s%s." % (_py_name(api), kind, "" if d is None else ", default %s" % d))
    lines.append("  name: ignored (kiln names nodes itself).")
    if op["dtypes"]:
        lines += ["", "Kernels: " + ", ".join(op["dtypes"]) + "."]
    lines += ["", "Gradient: %s." % {"yes": "defined", "none": "none (not differentiable)",
                                     "missing": "not implemented"}[op["gradient"]]]
    return "\n".join(lines)


_CATALOG = [op for op in _core._op_catalog() if op["runnable"] or op["variable_arg"]]
for _op in _CATALOG:
    globals()[_op["name"]] = _make(_op)
del _op

__all__ = sorted(op["name"] for op in _CATALOG)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError("module 'kiln.raw_ops' has no attribute '%s' (TensorFlow's tf.raw_ops.%s is not "
                         "implemented in kiln)" % (name, name))
