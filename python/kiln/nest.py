"""kiln.nest: tf.nest's structure utilities. Lists, tuples, namedtuples and mappings nest
(mappings in sorted key order, an OrderedDict too, rebuilt in its own order); everything else,
None and strings included, is a leaf."""
import collections.abc

__all__ = ["flatten", "pack_sequence_as", "map_structure", "assert_same_structure", "is_nested"]


def is_nested(seq):
    return isinstance(seq, (list, tuple, collections.abc.Mapping))


def _children(x):
    if isinstance(x, collections.abc.Mapping):
        return [x[k] for k in sorted(x)]
    return list(x)


def flatten(structure, expand_composites=False):
    if not is_nested(structure):
        return [structure]
    out = []
    for child in _children(structure):
        out.extend(flatten(child))
    return out


def _rebuild(structure, values):
    """structure's shape with leaves taken from the iterator `values`."""
    if not is_nested(structure):
        return next(values)
    if isinstance(structure, collections.abc.Mapping):
        filled = {k: _rebuild(structure[k], values) for k in sorted(structure)}
        return type(structure)((k, filled[k]) for k in structure)
    items = [_rebuild(child, values) for child in structure]
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        return type(structure)(*items)
    return type(structure)(items)


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    flat_sequence = list(flat_sequence)
    atoms = len(flatten(structure))
    if atoms != len(flat_sequence):
        raise ValueError("Could not pack sequence. Structure had %d atoms, but flat_sequence had %d items.  "
                         "Structure: %s, flat_sequence: %s." % (atoms, len(flat_sequence), structure, flat_sequence))
    return _rebuild(structure, iter(flat_sequence))


def _kind(x):
    if isinstance(x, collections.abc.Mapping):
        return collections.abc.Mapping
    return type(x)


def _check(a, b, check_types):
    if is_nested(a) != is_nested(b):
        raise ValueError("The two structures don't have the same nested structure.\n\nFirst structure: %s\n\n"
                         "Second structure: %s" % (a, b))
    if not is_nested(a):
        return
    if check_types and _kind(a) is not _kind(b):
        raise TypeError("The two structures don't have the same nested structure.\n\nFirst structure: %s\n\n"
                        "Second structure: %s" % (a, b))
    if isinstance(a, collections.abc.Mapping) and sorted(a) != sorted(b):
        raise ValueError("The two structures don't have the same nested structure.\n\nFirst structure: %s\n\n"
                         "Second structure: %s" % (a, b))
    ca, cb = _children(a), _children(b)
    if len(ca) != len(cb):
        raise ValueError("The two structures don't have the same nested structure.\n\nFirst structure: %s\n\n"
                         "Second structure: %s" % (a, b))
    for x, y in zip(ca, cb):
        _check(x, y, check_types)


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    _check(nest1, nest2, check_types)


def map_structure(func, *structure, **kwargs):
    if not callable(func):
        raise TypeError("func must be callable, got: %s" % func)
    if not structure:
        raise ValueError("Must provide at least one structure")
    check_types = kwargs.pop("check_types", True)
    kwargs.pop("expand_composites", None)
    if kwargs:
        raise ValueError("Only valid keyword arguments are `check_types` and `expand_composites`, not: `%s`"
                         % "`, `".join(kwargs))
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    flat = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flat)])
