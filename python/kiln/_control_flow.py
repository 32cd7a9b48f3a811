"""kiln.cond, kiln.while_loop, kiln.switch_case with Python callables (TensorFlow's).

Eagerly they run the Python branch or loop directly. Inside a trace they become If/While/Case
nodes (python/src/control_flow.cc): each branch or body is traced once as a graph function,
over flat lists of tensors; the structures of outputs and loop variables are rebuilt here."""
from . import _core
from . import _nest
from ._convert import convert_to_tensor
from ._shape import TensorShape

Tensor = _core.Tensor


def _flatten(x):
    """(tensors, structure): tuples, lists, dicts and namedtuples of tensors (or values TF
    converts: numbers, numpy arrays, variables); None stays None."""

    def tensor_of(v):
        if v is None:
            return None
        if hasattr(v, "_kiln_composite"):
            return _nest.Composite(*v._kiln_composite())
        return v._kiln_tensor() if hasattr(v, "_kiln_tensor") else convert_to_tensor(v)

    return _nest.flatten_to_slots(x, tensor_of, sorted_dicts=True)


def _same_structure(a, b):
    from ._function import _Slot

    if type(a) is _Slot or type(b) is _Slot:
        return type(a) is type(b)
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return sorted(a) == sorted(b) and all(_same_structure(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same_structure(x, y) for x, y in zip(a, b))
    return a == b


def _structure_text(s):
    from ._function import _Slot

    if type(s) is _Slot:
        return "Tensor"
    if isinstance(s, dict):
        return "{%s}" % ", ".join("%r: %s" % (k, _structure_text(v)) for k, v in s.items())
    if isinstance(s, list):
        return "[%s]" % ", ".join(_structure_text(v) for v in s)
    if isinstance(s, tuple):
        return "(%s)" % "".join(_structure_text(v) + ", " for v in s)
    return repr(s)


def _pred(pred):
    p = pred if isinstance(pred, Tensor) else convert_to_tensor(pred)
    return p


def cond(pred, true_fn=None, false_fn=None, name=None):
    """true_fn() if pred else false_fn(); a StatelessIf/If node inside a trace."""
    del name
    if not callable(true_fn):
        raise TypeError("true_fn must be callable.")
    if not callable(false_fn):
        raise TypeError("false_fn must be callable.")
    if not _core.tracing_active():
        return true_fn() if bool(pred) else false_fn()
    structures = []

    def branch(fn, which):
        def run():
            tensors, structure = _flatten(fn())
            structures.append((which, structure))
            return tensors

        return run

    from .autograph._runtime import _scalar_pred

    p = _scalar_pred(_pred(pred))
    if p.dtype.name != "bool":
        raise TypeError("pred must be a bool tensor, got %s" % p.dtype.name)
    outs = _core.build_cond(p, branch(true_fn, "true_fn"), branch(false_fn, "false_fn"))
    from ._function import _rebuild

    (_, a), (_, b) = structures
    if not _same_structure(a, b):
        raise ValueError("true_fn and false_fn arguments to tf.cond must have the same number, type, and overall "
                         "structure of return values.\n\ntrue_fn output: %s\nfalse_fn output: %s"
                         % (_structure_text(a), _structure_text(b)))
    return _rebuild(a, outs)


def switch_case(branch_index, branch_fns, default=None, name=None):
    """branch_fns[branch_index](); an out-of-range index runs `default` (or the last branch)."""
    del name
    if isinstance(branch_fns, dict):
        keys = sorted(branch_fns)
        if keys != list(range(len(keys))):
            raise ValueError("branch_fns keys must be 0..n-1 when given as a dict, got %r" % keys)
        branch_fns = [branch_fns[k] for k in keys]
    else:
        branch_fns = [f[1] if isinstance(f, tuple) else f for f in branch_fns]
    if not branch_fns:
        raise ValueError("branch_fns must not be empty")
    fns = list(branch_fns) + ([default] if default is not None else [])
    if not _core.tracing_active():
        i = int(branch_index)
        return fns[i]() if 0 <= i < len(branch_fns) else fns[-1]()
    structures = []

    def branch(fn):
        def run():
            tensors, structure = _flatten(fn())
            structures.append(structure)
            return tensors

        return run

    index = _pred(branch_index)
    if default is not None:
        # Case runs its last branch for an out-of-range index: the default is that branch.
        n = len(branch_fns)
        index = _core.where(_core.logical_and(_core.greater_equal(index, _core.zeros_like(index)),
                                              _core.less(index, _core.fill([], convert_to_tensor(n, index.dtype)))),
                            index, _core.fill([], convert_to_tensor(n, index.dtype)))
    outs = _core.build_case(index, [branch(f) for f in fns])
    from ._function import _rebuild

    for s in structures[1:]:
        if not _same_structure(structures[0], s):
            raise ValueError("All branch_fns of switch_case must return the same structure: %s vs %s"
                             % (_structure_text(structures[0]), _structure_text(s)))
    return _rebuild(structures[0], outs)


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, maximum_iterations=None, name=None):
    """while cond(*loop_vars): loop_vars = body(*loop_vars); a While node inside a trace."""
    del parallel_iterations, back_prop, swap_memory, name
    if not callable(cond):
        raise TypeError("cond must be callable.")
    if not callable(body):
        raise TypeError("body must be callable.")
    single = not isinstance(loop_vars, (list, tuple))
    packed = [loop_vars] if single else loop_vars

    def call(fn, vs):
        return fn(vs) if single else fn(*vs)

    if not _core.tracing_active():
        # As TensorFlow's eager loop: the body's result is the next loop_vars as it is.
        vs = loop_vars
        i = 0
        while (maximum_iterations is None or i < int(maximum_iterations)) and bool(call(cond, vs)):
            vs = call(body, vs)
            i += 1
        return vs
    from ._function import _rebuild

    flat, structure = _flatten(packed)
    invariants = None
    if shape_invariants is not None:
        inv_flat, _ = _flatten_shapes(shape_invariants if not single else [shape_invariants])
        invariants = [None if s.rank is None else [(-1 if d is None else d) for d in s.as_list()] for s in inv_flat]

    def rebuild(vs):
        return _rebuild(structure, vs)

    def cond_flat(vs):
        r = call(cond, rebuild(vs)[0] if single else rebuild(vs))
        return r if isinstance(r, Tensor) else convert_to_tensor(r)

    def body_flat(vs):
        out = call(body, rebuild(vs)[0] if single else rebuild(vs))
        if single or not isinstance(out, (list, tuple)):
            out = [out]
        tensors, s = _flatten(list(out) if type(structure) is list else tuple(out) if type(structure) is tuple
                              else out)
        if not _same_structure(_strip(structure), _strip(s)):
            raise ValueError("The two structures don't have the same nested structure.\n\nFirst structure: %s\n\n"
                             "Second structure: %s" % (_structure_text(structure), _structure_text(s)))
        return tensors

    max_iter = None if maximum_iterations is None else int(maximum_iterations)
    outs = _core.build_while(cond_flat, body_flat, flat, max_iter, invariants)
    result = rebuild(outs)
    return result[0] if single else result


def _strip(s):
    """A structure with list and tuple not told apart (a body may return either)."""
    from ._function import _Slot

    if type(s) is _Slot:
        return s
    if isinstance(s, dict):
        return {k: _strip(v) for k, v in s.items()}
    if isinstance(s, (list, tuple)):
        return [_strip(v) for v in s]
    return s


def _flatten_shapes(x):
    out = []

    def walk(v):
        if isinstance(v, TensorShape):
            out.append(v)
        elif isinstance(v, dict):
            for k in sorted(v):
                walk(v[k])
        elif isinstance(v, (list, tuple)) and not all(isinstance(e, (int, type(None))) for e in v):
            for e in v:
                walk(e)
        else:
            out.append(TensorShape(v))

    walk(x)
    return out, None


def group(*inputs, name=None):
    """tf.group: in TensorFlow 2 the grouped ops have already run (eagerly, or in program order
    inside a function, which keeps every effect), so there is nothing to wait for: None, as an
    eager tf.group returns."""
    del inputs, name
    return None


def no_op(name=None):
    """tf.no_op: nothing, None (an eager tf.no_op's value)."""
    del name
    return None
