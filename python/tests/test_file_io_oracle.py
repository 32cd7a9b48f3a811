"""tf.io.read_file / write_file (ops that run on every call of a function) and tf.io.gfile,
against TensorFlow in the same test, each in its own directory."""
import os

import pytest

import kiln
from conftest import errors_of


@pytest.mark.parametrize("lib", ["tf", "kiln"])
def test_read_and_write_eagerly_and_in_a_function(tf, tmp_path, lib):
    m = tf if lib == "tf" else kiln
    path = str(tmp_path / lib / "deeper" / "data.bin")
    m.io.write_file(path, b"one\x00two")  # makes the directories
    assert m.io.read_file(path).numpy() == b"one\x00two"
    read = m.function(lambda p: m.io.read_file(p), autograph=False)
    assert read(m.constant(path)).numpy() == b"one\x00two"
    m.io.write_file(path, "changed")
    assert read(m.constant(path)).numpy() == b"changed"  # read when called, not when traced

    def write(p, s):
        m.io.write_file(p, s)

    m.function(write, autograph=False)(m.constant(path), m.constant("from a function"))
    assert open(path, "rb").read() == b"from a function"
    assert m.io.read_file(path).dtype == m.string and m.io.read_file(path).shape == ()


@pytest.mark.parametrize("case", ["missing", "directory", "not_scalar"])
def test_errors_are_tensorflows(tf, tmp_path, case):
    target = {"missing": str(tmp_path / "missing"), "directory": str(tmp_path)}.get(case)
    if case == "not_scalar":
        ours, theirs = errors_of(lambda m: m.io.read_file([str(tmp_path), str(tmp_path)]), tf)
        return
    ours, theirs = errors_of(lambda m: m.io.read_file(target), tf)
    assert str(theirs).split("}} ")[-1].split(" [Op")[0] == str(ours)


def test_gfile(tf, tmp_path):
    for m in (tf, kiln):
        root = str(tmp_path / m.__name__)
        m.io.gfile.makedirs(os.path.join(root, "a", "b"))
        with m.io.gfile.GFile(os.path.join(root, "a", "f.txt"), "w") as f:
            f.write("line 1\nline 2\n")
        with m.io.gfile.GFile(os.path.join(root, "a", "f.txt")) as f:
            assert f.readlines() == ["line 1\n", "line 2\n"]
        assert m.io.gfile.listdir(os.path.join(root, "a")) == ["b", "f.txt"] or \
            sorted(m.io.gfile.listdir(os.path.join(root, "a"))) == ["b/", "f.txt"]
        assert [os.path.basename(p) for p in m.io.gfile.glob(os.path.join(root, "a", "*.txt"))] == ["f.txt"]
        assert m.io.gfile.isdir(os.path.join(root, "a", "b")) and m.io.gfile.exists(os.path.join(root, "a", "f.txt"))
        m.io.gfile.copy(os.path.join(root, "a", "f.txt"), os.path.join(root, "g.txt"))
        with pytest.raises(m.errors.AlreadyExistsError):
            m.io.gfile.copy(os.path.join(root, "a", "f.txt"), os.path.join(root, "g.txt"))
        m.io.gfile.rename(os.path.join(root, "g.txt"), os.path.join(root, "h.txt"))
        assert m.io.gfile.stat(os.path.join(root, "h.txt")).length == 14
        m.io.gfile.remove(os.path.join(root, "h.txt"))
        with pytest.raises(m.errors.NotFoundError):
            m.io.gfile.remove(os.path.join(root, "h.txt"))
        m.io.gfile.rmtree(os.path.join(root, "a"))
        assert not m.io.gfile.exists(os.path.join(root, "a"))
