"""kiln.data's files against TensorFlow's: TFRecord files written by one and read by the other
(plain, GZIP, ZLIB), tf.train.Example protos serialized by one and parsed by the other,
parse_single_example/parse_example results, TextLineDataset lines, list_files, and the error
classes for corrupt, truncated and missing files."""
import gzip

import numpy as np
import pytest

import kiln

tf = pytest.importorskip("tensorflow")

RECORDS = [b"", b"a", b"hello world", bytes(range(256)) * 50]
COMPRESSIONS = ["", "GZIP", "ZLIB"]


def _values(ds):
    return [x.numpy() for x in ds]


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_tfrecords_kiln_writes_tensorflow_reads(tmp_path, compression):
    path = str(tmp_path / "k.tfrecord")
    with kiln.io.TFRecordWriter(path, compression) as w:
        for r in RECORDS:
            w.write(r)
    assert _values(tf.data.TFRecordDataset(path, compression_type=compression)) == RECORDS
    assert _values(kiln.data.TFRecordDataset(path, compression_type=compression)) == RECORDS


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_tfrecords_tensorflow_writes_kiln_reads(tmp_path, compression):
    path = str(tmp_path / "t.tfrecord")
    with tf.io.TFRecordWriter(path, tf.io.TFRecordOptions(compression_type=compression)) as w:
        for r in RECORDS:
            w.write(r)
    assert _values(kiln.data.TFRecordDataset([path, path], compression_type=compression)) == RECORDS * 2


