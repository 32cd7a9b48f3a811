"""Object tracking as TensorFlow's Trackable/AutoTrackable (tf.__internal__.tracking): an object
names the objects it depends on, and checkpoints and SavedModels walk those names.

kiln's own containers (Module, Checkpoint) find their children by walking attributes; these
classes exist for libraries that subclass TensorFlow's tracking classes (Keras's layers and
variables) and call its protocol: _track_trackable, _trackable_children and the
no_automatic_dependency_tracking decorator."""
import functools


class Trackable:
    """The base of tracked objects: explicit dependencies, added with _track_trackable."""

    @property
    def _self_unconditional_dependency_names(self):
        deps = self.__dict__.get("_kiln_dependencies")
        if deps is None:
            deps = {}
            object.__setattr__(self, "_kiln_dependencies", deps)
        return deps

    def _track_trackable(self, trackable, name, overwrite=False):
        deps = self._self_unconditional_dependency_names
        if name in deps and deps[name] is not trackable and not overwrite:
            raise ValueError("Called Trackable._track_trackable() with name='%s', but a Trackable with this "
                             "name is already declared as a dependency. Names must be unique (or overwrite=True)."
                             % name)
        deps[name] = trackable
        return trackable

    def _trackable_children(self, save_type="checkpoint", **kwargs):
        del save_type, kwargs
        return dict(self._self_unconditional_dependency_names)


class AutoTrackable(Trackable):
    """Tracks every trackable value assigned to an attribute (as tf.Module and Keras layers do),
    unless assignment happens inside no_automatic_dependency_tracking."""

    def __setattr__(self, name, value):
        if getattr(self, "_self_setattr_tracking", True) and isinstance(value, Trackable) and not name.startswith(
                "_kiln_"):
            self._track_trackable(value, name, overwrite=True)
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        self._self_unconditional_dependency_names.pop(name, None)
        object.__delattr__(self, name)

    def _trackable_children(self, save_type="checkpoint", **kwargs):
        """Its explicit dependencies, then every attribute that is trackable: a Trackable, a
        kiln.Variable or Module, or a list, tuple or dict holding one (TensorFlow wraps such
        containers when they are assigned; kiln looks into them when it walks)."""
        from ._checkpoint import _trackable

        children = super()._trackable_children(save_type, **kwargs)
        for name, value in vars(self).items():
            if name in children or name.startswith("_kiln_") or name.startswith("_self_"):
                continue
            if isinstance(value, Trackable) or _trackable(value):
                children[name] = value
        return children


def no_automatic_dependency_tracking(method):
    """Runs `method` with attribute assignments on self untracked."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        previous = getattr(self, "_self_setattr_tracking", True)
        object.__setattr__(self, "_self_setattr_tracking", False)
        try:
            return method(self, *args, **kwargs)
        finally:
            object.__setattr__(self, "_self_setattr_tracking", previous)

    return wrapper


class TrackableView:
    """tf.train.TrackableView: the objects reachable from `root` as a checkpoint walks them.
    children() is a classmethod a subclass may override (Keras's export walks with
    save_type="savedmodel" that way); descendants() lists root and everything below it,
    breadth-first, each once."""

    def __init__(self, root):
        self._root = root

    @property
    def root(self):
        return self._root

    @classmethod
    def children(cls, obj, save_type="checkpoint", **kwargs):
        from ._checkpoint import _as_variable, _children_of, _trackable

        if isinstance(obj, Trackable):
            found = ((str(k), _as_variable(v)) for k, v in obj._trackable_children(save_type, **kwargs).items())
            return {k: v for k, v in found if _trackable(v)}
        return dict(_children_of(obj, save_type) or [])

    def descendants(self):
        seen, order = {id(self._root)}, [self._root]
        i = 0
        while i < len(order):
            for child in self.children(order[i]).values():
                if id(child) not in seen:
                    seen.add(id(child))
                    order.append(child)
            i += 1
        return order
