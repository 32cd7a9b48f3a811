"""kiln.train.Checkpoint and CheckpointManager against TensorFlow's in the same test: each
framework restores what the other saves, with the same keys, state files and errors."""
import os

import numpy as np
import pytest

import kiln
from conftest import errors_of


def _net(m):
    class Net(m.Module):
        def __init__(self):
            super().__init__()
            self.l1 = m.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
            self.layers = [m.Variable([1.0, 2.0]), m.Variable(3), m.Variable(np.float64(4.5))]
            self.table = {"bias": m.Variable(0.5), "skip": 1}
            self.shared = self.layers[0]  # one object, saved once
    return Net()


def _save(m, directory):
    ck = m.train.Checkpoint(model=_net(m), step=m.Variable(7, dtype=m.int64))
    saved = ck.save(os.path.join(directory, "ck"))
    written = ck.write(os.path.join(directory, "w"))
    manager = m.train.CheckpointManager(ck, os.path.join(directory, "m"), max_to_keep=2)
    last = [manager.save() for _ in range(3)][-1]
    return saved, written, manager.checkpoints, last


def _restore(m, path):
    net = _net(m)
    for v in net.variables:
        v.assign(v * 0)
    ck = m.train.Checkpoint(model=net, step=m.Variable(0, dtype=m.int64))
    ck.restore(path).assert_consumed()
    return [v.numpy().tolist() for v in net.variables] + [int(ck.step.numpy()), int(ck.save_counter.numpy())]


@pytest.mark.parametrize("writer,reader", [("tf", "kiln"), ("kiln", "tf"), ("kiln", "kiln")])
def test_each_restores_what_the_other_saves(tf, tmp_path, writer, reader):
    frameworks = {"tf": tf, "kiln": kiln}
    w, r = frameworks[writer], frameworks[reader]
    ours = [os.path.relpath(p, tmp_path) for p in _save(w, str(tmp_path))[:2]]
    theirs_dir = tmp_path / "reference"
    theirs = _save(tf, str(theirs_dir))
    assert ours == [os.path.relpath(p, theirs_dir) for p in theirs[:2]]
    saved, written, kept, last = _save(w, str(tmp_path / "again"))
    assert [os.path.relpath(p, tmp_path / "again") for p in kept] == ["m/ckpt-3", "m/ckpt-4"]
    assert sorted(os.listdir(tmp_path / "again" / "m")) == sorted(os.listdir(theirs_dir / "m"))
    for path in (saved, written, last):
        assert _restore(r, path) == _restore(tf, os.path.join(theirs_dir, os.path.relpath(path, tmp_path / "again")))
    assert tf.train.list_variables(saved) == kiln.train.list_variables(saved)
    assert open(tmp_path / "again" / "checkpoint").read() == open(theirs_dir / "checkpoint").read()
    assert kiln.train.latest_checkpoint(str(tmp_path / "again" / "m")) == last


def test_manager_picks_up_an_existing_directory_and_restore_or_initialize(tf, tmp_path):
    for m, sub in ((tf, "t"), (kiln, "k")):
        directory = str(tmp_path / sub)
        v = m.Variable(1.0)
        manager = m.train.CheckpointManager(m.train.Checkpoint(v=v), directory, max_to_keep=3)
        assert manager.restore_or_initialize() is None
        manager.save()
        v.assign(5.0)
        manager.save()
        v2 = m.Variable(0.0)
        again = m.train.CheckpointManager(m.train.Checkpoint(v=v2), directory, max_to_keep=3)
        assert [os.path.basename(p) for p in again.checkpoints] == ["ckpt-1", "ckpt-2"]
        assert again.restore_or_initialize().endswith("ckpt-2") and v2.numpy() == 5.0


def _partial(m, directory):
    ck = m.train.Checkpoint(v=m.Variable(1.0))
    return ck.save(os.path.join(directory, "ck"))


CASES = [
    ("python_object", lambda m, path: m.train.Checkpoint(a=1)),
    ("unmatched_python_variable",
     lambda m, path: m.train.Checkpoint(v=m.Variable(0.0), w=m.Variable(2.0)).restore(path).assert_consumed()),
    ("unresolved_checkpoint_value", lambda m, path: m.train.Checkpoint().restore(path).assert_consumed()),
    ("nothing_restored", lambda m, path: m.train.Checkpoint().restore(None).assert_consumed()),
    ("missing_prefix", lambda m, path: m.train.Checkpoint().restore(path + "-nope")),
    ("max_to_keep_zero", lambda m, path: m.train.CheckpointManager(m.train.Checkpoint(), path, max_to_keep=0)),
]


@pytest.mark.parametrize("name,call", CASES, ids=[c[0] for c in CASES])
def test_errors_match_tensorflow(tf, tmp_path, name, call):
    path = _partial(tf, str(tmp_path))
    ours, theirs = errors_of(lambda m: call(m, path), tf)
    first = str(theirs).replace("tf.", "kiln.").split(":")[0].split("[<")[0]
    assert str(ours).startswith(first), (str(ours), first)
    # expect_partial silences nothing kiln would print, and lets a partial restore pass
    kiln.train.Checkpoint().restore(path).expect_partial()


def test_a_hostile_object_graph_is_a_clean_error(tmp_path):
    prefix = str(tmp_path / "bad")
    kiln._core.write_checkpoint(prefix, [("_CHECKPOINTABLE_OBJECT_GRAPH", kiln.constant(b"\x0a\x05garbage"))])
    with pytest.raises(kiln.errors.DataLossError):
        kiln.train.Checkpoint(v=kiln.Variable(1.0)).restore(prefix)
    kiln._core.write_checkpoint(prefix, [("v", kiln.constant(1.0))])
    with pytest.raises(kiln.errors.NotFoundError, match="no object graph"):
        kiln.train.Checkpoint(v=kiln.Variable(1.0)).restore(prefix)
    with pytest.raises(kiln.errors.InvalidArgumentError, match="child"):
        kiln._core.write_object_checkpoint(prefix, [([("x", 5)], [])], [])
