"""Nested structures as TensorFlow's tf.nest sees them: tuples, lists, dicts and namedtuples,
with everything else a leaf. One walker for kiln.function's arguments and outputs and for the
branches and loop variables of cond and while_loop."""


def is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def map_structure(x, leaf, sorted_dicts=False):
    """x with every leaf replaced by leaf(value). Dict values are visited in sorted key order
    when sorted_dicts (the order of call keys and flat lists); the result keeps x's key order."""
    t = type(x)
    if t is tuple:
        return tuple(map_structure(v, leaf, sorted_dicts) for v in x)
    if t is list:
        return [map_structure(v, leaf, sorted_dicts) for v in x]
    if t is dict:
        keys = sorted(x) if sorted_dicts else list(x)
        out = {k: map_structure(x[k], leaf, sorted_dicts) for k in keys}
        return {k: out[k] for k in x}
    if is_namedtuple(x):
        return t(*(map_structure(v, leaf, sorted_dicts) for v in x))
    return leaf(x)


class Slot:
    """Where flat value number `index` goes when a structure is rebuilt (through `wrap` for a
    composite value, such as a TensorArray carried as its list)."""

    __slots__ = ("index", "wrap")

    def __init__(self, index, wrap=None):
        self.index = index
        self.wrap = wrap


class Composite:
    """What tensor_of returns for a value carried as one tensor and made again by wrap(tensor)."""

    __slots__ = ("tensor", "wrap")

    def __init__(self, tensor, wrap):
        self.tensor, self.wrap = tensor, wrap


def flatten_to_slots(x, tensor_of, sorted_dicts=False):
    """(tensors, structure): tensor_of(leaf) is a tensor to collect (the leaf becomes a Slot)
    or None (the leaf stays in the structure, a Python value)."""
    tensors = []

    def leaf(v):
        t = tensor_of(v)
        if t is None:
            return v
        if type(t) is Composite:
            tensors.append(t.tensor)
            return Slot(len(tensors) - 1, t.wrap)
        tensors.append(t)
        return Slot(len(tensors) - 1)

    return tensors, map_structure(x, leaf, sorted_dicts)


def rebuild(structure, values):
    """The structure with each Slot replaced by values[slot.index]."""
    def leaf(v):
        if type(v) is not Slot:
            return v
        return values[v.index] if v.wrap is None else v.wrap(values[v.index])
    return map_structure(structure, leaf)
