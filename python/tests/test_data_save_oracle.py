"""Datasets on disk against TensorFlow: Dataset.save directories written by one library and
loaded by the other (structures, dtypes, strings, compression, shard_func), element_spec and
cardinality as load gives them, the errors for missing, corrupt, truncated and unfinished
saves, and cache(filename): what a pipeline yields with it, that a later pass reads the file,
and that an unfinished pass leaves none."""
import collections
import os

import numpy as np
import pytest

import kiln

tf = pytest.importorskip("tensorflow")

Point = collections.namedtuple("Point", ["x", "y"])


def _elements(m, which):
    """The same dataset built by m (kiln or tf)."""
    if which == "scalars":
        return m.data.Dataset.range(7)
    if which == "nested":
        return m.data.Dataset.from_tensor_slices(({"a": np.arange(6, dtype=np.int32),
                                                   "b": np.linspace(0, 1, 12, dtype=np.float32).reshape(6, 2)},
                                                  np.array([b"", b"x", b"yy", bytes(range(256)), b"z", b"w"])))
    if which == "dtypes":
        return m.data.Dataset.from_tensor_slices((np.array([True, False, True]), np.arange(3, dtype=np.uint8),
                                                  np.arange(3, dtype=np.float16), np.arange(3, dtype=np.complex64),
                                                  np.arange(6, dtype=np.float64).reshape(3, 2, 1)))
    if which == "batched":  # a partial last batch: the saved shape keeps its None
        return m.data.Dataset.range(10).batch(4)
    if which == "namedtuple":
        return m.data.Dataset.from_tensor_slices(Point(np.arange(3), np.arange(3.0)))
    if which == "empty":
        return m.data.Dataset.range(0)
    raise ValueError(which)


def _plain(x):
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in sorted(x.items())}
    if isinstance(x, (tuple, list)):
        return tuple(_plain(v) for v in x)
    return (x.dtype.name, np.asarray(x.numpy()).tolist())


def _values(ds):
    return [_plain(e) for e in ds]


def _spec_text(spec):
    """The spec's repr, dicts by sorted key (TensorFlow rebuilds a dict in the order of a proto
    map, which is not the saved order)."""
    if isinstance(spec, dict):
        return "{%s}" % ", ".join("%r: %s" % (k, _spec_text(v)) for k, v in sorted(spec.items()))
    if isinstance(spec, (tuple, list)) and not hasattr(spec, "_fields"):
        return "(%s)" % ", ".join(_spec_text(v) for v in spec)
    return repr(spec).replace("tf.", "kiln.")


WHICH = ["scalars", "nested", "dtypes", "batched", "namedtuple", "empty"]


@pytest.mark.parametrize("writer", ["kiln", "tf"])
@pytest.mark.parametrize("compression", [None, "GZIP"])
@pytest.mark.parametrize("which", WHICH)
def test_saved_by_one_loaded_by_both(tmp_path, which, compression, writer):
    _elements(kiln if writer == "kiln" else tf, which).save(str(tmp_path), compression=compression)
    theirs = tf.data.Dataset.load(str(tmp_path), compression=compression)
    ours = kiln.data.Dataset.load(str(tmp_path), compression=compression)
    expected = _values(_elements(tf, which))
    assert _values(theirs) == expected
    assert _values(ours) == expected
    assert _spec_text(ours.element_spec) == _spec_text(theirs.element_spec)
    assert int(ours.cardinality()) == int(theirs.cardinality()) == len(expected)


@pytest.mark.parametrize("writer", ["kiln", "tf"])
def test_shard_func_shards_and_the_load_order(tmp_path, writer):
    m = kiln if writer == "kiln" else tf
    m.data.Dataset.range(20).save(str(tmp_path), shard_func=lambda x: x % 3)
    run = [d for d in os.listdir(tmp_path) if d not in ("dataset_spec.pb", "snapshot.metadata")]
    assert len(run) == 1 and sorted(os.listdir(tmp_path / run[0])) == ["0000000%d.shard" % i for i in range(3)]
    # Both read the shards as TensorFlow's default reader_func does (an interleave, one per CPU).
    assert [int(x) for x in kiln.data.Dataset.load(str(tmp_path))] == \
        [int(x) for x in tf.data.Dataset.load(str(tmp_path))]


