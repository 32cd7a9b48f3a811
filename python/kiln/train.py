"""kiln.train: TensorFlow's checkpoints without TensorFlow: tf.train.Checkpoint and
CheckpointManager (object-based, both ways), and the readers (load_checkpoint,
CheckpointReader, list_variables, load_variable, latest_checkpoint). The files are parsed by
kiln's C++ reader (include/kiln/checkpoint.h), which checks every size, offset and checksum."""
import os
import re

import numpy as np

from . import _core
from . import _dtypes
from ._example_proto import BytesList, Example, Feature, Features, FloatList, Int64List

__all__ = ["Example", "Features", "Feature", "BytesList", "FloatList", "Int64List", "CheckpointReader", "load_checkpoint", "list_variables", "load_variable", "latest_checkpoint", "Checkpoint", "TrackableView",
           "CheckpointManager"]


class CheckpointReader:
    """The tensors of one checkpoint (a prefix: <prefix>.index and its data files)."""

    def __init__(self, prefix):
        self._reader = _core.CheckpointReaderCore(os.fspath(prefix))

    def has_tensor(self, name):
        return self._reader.has_tensor(name)

    def get_tensor(self, name):
        """A writable numpy array (a numpy scalar for a 0-d tensor; bytes for a scalar string),
        as TensorFlow returns it."""
        shape = self._reader.shape(name)
        if self._reader.dtype_name(name) == "string":
            strings = self._reader.get_strings(name)
            return strings[0] if not shape else np.array(strings, dtype=object).reshape(shape)
        value = np.array(self._reader.get_tensor(name).numpy())
        return value[()] if value.ndim == 0 else value

    def get_variable_to_shape_map(self):
        return {name: list(self._reader.shape(name)) for name in self._reader.tensor_names()}

    def get_variable_to_dtype_map(self):
        """kiln dtypes; the TensorFlow dtype name (a str) for dtypes kiln lacks ('string', ...)."""
        out = {}
        for name in self._reader.tensor_names():
            dtype_name = self._reader.dtype_name(name)
            out[name] = getattr(_dtypes, dtype_name) if dtype_name in _dtypes._NAMES else dtype_name
        return out


_CHECKPOINT_STATE_LIMIT = 1 << 20  # bytes of a `checkpoint` state file we are willing to read


def _unescape(text):
    """A text-format proto string's body (C escapes) as a str."""
    def one(m):
        e = m.group(1)
        if e[0] in "01234567":
            return chr(int(e, 8))
        return {"n": "\n", "t": "\t", "r": "\r"}.get(e, e)

    return re.sub(r"\\([0-7]{1,3}|.)", one, text)


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix named by the directory's `checkpoint` state file, or None (no state file, or
    its checkpoint is gone)."""
    checkpoint_dir = os.fspath(checkpoint_dir)
    state = os.path.join(checkpoint_dir, latest_filename or "checkpoint")
    try:
        with open(state, "rb") as f:
            text = f.read(_CHECKPOINT_STATE_LIMIT).decode("utf-8", "replace")
    except OSError:
        return None
    m = re.search(r'^model_checkpoint_path:\s*"((?:[^"\\]|\\.)*)"', text, re.M)
    if not m:
        return None
    prefix = _unescape(m.group(1))
    if not os.path.isabs(prefix):
        prefix = os.path.join(checkpoint_dir, prefix)
    return prefix if os.path.exists(prefix + ".index") else None


def load_checkpoint(ckpt_dir_or_file):
    """A CheckpointReader for a checkpoint prefix, or for the latest checkpoint of a directory."""
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        prefix = latest_checkpoint(path)
        if prefix is None:
            raise ValueError("Couldn't find 'checkpoint' file or checkpoints in given directory %s" % path)
        path = prefix
    return CheckpointReader(path)


def list_variables(ckpt_dir_or_file):
    """(name, shape) of every tensor in the checkpoint, sorted by name."""
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return [(name, shapes[name]) for name in sorted(shapes)]


def load_variable(ckpt_dir_or_file, name):
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


from ._checkpoint import Checkpoint, CheckpointManager  # noqa: E402 (it uses the reader above)
from ._tracking import TrackableView  # noqa: E402
