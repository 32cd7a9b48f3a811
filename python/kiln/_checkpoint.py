"""kiln.train.Checkpoint and CheckpointManager (TensorFlow's object-based checkpoints).

The objects reachable from a Checkpoint (its keyword arguments; a Module's attributes; lists,
tuples and dicts holding trackable values; a Generator's state) form TensorFlow's object
graph: each object is the child of the first object that reaches it breadth-first, and a
variable is saved under its path, "model/layer/w/.ATTRIBUTES/VARIABLE_VALUE". The graph is
written beside the tensors (C++ kiln::write_object_checkpoint), so TensorFlow restores what
kiln saves and kiln restores what TensorFlow saves, matching objects by name from the root.
A tf.data iterator is saved as its position (the elements it handed out) and restored by
replaying a new pass to it. What kiln does not do: deferred restoration (a variable created after restore() stays as it
is; restore when the objects exist), and slot variables of optimizers."""
import collections
import os
import time

from . import _core
from ._module import Module
from ._variable import Variable

_VALUE = "VARIABLE_VALUE"
# A tf.data iterator's state in kiln's checkpoints: the elements it has handed out (an int64),
# restored by replaying them. TensorFlow saves ITERATOR_STATE, a serialized variant neither
# library reads from the other.
_ITERATOR_POSITION = "KILN_ITERATOR_POSITION"


def _is_iterator(value):
    from .data._dataset import Iterator
    return isinstance(value, Iterator)


def _escape(name):
    return name.replace(".", "..").replace("/", ".S")


def _trackable(value):
    from ._tracking import Trackable

    # A Trackable is a node even with no children (and asking its children here could loop:
    # objects may refer to each other).
    if isinstance(value, (Variable, Trackable, Module, Checkpoint)) or _is_iterator(value):
        return True
    return _children_of(value) is not None


def _as_variable(value):
    """A library's variable that stands for the kiln.Variable it holds (TensorFlow's
    _should_act_as_resource_variable protocol, as Keras's variables follow it) as that
    Variable, so checkpoints and SavedModels save the state once, under the holder's name."""
    if isinstance(value, Variable) or not getattr(type(value), "_should_act_as_resource_variable", False):
        return value
    inner = getattr(value, "value", None)
    return inner if isinstance(inner, Variable) else value


def _children_of(obj, save_type="checkpoint"):
    """[(local name, child)] of a trackable object; None when obj is not a container.
    save_type ("checkpoint" or "savedmodel") is passed to the objects that ask for it
    (_tracking.Trackable._trackable_children)."""
    from ._tracking import Trackable

    if isinstance(obj, Trackable) and not isinstance(obj, (Variable, Module)):
        children = [(str(k), _as_variable(v)) for k, v in obj._trackable_children(save_type).items()]
        return [(k, v) for k, v in children if _trackable(v)]
    if isinstance(obj, Checkpoint):
        return obj._children()
    if isinstance(obj, Variable) or _is_iterator(obj):
        return []
    from ._generator import Generator
    if isinstance(obj, Generator):
        return [("_state_var", obj._state_var)]
    if isinstance(obj, Module):
        from ._module import _attributes

        return [(k, vars(obj)[k]) for k in _attributes(obj) if _trackable(vars(obj)[k])]
    if isinstance(obj, (list, tuple)):
        items = [(str(i), _as_variable(v)) for i, v in enumerate(obj)]
        items = [(k, v) for k, v in items if _trackable(v)]
        return items if items else None
    if isinstance(obj, dict):
        items = [(str(k), _as_variable(v)) for k, v in obj.items()]
        items = [(k, v) for k, v in items if _trackable(v)]
        return items if items else None
    return None


def _object_graph(root):
    """Breadth-first: (objects, node id of each object by id(), key path of each node)."""
    objects, ids, paths = [root], {id(root): 0}, [""]
    graph = []
    queue = collections.deque([root])
    while queue:
        obj = queue.popleft()
        children = []
        for name, child in _children_of(obj) or []:
            if id(child) not in ids:
                ids[id(child)] = len(objects)
                objects.append(child)
                parent_path = paths[ids[id(obj)]]
                paths.append((parent_path + "/" if parent_path else "") + _escape(name))
                queue.append(child)
            children.append((name, ids[id(child)]))
        graph.append(children)
    return objects, graph, paths


