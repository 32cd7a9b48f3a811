"""DecodeRaw, UnicodeDecode and AdjustContrastv2 (the tensor and autodiff guides'
tf.io.decode_raw, tf.strings.unicode_decode and tf.image.adjust_contrast): values, shapes and
error classes compared with TensorFlow in the same test, eagerly and inside a kiln.function."""
import struct

import numpy as np
import pytest

import kiln
from conftest import raw_op_outputs, raw_ops_kwargs_for_tf

tf = pytest.importorskip("tensorflow")

DECODE_RAW = [
    dict(bytes=np.array(b"Duck", dtype=object), out_type=kiln.uint8),
    dict(bytes=np.array([b"abcd", b"efgh"], dtype=object), out_type=kiln.int16, little_endian=False),
    dict(bytes=np.array([[b"abcdefgh"], [b"12345678"]], dtype=object), out_type=kiln.float32),
    dict(bytes=np.array([struct.pack(">ff", 1.5, -2.0)], dtype=object), out_type=kiln.complex64, little_endian=False),
    dict(bytes=np.array([struct.pack("<dd", 1.5, -2.0)], dtype=object), out_type=kiln.complex128),
    dict(bytes=np.array([b"\x00\x02\x01\x00"], dtype=object), out_type=kiln.bool),
    dict(bytes=np.array([b"\x00\x02\x01\x00"], dtype=object), out_type=kiln.float16, little_endian=False),
    dict(bytes=np.array([b"\x00\x02\x01\x00"], dtype=object), out_type=kiln.bfloat16),
    dict(bytes=np.array([b"\x00\x02\x01\x00\xff\xff\xff\xff"], dtype=object), out_type=kiln.int64),
    dict(bytes=np.array([b"\x80\x02"], dtype=object), out_type=kiln.int8),
    dict(bytes=np.array([b"\x80\x02"], dtype=object), out_type=kiln.uint16, little_endian=False),
    dict(bytes=np.array([b"", b""], dtype=object), out_type=kiln.float32),
    dict(bytes=np.zeros([0], dtype=object), out_type=kiln.float64),
]

UNICODE_DECODE = [
    dict(input=np.array("アヒル 🦆".encode(), dtype=object), input_encoding="UTF-8"),
    dict(input=np.array([b"\xc0\x80a\xe3\x82b\xf4\x90\x80\x80c\xed\xa0\x80", b"", b"\xf0\x9f\xa6"], dtype=object),
         input_encoding="UTF-8"),
    dict(input=np.array([b"a\xffb"], dtype=object), input_encoding="UTF-8", errors="ignore"),
    dict(input=np.array([b"a\xffb\x7f\x1f"], dtype=object), input_encoding="utf-8", replacement_char=63,
         replace_control_characters=True),
    dict(input=np.array([b"\x00a\xd8\x3d\xdc\xa6\xdc\x00\x00"], dtype=object), input_encoding="UTF-16-BE"),
    dict(input=np.array([b"\x00\x00\x00a\x00\x11\x00\x00\x00\x00\xd8\x00\x00\x00"], dtype=object),
         input_encoding="UTF-32-BE"),
    dict(input=np.array([[b"ab", b"\xe9"], [b"", b"c"]], dtype=object), input_encoding="latin1", Tsplits=kiln.int32),
    dict(input=np.array([b"\xe0\x80\x80", b"\xe2\x82\xac"], dtype=object), input_encoding="UTF-8"),
]

DECODE_PADDED_RAW = [
    dict(input_bytes=np.array([b"abc", b"defgh"], dtype=object), fixed_length=np.int32(4), out_type=kiln.int16),
    dict(input_bytes=np.array([[b"abcd", b""], [b"\x01\x02\x03\x04\x05\x06\x07\x08", b"x"]], dtype=object),
         fixed_length=np.int32(8), out_type=kiln.float32, little_endian=False),
    dict(input_bytes=np.array([b"\xff\x00\x01"], dtype=object), fixed_length=np.int32(3), out_type=kiln.uint8),
    dict(input_bytes=np.array([b"\x00\x3c\x00\xc0"], dtype=object), fixed_length=np.int32(4), out_type=kiln.bfloat16),
    dict(input_bytes=np.zeros([0, 2], dtype=object), fixed_length=np.int32(8), out_type=kiln.int64),
]

ADJUST_CONTRAST = [
    dict(images=np.float32([[[0.5, 0.0, 0.0]]]), contrast_factor=np.float32(0.1)),
    dict(images=np.arange(12, dtype=np.float32).reshape(2, 2, 3), contrast_factor=np.float32(2.0)),
    dict(images=np.random.default_rng(3).standard_normal((2, 4, 5, 3)).astype(np.float32),
         contrast_factor=np.float32(-0.7)),
    dict(images=np.zeros([0, 2, 3], np.float32), contrast_factor=np.float32(2.0)),
]