def test_shard_func_sees_the_element_as_map_does(tmp_path):
    ds = kiln.data.Dataset.from_tensor_slices(({"k": np.arange(5)}, np.arange(5.0)))
    ds.save(str(tmp_path), shard_func=lambda d, v: d["k"] % 2)
    assert sorted(_values(tf.data.Dataset.load(str(tmp_path))), key=repr) == sorted(_values(ds), key=repr)


def test_load_with_an_element_spec(tmp_path):
    tf.data.Dataset.range(4).map(lambda x: (x, tf.strings.as_string(x))).save(str(tmp_path))
    spec = (kiln.TensorSpec([], kiln.int64), kiln.TensorSpec([], kiln.string))
    ds = kiln.data.Dataset.load(str(tmp_path), element_spec=spec)
    assert ds.element_spec == spec
    assert [(int(a), b.numpy()) for a, b in ds] == [(i, str(i).encode()) for i in range(4)]
    with pytest.raises(kiln.errors.InvalidArgumentError):  # the saved dtypes are not these
        kiln.data.Dataset.load(str(tmp_path), element_spec=(kiln.TensorSpec([], kiln.int32),
                                                             kiln.TensorSpec([], kiln.string)))


def test_saving_again_replaces_the_run(tmp_path):
    kiln.data.Dataset.range(3).save(str(tmp_path))
    kiln.data.Dataset.range(5, 7).save(str(tmp_path))
    for m in (kiln, tf):
        assert [int(x) for x in m.data.Dataset.load(str(tmp_path))] == [5, 6]


def test_experimental_aliases(tmp_path):
    kiln.data.experimental.save(kiln.data.Dataset.range(3), str(tmp_path))
    assert [int(x) for x in kiln.data.experimental.load(str(tmp_path))] == [0, 1, 2]


def test_saving_a_generator_pipeline(tmp_path):
    ds = kiln.data.Dataset.from_generator(lambda: iter(range(5)), output_signature=kiln.TensorSpec([], kiln.int64))
    ds.map(lambda x: x * 2).save(str(tmp_path))
    assert [int(x) for x in tf.data.Dataset.load(str(tmp_path))] == [0, 2, 4, 6, 8]


# -- bad input: the error classes TensorFlow raises, never a crash
def test_missing_directory_is_not_found(tmp_path):
    path = str(tmp_path / "nothing")
    with pytest.raises(tf.errors.NotFoundError) as theirs:
        tf.data.Dataset.load(path)
    with pytest.raises(kiln.errors.NotFoundError) as ours:
        kiln.data.Dataset.load(path)
    assert str(ours.value) == theirs.value.message


def _shard_file(path):
    for root, _, files in os.walk(path):
        for f in files:
            if f.endswith(".snapshot"):
                return os.path.join(root, f)


