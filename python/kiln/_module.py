"""kiln.Module (tf.Module): a container whose variables are found through its attributes."""
from ._tracking import AutoTrackable
from ._variable import Variable


class Module(AutoTrackable):
    """Tracks the variables and submodules held in attributes (directly, or in lists, tuples
    and dicts), as tf.Module does: `variables`, `trainable_variables`, `submodules`. Like
    TensorFlow's, it is an AutoTrackable (tf.__internal__.tracking), so libraries that track
    Trackables (Keras's export) accept it."""

    def __init__(self, name=None):
        self._name = name or _snake(type(self).__name__)

    @property
    def name(self):
        return self._name

    @property
    def variables(self):
        return tuple(self._walk(Variable))

    @property
    def trainable_variables(self):
        return tuple(v for v in self._walk(Variable) if v.trainable)

    @property
    def non_trainable_variables(self):
        return tuple(v for v in self._walk(Variable) if not v.trainable)

    @property
    def submodules(self):
        return tuple(self._walk(Module))

    def _walk(self, kind):
        found, seen = [], {id(self)}

        def visit(v):
            if id(v) in seen:
                return
            if isinstance(v, (Variable, Module)):
                seen.add(id(v))
                if isinstance(v, kind):
                    found.append(v)
                if isinstance(v, Module):
                    for k in sorted(_attributes(v)):
                        visit(vars(v)[k])
            elif isinstance(v, dict):
                for k in sorted(v, key=str):
                    visit(v[k])
            elif isinstance(v, (list, tuple)):
                for e in v:
                    visit(e)

        for k in sorted(_attributes(self)):
            visit(vars(self)[k])
        return found


def _attributes(obj):
    """Its attribute names, without the tracking bookkeeping AutoTrackable keeps beside them."""
    return [k for k in vars(obj) if not k.startswith("_kiln_") and not k.startswith("_self_")]


def _snake(name):
    out = []
    for i, c in enumerate(name):
        if c.isupper() and i and (not name[i - 1].isupper() or (i + 1 < len(name) and name[i + 1].islower())):
            out.append("_")
        out.append(c.lower())
    return "".join(out)