def _compare(name, kwargs, traced):
    for g, w in raw_op_outputs(name, kwargs, traced):
        if g.dtype.kind == "f":
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-6, atol=1e-6)
        else:
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("traced", [False, True])
@pytest.mark.parametrize("name,kwargs", [("DecodeRaw", k) for k in DECODE_RAW] +
                         [("DecodePaddedRaw", k) for k in DECODE_PADDED_RAW] + [("UnicodeDecode", k) for k in
                                                                                    UNICODE_DECODE] +
                         [("AdjustContrastv2", k) for k in ADJUST_CONTRAST])
def test_values_are_tensorflows(name, kwargs, traced):
    _compare(name, kwargs, traced)


BAD = [
    ("DecodePaddedRaw", dict(input_bytes=np.array([b"abc"], dtype=object), fixed_length=np.int32(3), out_type=kiln.int16)),
    ("DecodePaddedRaw", dict(input_bytes=np.array([b"abc"], dtype=object), fixed_length=np.int32(0), out_type=kiln.int16)),
    ("DecodePaddedRaw", dict(input_bytes=np.array([b"abc"], dtype=object), fixed_length=np.int32([4]),
                             out_type=kiln.int16)),
    ("DecodePaddedRaw", dict(input_bytes=np.array([b"abc"], dtype=object), fixed_length=np.int32(4), out_type=kiln.bool)),
    ("DecodePaddedRaw", dict(input_bytes=np.array([b"abcd"], dtype=object), fixed_length=np.int32(4),
                             out_type=kiln.float16)),
    ("DecodeRaw", dict(bytes=np.array([b"abcd", b"efg"], dtype=object), out_type=kiln.int16)),
    ("DecodeRaw", dict(bytes=np.array([b"abc", b"efg"], dtype=object), out_type=kiln.int16)),
    ("DecodeRaw", dict(bytes=np.array([b"abcdefgh"], dtype=object), out_type=kiln.uint64)),
    ("UnicodeDecode", dict(input=np.array([b"ab"], dtype=object), input_encoding="nonsense")),
    ("UnicodeDecode", dict(input=np.array([b"ab"], dtype=object), input_encoding="UTF-8", errors="bogus")),
    ("UnicodeDecode", dict(input=np.array([b"a\xffb"], dtype=object), input_encoding="UTF-8", errors="strict")),
    ("UnicodeDecode", dict(input=np.array([b"a"], dtype=object), input_encoding="UTF-8", replacement_char=0x110000)),
    ("UnicodeDecode", dict(input=np.array([b"a"], dtype=object), input_encoding="UTF-8", replacement_char=-1)),
    ("AdjustContrastv2", dict(images=np.ones([1, 2, 2, 3], np.float32), contrast_factor=np.float32([2.0]))),
    ("AdjustContrastv2", dict(images=np.ones([4, 3], np.float32), contrast_factor=np.float32(2.0))),
]


@pytest.mark.parametrize("name,kwargs", BAD, ids=[c[0] + str(i) for i, c in enumerate(BAD)])
def test_bad_arguments_are_tensorflows_errors(name, kwargs):
    with pytest.raises(Exception) as theirs:
        getattr(tf.raw_ops, name)(**raw_ops_kwargs_for_tf(kwargs))
    with pytest.raises(Exception) as ours:
        getattr(kiln.raw_ops, name)(**kwargs)
    assert type(ours.value).__name__ == type(theirs.value).__name__, (ours.value, theirs.value)
    message = getattr(ours.value, "message", str(ours.value)).split(" [Op:")[0]
    assert message.split(";")[0][:40] in str(theirs.value), (message, str(theirs.value))


def test_the_tensor_guides_decode_raw_and_unicode_decode():
    for m in (tf, kiln):
        got = [m.io.decode_raw(m.constant("Duck"), m.uint8).numpy(),
               m.strings.unicode_decode(m.constant("アヒル 🦆"), "UTF-8").numpy(),
               m.strings.unicode_decode(m.constant(["ab", "🦆c"]), "UTF-8").to_list(),
               m.strings.unicode_decode(m.constant([["ab", "c"], ["", "d"]]), "UTF-8").to_list()]
        if m is tf:
            want = got
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g, dtype=object), np.asarray(w, dtype=object))
    assert repr(kiln.strings.unicode_decode(kiln.constant([["ab", "c"], ["", "d"]]), "UTF-8")).replace(
        "kiln.", "tf.") == repr(tf.strings.unicode_decode(tf.constant([["ab", "c"], ["", "d"]]), "UTF-8"))