@pytest.mark.parametrize("how", ["flipped", "truncated"])
def test_corrupt_shards_are_data_loss(tmp_path, how):
    tf.data.Dataset.range(50).save(str(tmp_path))
    shard = _shard_file(tmp_path)
    data = bytearray(open(shard, "rb").read())
    if how == "flipped":
        data[len(data) // 2] ^= 0x10
    else:
        data = data[:len(data) // 2 - 5]  # inside a record (30 bytes each)
    open(shard, "wb").write(bytes(data))
    for m in (tf, kiln):
        with pytest.raises(m.errors.DataLossError):
            list(m.data.Dataset.load(str(tmp_path)))


def test_a_shard_cut_between_elements_reads_as_tensorflow_reads_it(tmp_path):
    tf.data.Dataset.range(50).save(str(tmp_path))
    shard = _shard_file(tmp_path)
    data = open(shard, "rb").read()
    open(shard, "wb").write(data[:len(data) // 2])  # 25 whole elements: both read them, no error
    assert [int(x) for x in kiln.data.Dataset.load(str(tmp_path))] == \
        [int(x) for x in tf.data.Dataset.load(str(tmp_path))] == list(range(25))


def test_compressed_shards_read_plain_are_data_loss(tmp_path):
    tf.data.Dataset.range(5).save(str(tmp_path), compression="GZIP")
    for m in (tf, kiln):
        with pytest.raises(m.errors.DataLossError):
            list(m.data.Dataset.load(str(tmp_path)))


def test_hostile_metadata_and_spec_files(tmp_path):
    kiln.data.Dataset.range(3).save(str(tmp_path))
    good = open(tmp_path / "snapshot.metadata", "rb").read()
    for garbage in (b"\xff\xff\xff", b""):  # not a proto; an unfinished (empty) record
        open(tmp_path / "snapshot.metadata", "wb").write(garbage)
        with pytest.raises((kiln.errors.DataLossError, kiln.errors.FailedPreconditionError)):
            kiln.data.Dataset.load(str(tmp_path))
    # A run id that walks out of the directory is refused before it is used as a path.
    from tensorflow.core.protobuf import snapshot_pb2
    m = snapshot_pb2.SnapshotMetadataRecord.FromString(good)
    m.run_id = "../../etc"
    open(tmp_path / "snapshot.metadata", "wb").write(m.SerializeToString())
    with pytest.raises(kiln.errors.DataLossError):
        kiln.data.Dataset.load(str(tmp_path))
    open(tmp_path / "snapshot.metadata", "wb").write(good)
    open(tmp_path / "dataset_spec.pb", "wb").write(b"\x0a\xff\xff\xff\xff")
    with pytest.raises(kiln.errors.DataLossError):
        kiln.data.Dataset.load(str(tmp_path))


def test_shard_records_of_the_wrong_dtype(tmp_path):
    tf.data.Dataset.range(3).save(str(tmp_path))
    with pytest.raises(kiln.errors.InvalidArgumentError):  # metadata dtypes disagree with the spec
        kiln.data.Dataset.load(str(tmp_path), element_spec=kiln.TensorSpec([], kiln.float64))


def test_what_save_refuses(tmp_path):
    with pytest.raises(ValueError):
        kiln.data.Dataset.range(4).window(2).save(str(tmp_path / "w"))
    with pytest.raises(NotImplementedError):
        kiln.data.Dataset.range(4).save(str(tmp_path / "c"), checkpoint_args={"checkpoint_interval": 1})
    with pytest.raises(kiln.errors.InvalidArgumentError):
        kiln.data.Dataset.range(4).save(str(tmp_path / "n"), shard_func=lambda x: x - 2)
    with pytest.raises(kiln.errors.InvalidArgumentError):
        kiln.data.Dataset.range(4).save(str(tmp_path / "z"), compression="LZ4")
    # A failed save leaves no run behind.
    assert os.listdir(tmp_path / "n") == []


# -- cache(filename)
def test_file_cache_same_elements_as_tensorflow(tmp_path):
    def pipeline(m, path):
        return m.data.Dataset.range(10).map(lambda x: (x, m.strings.as_string(x))).cache(path).repeat(2)

    assert _values(pipeline(kiln, str(tmp_path / "k"))) == _values(pipeline(tf, str(tmp_path / "t")))


def test_file_cache_is_read_by_later_passes_and_processes(tmp_path):
    calls = []

    def gen():
        for i in range(4):
            calls.append(i)
            yield i

    def pipeline():
        return kiln.data.Dataset.from_generator(gen, output_signature=kiln.TensorSpec([], kiln.int64)).cache(
            str(tmp_path / "c"))

    ds = pipeline()
    assert [int(x) for x in ds] == [0, 1, 2, 3]
    assert [int(x) for x in ds] == [0, 1, 2, 3]
    assert [int(x) for x in pipeline()] == [0, 1, 2, 3]  # a new pipeline (as a later run) finds the file
    assert calls == [0, 1, 2, 3]


def test_unfinished_file_cache_leaves_nothing(tmp_path):
    ds = kiln.data.Dataset.range(100).cache(str(tmp_path / "c"))
    it = iter(ds)
    next(it)
    del it
    assert os.listdir(tmp_path) == []
    assert len(list(ds)) == 100
    assert os.listdir(tmp_path) == ["c.kiln-cache"]


def test_file_cache_of_another_pipeline_is_refused(tmp_path):
    kiln.data.Dataset.range(3).cache(str(tmp_path / "c")).reduce(0, lambda a, b: a)
    with pytest.raises(kiln.errors.InvalidArgumentError):
        list(kiln.data.Dataset.from_tensor_slices([1.0, 2.0]).cache(str(tmp_path / "c")))
