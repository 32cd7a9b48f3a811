"""TensorFlow's checkpoint format (TensorBundle), both ways, with TensorFlow in the same test:
kiln reads what TensorFlow writes (tf.train.Checkpoint, CheckpointManager, raw SaveV2 with
every dtype, string tensors, an index of several blocks), and TensorFlow reads what kiln
writes. Hostile files are in tests/io/checkpoint_test.cc (C++)."""
import os

import numpy as np
import pytest

import kiln
from kiln import _core

RNG = np.random.default_rng(7)

# One array per dtype kiln has, with edge values (signed zero, denormal, extremes).
ARRAYS = {
    "f32": np.array([[1.5, -0.0], [3e-42, np.float32(3.4e38)]], np.float32),
    "f64": np.array([1e300, -2.5, np.nan], np.float64),
    "i32": np.array([-7, 2**31 - 1, 0], np.int32).reshape(3, 1),
    "i64": np.array(2**40, np.int64),
    "flags": np.array([True, False, True]),
    "empty": np.zeros((0, 4), np.float32),
    "big": RNG.standard_normal(1 << 18).astype(np.float32),
}


def assert_same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


def test_kiln_reads_what_tensorflow_saves_with_save_v2(tf, tmp_path):
    prefix = str(tmp_path / "raw")
    strings = np.array([[b"", b"kiln"], [b"\x00\xff", b"x" * 300]], dtype=object)
    names = list(ARRAYS) + ["strings", "scalar_string"]
    tensors = [tf.constant(a) for a in ARRAYS.values()] + [tf.constant(strings), tf.constant(b"one")]
    tf.raw_ops.SaveV2(prefix=prefix, tensor_names=names, shape_and_slices=[""] * len(names), tensors=tensors)
    mine, theirs = kiln.train.load_checkpoint(prefix), tf.train.load_checkpoint(prefix)
    assert mine.get_variable_to_shape_map() == theirs.get_variable_to_shape_map()
    assert kiln.train.list_variables(prefix) == tf.train.list_variables(prefix)
    dtypes = mine.get_variable_to_dtype_map()
    for name, dtype in theirs.get_variable_to_dtype_map().items():
        assert (dtypes[name] if isinstance(dtypes[name], str) else dtypes[name].name) == dtype.name
    for name in ARRAYS:
        assert_same_bits(mine.get_tensor(name), theirs.get_tensor(name))
        assert type(mine.get_tensor(name)) is type(theirs.get_tensor(name))  # numpy scalar for 0-d
    assert mine.get_tensor("strings").tolist() == theirs.get_tensor("strings").tolist()
    assert mine.get_tensor("scalar_string") == theirs.get_tensor("scalar_string") == b"one"


def test_kiln_reads_a_tensorflow_training_checkpoint(tf, tmp_path):
    step = tf.Variable(3)
    dense = tf.Module()
    dense.kernel = tf.Variable(RNG.standard_normal((4, 3)).astype(np.float32))
    dense.bias = tf.Variable(np.zeros(3, np.float64))
    ckpt = tf.train.Checkpoint(step=step, dense=dense)
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path / "run"), max_to_keep=2)
    manager.save()
    step.assign(4)
    saved = manager.save()
    assert kiln.train.latest_checkpoint(str(tmp_path / "run")) == tf.train.latest_checkpoint(str(tmp_path / "run"))
    assert kiln.train.latest_checkpoint(str(tmp_path / "run")) == saved
    # A directory means its latest checkpoint, as in TensorFlow.
    mine, theirs = kiln.train.load_checkpoint(str(tmp_path / "run")), tf.train.load_checkpoint(saved)
    assert sorted(mine.get_variable_to_shape_map()) == sorted(theirs.get_variable_to_shape_map())
    for name in theirs.get_variable_to_shape_map():
        assert np.array_equal(np.asarray(mine.get_tensor(name)), np.asarray(theirs.get_tensor(name)))
    assert kiln.train.load_variable(saved, "step/.ATTRIBUTES/VARIABLE_VALUE") == 4
    # The object graph (a serialized TrackableObjectGraph) comes back byte for byte.
    assert mine.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH") == theirs.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH")


def test_an_index_of_several_blocks(tf, tmp_path):
    # 4000 entries with long names: the index is larger than TensorFlow's 256 KiB block.
    prefix = str(tmp_path / "many")
    names = ["model/layer_%04d/%s/.ATTRIBUTES/VARIABLE_VALUE" % (i, "k" * 60) for i in range(4000)]
    tf.raw_ops.SaveV2(prefix=prefix, tensor_names=names, shape_and_slices=[""] * len(names),
                      tensors=[tf.constant(float(i)) for i in range(len(names))])
    assert os.path.getsize(prefix + ".index") > 262144
    reader = kiln.train.load_checkpoint(prefix)
    assert len(reader.get_variable_to_shape_map()) == 4000
    assert reader.get_tensor(names[3999]) == np.float32(3999)


def test_tensorflow_reads_what_kiln_writes(tf, tmp_path):
    prefix = str(tmp_path / "sub" / "mine")  # the directory is created
    _core.write_checkpoint(prefix, [(name, kiln.constant(a)) for name, a in ARRAYS.items()])
    theirs = tf.train.load_checkpoint(prefix)
    assert theirs.get_variable_to_shape_map() == {n: list(a.shape) for n, a in ARRAYS.items()}
    for name, a in ARRAYS.items():
        assert_same_bits(theirs.get_tensor(name), a)
    # TensorFlow's own restore op reads it too.
    restored = tf.raw_ops.RestoreV2(prefix=prefix, tensor_names=["i32", "flags"], shape_and_slices=["", ""],
                                    dtypes=[tf.int32, tf.bool])
    assert_same_bits(restored[0].numpy(), ARRAYS["i32"])
    assert_same_bits(restored[1].numpy(), ARRAYS["flags"])


def test_errors_are_tensorflows(tf, tmp_path):
    prefix = str(tmp_path / "e")
    _core.write_checkpoint(prefix, [("w", kiln.constant([1.0, 2.0]))])
    with pytest.raises(kiln.errors.NotFoundError, match="Key nope not found in checkpoint"):
        kiln.train.load_checkpoint(prefix).get_tensor("nope")
    with pytest.raises(tf.errors.NotFoundError, match="Key nope not found in checkpoint"):
        tf.train.load_checkpoint(prefix).get_tensor("nope")
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        kiln.train.load_checkpoint(str(tmp_path))
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        tf.train.load_checkpoint(str(tmp_path))
    with pytest.raises(kiln.errors.NotFoundError):
        kiln.train.load_checkpoint(str(tmp_path / "missing"))
    with pytest.raises(tf.errors.NotFoundError):
        tf.train.load_checkpoint(str(tmp_path / "missing"))
    # A flipped byte in the data file: both refuse it. TensorFlow's C++ status is DATA_LOSS,
    # which its Python checkpoint reader turns into a plain OpError; kiln raises the subclass.
    data = tmp_path / "e.data-00000-of-00001"
    raw = bytearray(data.read_bytes())
    raw[2] ^= 0x40
    data.write_bytes(bytes(raw))
    with pytest.raises(kiln.errors.DataLossError, match="checksum mismatch"):
        kiln.train.load_checkpoint(prefix).get_tensor("w")
    with pytest.raises(tf.errors.OpError, match="Checksum does not match"):
        tf.train.load_checkpoint(prefix).get_tensor("w")