class _Status:
    """What restore()/read() return: assert_consumed, assert_existing_objects_matched,
    assert_nontrivial_match, expect_partial, run_restore_ops (TensorFlow's CheckpointLoadStatus)."""

    def __init__(self, unmatched_checkpoint, unrestored_variables, matched):
        self._unmatched_checkpoint = unmatched_checkpoint
        self._unrestored_variables = unrestored_variables
        self._matched = matched

    def assert_consumed(self):
        if self._unmatched_checkpoint:
            raise AssertionError("Unresolved object in checkpoint %s" % self._unmatched_checkpoint[0])
        self.assert_existing_objects_matched()
        return self

    def assert_existing_objects_matched(self):
        n = len(self._unrestored_variables)
        if n:
            shown = self._unrestored_variables[:10]
            raise AssertionError("Found %d Python objects that were not bound to checkpointed values, likely due to "
                                 "changes in the Python program. Showing %d of %d unmatched objects: %s"
                                 % (n, len(shown), n, shown))
        return self

    def assert_nontrivial_match(self):
        if not self._matched:
            raise AssertionError("No checkpoint values matched the objects being restored")
        return self

    def expect_partial(self):
        return self

    def run_restore_ops(self, session=None):
        return None

    def initialize_or_restore(self, session=None):
        return None


class _NothingRestored(_Status):
    def __init__(self):
        super().__init__([], [], 0)

    def assert_consumed(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being restored.")

    assert_existing_objects_matched = assert_consumed
    assert_nontrivial_match = assert_consumed


class Checkpoint:
    """tf.train.Checkpoint(**objects): save/write and restore/read their variables."""

    def __init__(self, root=None, **kwargs):
        for name, value in kwargs.items():
            if not _trackable(value):
                raise ValueError("`Checkpoint` was expecting a to be a trackable object (an object derived from "
                                 "`Trackable`), got %s. If you believe this object should be trackable (i.e. it is "
                                 "part of the TensorFlow Python API and manages state), please open an issue." % value)
        self._root = root
        self._kwargs = dict(kwargs)
        self._save_counter = None
        for name, value in kwargs.items():
            setattr(self, name, value)

    def _children(self):
        children = list(_children_of(self._root) or []) if self._root is not None else []
        children += list(self._kwargs.items())
        if self._save_counter is not None:
            children.append(("save_counter", self._save_counter))
        return children

    @property
    def save_counter(self):
        """The number of save() calls, an int64 variable saved with the checkpoint."""
        if self._save_counter is None:
            from . import _dtypes
            self._save_counter = Variable(0, dtype=_dtypes.int64, trainable=False, name="save_counter")
        return self._save_counter

    def write(self, file_prefix, options=None):
        """Writes exactly `file_prefix` (.index and .data-00000-of-00001) and returns it."""
        file_prefix = os.fspath(file_prefix)
        objects, graph, paths = _object_graph(self)
        nodes, tensors = [], []
        for i, obj in enumerate(objects):
            values = []
            if isinstance(obj, Variable):
                key = paths[i] + "/.ATTRIBUTES/" + _VALUE
                values.append((_VALUE, obj.name.rsplit(":", 1)[0], key))
                tensors.append((key, obj.read_value()))
            elif _is_iterator(obj):
                from . import _dtypes
                from ._convert import convert_to_tensor
                key = paths[i] + "/.ATTRIBUTES/" + _ITERATOR_POSITION
                values.append((_ITERATOR_POSITION, "", key))
                tensors.append((key, convert_to_tensor(obj._position(), _dtypes.int64)))
            nodes.append((graph[i], values))
        _core.write_object_checkpoint(file_prefix, nodes, tensors)
        return file_prefix

    def save(self, file_prefix, options=None):
        """Counts the save, writes `file_prefix-N` and names it in the directory's `checkpoint`
        state file (as tf.train.latest_checkpoint reads it); returns the path."""
        self.save_counter.assign_add(1)
        path = self.write("%s-%d" % (os.fspath(file_prefix), int(self.save_counter.numpy())))
        _write_state(os.path.dirname(path) or ".", path, [path], None)
        return path

    def read(self, save_path, options=None):
        return self.restore(save_path, options)

    def restore(self, save_path, options=None):
        """Assigns the values of the checkpoint's objects to the objects matching them by name
        from the root; returns a status to assert on. save_path None restores nothing."""
        if save_path is None:
            return _NothingRestored()
        save_path = os.fspath(save_path)
        from . import errors
        from .train import CheckpointReader
        try:
            reader = CheckpointReader(save_path)
        except errors.NotFoundError as e:
            raise errors.NotFoundError(
                None, None, "Error when restoring from checkpoint or SavedModel at %s: %s\nPlease double-check that "
                "the path is correct. You may be missing the checkpoint suffix (e.g. the '-1' in 'path/to/ckpt-1')."
                % (save_path, e.message)) from None
        saved = _core.read_object_graph(reader._reader)
        if any(name == "save_counter" for name, _ in saved[0][0]):
            self.save_counter  # noqa: B018: made now, so it is matched and restored
        objects, graph, _ = _object_graph(self)
        live = {0: self}
        queue = collections.deque([0])
        while queue:
            node = queue.popleft()
            children = dict(_children_of(live[node]) or [])
            for name, child_node in saved[node][0]:
                if child_node in live or name not in children:
                    continue
                live[child_node] = children[name]
                queue.append(child_node)
        names = {0: "(root)"}
        for node, (children, _) in enumerate(saved):
            for name, child in children:
                names.setdefault(child, names.get(node, "(root)") + "." + name)
        unmatched, matched, restored = [], 0, set()
        for node, (children, values) in enumerate(saved):
            obj = live.get(node)
            for attr, _, key in values:
                if isinstance(obj, Variable) and attr == _VALUE:
                    obj.assign(reader.get_tensor(key))
                    restored.add(id(obj))
                    matched += 1
                elif _is_iterator(obj) and attr == _ITERATOR_POSITION:
                    obj._restore_position(int(reader.get_tensor(key)))
                    restored.add(id(obj))
                    matched += 1
            if obj is None:
                unmatched.append("%s: %s" % (names.get(node, "node %d" % node),
                                              ", ".join(key for _, _, key in values) or "no values"))
        unrestored = [o for o in objects if (isinstance(o, Variable) or _is_iterator(o)) and id(o) not in restored]
        return _Status(unmatched, unrestored, matched)


def _quote(text):
    return '"%s"' % text.replace("\\", "\\\\").replace('"', '\\"')


def _write_state(directory, latest, paths, timestamps, preserved=0.0):
    """The `checkpoint` text proto (CheckpointState), paths relative to its directory."""
    rel = [os.path.relpath(p, directory) for p in paths]
    lines = ["model_checkpoint_path: %s" % _quote(os.path.relpath(latest, directory))]
    lines += ["all_model_checkpoint_paths: %s" % _quote(p) for p in rel]
    if timestamps is not None:  # a CheckpointManager's file has them; Checkpoint.save's not
        lines += ["all_model_checkpoint_timestamps: %r" % t for t in timestamps]
        lines.append("last_preserved_timestamp: %r" % preserved)
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, ".checkpoint.tmp")
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, os.path.join(directory, "checkpoint"))