def _corrupt(tmp_path, how):
    path = str(tmp_path / ("%s.tfrecord" % how))
    with tf.io.TFRecordWriter(path) as w:
        w.write(b"first record")
        w.write(b"second record")
    data = bytearray(open(path, "rb").read())
    if how == "flipped":
        data[-6] ^= 0x40  # inside the second record's data: its CRC no longer matches
    elif how == "truncated":
        data = data[:-3]
    elif how == "length":
        data[len(data) // 2 + 1] ^= 0xFF  # the second record's length field
    open(path, "wb").write(bytes(data))
    return path


@pytest.mark.parametrize("how", ["flipped", "truncated", "length"])
def test_corrupt_tfrecords_are_data_loss_at_their_record(tmp_path, how):
    path = _corrupt(tmp_path, how)
    for m in (kiln, tf):
        it = iter(m.data.TFRecordDataset(path))
        assert next(it).numpy() == b"first record"
        with pytest.raises(m.errors.DataLossError):
            next(it)


def test_a_corrupt_gzip_stream_and_a_missing_file_are_errors_tensorflow_raises(tmp_path):
    plain = str(tmp_path / "ok.tfrecord")
    with tf.io.TFRecordWriter(plain) as w:
        for i in range(50):
            w.write(b"record %d" % i * 20)
    z = gzip.compress(open(plain, "rb").read())
    cut, garbled = str(tmp_path / "cut.gz"), str(tmp_path / "garbled.gz")
    open(cut, "wb").write(z[:len(z) // 2])
    open(garbled, "wb").write(z[:len(z) // 2] + b"garbage!" * 10)
    for m in (kiln, tf):
        for path in (cut, garbled):
            with pytest.raises(m.errors.DataLossError):
                list(m.data.TFRecordDataset(path, compression_type="GZIP"))
        with pytest.raises(m.errors.NotFoundError):
            list(m.data.TFRecordDataset(str(tmp_path / "missing")))
    with pytest.raises((ValueError, kiln.errors.InvalidArgumentError)):
        kiln.data.TFRecordDataset(plain, compression_type="BZIP2")


def test_text_lines_are_tensorflows(tmp_path):
    a = tmp_path / "a.txt"
    a.write_bytes(b"one\ntwo\r\n\nthree")
    b = tmp_path / "b.txt.gz"
    b.write_bytes(gzip.compress(b"x\ny\n"))
    for files, comp in (([str(a)], None), ([str(a), str(a)], ""), ([str(b)], "GZIP")):
        assert _values(kiln.data.TextLineDataset(files, compression_type=comp)) == _values(
            tf.data.TextLineDataset(files, compression_type=comp))


def test_list_files_is_tensorflows(tmp_path):
    for n in ("b.csv", "a.csv", "c.txt"):
        (tmp_path / n).write_text("x")
    pattern = str(tmp_path / "*.csv")
    assert _values(kiln.data.Dataset.list_files(pattern, shuffle=False)) == _values(
        tf.data.Dataset.list_files(pattern, shuffle=False))
    assert sorted(_values(kiln.data.Dataset.list_files(pattern))) == sorted(_values(tf.data.Dataset.list_files(pattern)))
    for m in (kiln, tf):
        with pytest.raises(m.errors.InvalidArgumentError):
            m.data.Dataset.list_files(str(tmp_path / "*.none"))


def _example(m, i):
    return m.train.Example(features=m.train.Features(feature={
        "id": m.train.Feature(int64_list=m.train.Int64List(value=[i, -i, 2 ** 40])),
        "score": m.train.Feature(float_list=m.train.FloatList(value=[i / 3.0, 1e-7])),
        "name": m.train.Feature(bytes_list=m.train.BytesList(value=[b"ex%d" % i])),
        "seq": m.train.Feature(float_list=m.train.FloatList(value=[float(k) for k in range(2 * i)])),
        "tags": m.train.Feature(bytes_list=m.train.BytesList(value=[b"t"] * i)),
    }))


def test_example_protos_cross_parse():
    for i in range(4):
        k, t = _example(kiln, i), _example(tf, i)
        assert tf.train.Example.FromString(k.SerializeToString()) == t
        assert kiln.train.Example.FromString(t.SerializeToString()) == k
        back = kiln.train.Example.FromString(t.SerializeToString())
        for key in t.features.feature:  # the text of each feature (map order is the implementation's)
            assert str(back.features.feature[key]) == str(t.features.feature[key])


def _features(m):
    return {
        "id": m.io.FixedLenFeature([3], m.int64),
        "score": m.io.FixedLenFeature([2], m.float32),
        "name": m.io.FixedLenFeature([], m.string),
        "missing": m.io.FixedLenFeature([2], m.float32, default_value=[7.0, 8.0]),
        "seq": m.io.FixedLenSequenceFeature([2], m.float32, allow_missing=True),
        "tags": m.io.VarLenFeature(m.string),
    }


def _parsed(m, out):
    flat = []
    for key in sorted(out):
        v = out[key]
        if hasattr(v, "indices"):
            flat.append((key, v.indices.numpy().tolist(), np.asarray(v.values.numpy()).tolist(),
                         v.dense_shape.numpy().tolist()))
        else:
            flat.append((key, v.dtype.name, np.asarray(v.numpy()).tolist()))
    return flat


def test_parse_single_example_is_tensorflows():
    for i in range(4):
        s = _example(tf, i).SerializeToString()
        assert _parsed(kiln, kiln.io.parse_single_example(s, _features(kiln))) == _parsed(
            tf, tf.io.parse_single_example(s, _features(tf)))


def test_parse_example_batches_as_tensorflow():
    batch = [_example(tf, i).SerializeToString() for i in range(4)]
    assert _parsed(kiln, kiln.io.parse_example(batch, _features(kiln))) == _parsed(
        tf, tf.io.parse_example(batch, _features(tf)))


BAD_PARSES = [
    lambda m: m.io.parse_single_example(_example(m, 1).SerializeToString(), {"nope": m.io.FixedLenFeature([], m.int64)}),
    lambda m: m.io.parse_single_example(_example(m, 1).SerializeToString(), {"id": m.io.FixedLenFeature([2], m.int64)}),
    lambda m: m.io.parse_single_example(_example(m, 1).SerializeToString(), {"id": m.io.FixedLenFeature([3],
                                                                                                        m.float32)}),
    lambda m: m.io.parse_single_example(b"\x0a\x05abc", {"id": m.io.FixedLenFeature([3], m.int64)}),
]


def test_an_unparsable_example_that_is_not_utf8_is_invalid_argument():
    # TensorFlow's own message decoding fails on these bytes (UnicodeDecodeError); kiln quotes them.
    with pytest.raises(kiln.errors.InvalidArgumentError, match=r"\\xff"):
        kiln.io.parse_single_example(b"\xff\xff\xff", {"id": kiln.io.FixedLenFeature([3], kiln.int64)})


@pytest.mark.parametrize("case", range(len(BAD_PARSES)))
def test_bad_examples_raise_tensorflows_error_class(oracle, case):
    oracle(BAD_PARSES[case], where="bad parse %d" % case)


def test_a_tfrecord_pipeline_parses_in_a_traced_map(tmp_path):
    path = str(tmp_path / "ex.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        for i in range(10):
            w.write(_example(tf, i).SerializeToString())
    dense = {k: v for k, v in _features(kiln).items() if k in ("id", "score", "name")}

    def run(m, features):
        ds = m.data.TFRecordDataset(path).map(lambda s: m.io.parse_single_example(s, features)).batch(4)
        return [[(k, b[k].numpy().tolist()) for k in sorted(b)] for b in ds]

    tf_dense = {k: v for k, v in _features(tf).items() if k in ("id", "score", "name")}
    assert run(kiln, dense) == run(tf, tf_dense)


def test_example_parser_survives_random_bytes():
    rng = np.random.RandomState(0)
    good = _example(kiln, 3).SerializeToString()
    for _ in range(300):
        data = bytearray(good)
        for _ in range(rng.randint(1, 6)):
            data[rng.randint(len(data))] = rng.randint(256)
        cut = bytes(data[:rng.randint(len(data) + 1)])
        try:
            kiln.io.parse_single_example(cut, _features(kiln))
        except kiln.errors.InvalidArgumentError:
            pass
        try:
            kiln.train.Example.FromString(cut)
        except ValueError:
            pass