@pytest.mark.parametrize("dtype", ["float32", "uint8", "int32", "float64", "float16"])
def test_image_adjust_contrast_converts_as_tensorflow(dtype):
    x = (np.arange(24).reshape(2, 2, 2, 3) * 7 % 23).astype(dtype)
    want = tf.image.adjust_contrast(tf.constant(x), 1.7).numpy() if dtype != "float16" else None
    got = kiln.image.adjust_contrast(kiln.constant(x), 1.7).numpy()
    assert got.dtype == np.dtype(dtype)
    if want is not None:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-6, atol=1e-6)
    else:  # TensorFlow's CPU has no float16 kernel; kiln computes it through float32
        want = tf.image.adjust_contrast(tf.constant(x.astype(np.float32)), 1.7).numpy().astype(np.float16)
        np.testing.assert_array_equal(got, want)


def test_a_gradient_through_an_op_without_one_is_lookup_error():
    errors = {}
    for m in (tf, kiln):
        image = m.Variable([[[0.5, 0.0, 0.0]]])
        delta = m.Variable(0.1)
        with m.GradientTape() as tape:
            new_image = m.image.adjust_contrast(image, delta)
        with pytest.raises(LookupError) as e:
            tape.gradient(new_image, [image, delta])
        errors[m] = str(e.value)
    assert errors[kiln] == errors[tf]


@pytest.mark.parametrize("dtype", ["int32", "float64", "bfloat16"])
def test_adjust_contrast_takes_half_and_float_tensors(dtype):
    # (A numpy array of another dtype is converted to float32 by TensorFlow's raw op, as the
    # attr's default; kiln's raw ops keep the array's dtype, so the tensors are made first.)
    with pytest.raises(tf.errors.InvalidArgumentError) as theirs:
        tf.raw_ops.AdjustContrastv2(images=tf.ones([2, 2, 3], dtype), contrast_factor=2.0)
    with pytest.raises(kiln.errors.InvalidArgumentError) as ours:
        kiln.raw_ops.AdjustContrastv2(images=kiln.ones([2, 2, 3], dtype), contrast_factor=2.0)
    assert ours.value.message.split(" [Op:")[0] in theirs.value.message


def test_a_number_tensor_is_not_bytes():
    with pytest.raises(tf.errors.InvalidArgumentError) as theirs:
        tf.raw_ops.DecodeRaw(bytes=tf.constant(1), out_type=tf.uint8)
    with pytest.raises(kiln.errors.InvalidArgumentError) as ours:
        kiln.raw_ops.DecodeRaw(bytes=kiln.constant(1), out_type=kiln.uint8)
    assert ours.value.message.split(" [Op:")[0] in theirs.value.message


def test_hash_buckets_are_tensorflows():
    """Every length class of the fingerprint (0-3, 4-7, 8-16, 17-32, 33-64, the 64-byte loop
    and its tail), random bytes and text, eager and traced, against TensorFlow's buckets."""
    rng = np.random.default_rng(9)
    strings = [bytes(rng.integers(0, 256, n, dtype=np.uint8)) for n in list(range(0, 140)) + [255, 256, 1000, 4097]]
    strings += ["Duck".encode(), "アヒル 🦆".encode(), b"hello world" * 20]
    x = np.array(strings, dtype=object)
    for buckets in (1, 7, 1 << 40):
        want = tf.strings.to_hash_bucket_fast(tf.constant(x), buckets).numpy()
        np.testing.assert_array_equal(kiln.strings.to_hash_bucket_fast(kiln.constant(x), buckets).numpy(), want)
        traced = kiln.function(lambda s: kiln.strings.to_hash_bucket_fast(s, buckets))
        np.testing.assert_array_equal(traced(kiln.constant(x.reshape(-1, 1))).numpy(), want.reshape(-1, 1))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.raw_ops.StringToHashBucketFast(input=["a"], num_buckets=0)
    with pytest.raises(kiln.errors.InvalidArgumentError, match="must be at least minimum 1"):
        kiln.raw_ops.StringToHashBucketFast(input=np.array([b"a"], dtype=object), num_buckets=0)


def test_hash_buckets_of_a_ragged_tensor_keep_its_rows():
    words = [["What", "makes", "you"], [], ["a", "witch?"]]
    want = tf.strings.to_hash_bucket_fast(tf.ragged.constant(words), 1000).to_list()
    assert kiln.strings.to_hash_bucket_fast(kiln.ragged.constant(words), 1000).to_list() == want