def _read_state(directory):
    import re
    from .train import _CHECKPOINT_STATE_LIMIT, _unescape
    try:
        with open(os.path.join(directory, "checkpoint"), "rb") as f:
            text = f.read(_CHECKPOINT_STATE_LIMIT).decode("utf-8", "replace")
    except OSError:
        return [], []
    paths = [_unescape(p) for p in re.findall(r'^all_model_checkpoint_paths:\s*"((?:[^"\\]|\\.)*)"', text, re.M)]
    stamps = [float(t) for t in re.findall(r"^all_model_checkpoint_timestamps:\s*([0-9.eE+-]+)", text, re.M)]
    paths = [p if os.path.isabs(p) else os.path.join(directory, p) for p in paths]
    if len(stamps) != len(paths):
        stamps = [time.time()] * len(paths)
    return paths, stamps


class CheckpointManager:
    """tf.train.CheckpointManager: numbered saves in a directory, keeping the newest
    max_to_keep (None: all)."""

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None, init_fn=None):
        if not isinstance(checkpoint, Checkpoint):
            raise TypeError("CheckpointManager needs a kiln.train.Checkpoint, got %r" % (checkpoint,))
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError("Expected a positive integer or `None` for `max_to_keep`, got %d." % max_to_keep)
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._init_fn = init_fn
        paths, stamps = _read_state(self._directory)
        kept = [(p, t) for p, t in zip(paths, stamps) if os.path.exists(p + ".index")]
        self._kept = collections.OrderedDict(kept)

    @property
    def directory(self):
        return self._directory

    @property
    def checkpoints(self):
        return list(self._kept)

    @property
    def latest_checkpoint(self):
        from .train import latest_checkpoint
        return latest_checkpoint(self._directory)

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        self._checkpoint.save_counter.assign_add(1)
        number = int(self._checkpoint.save_counter.numpy()) if checkpoint_number is None else int(checkpoint_number)
        path = self._checkpoint.write("%s-%d" % (self._prefix, number))
        self._kept.pop(path, None)
        self._kept[path] = time.time()
        while self._max_to_keep is not None and len(self._kept) > self._max_to_keep:
            old, _ = self._kept.popitem(last=False)
            for name in os.listdir(os.path.dirname(old) or "."):
                if name == os.path.basename(old) + ".index" or name.startswith(os.path.basename(old) + ".data-"):
                    os.remove(os.path.join(os.path.dirname(old) or ".", name))
        _write_state(self._directory, path, list(self._kept), list(self._kept.values()))
        return path

    def restore_or_initialize(self):
        latest = self.latest_checkpoint
        if latest is not None:
            self._checkpoint.restore(latest)
            return latest
        if self._init_fn is not None:
            self._init_fn()
        return None
