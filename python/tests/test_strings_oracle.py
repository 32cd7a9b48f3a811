"""String tensors (tf.string) with TensorFlow as the oracle: constants, reprs and numpy
conversion; the ops that move elements (reshape, concat, gather, ...) applied to strings;
equality and `+`; the tf.strings and tf.io base64 ops (values, and TensorFlow's error class
and message for bad input), eagerly and inside kiln.function; and strings through
checkpoints, GraphDefs and SavedModels that TensorFlow writes and reads."""
import re

import numpy as np
import pytest

import kiln

tf = pytest.importorskip("tensorflow")

WORDS = ["hello", "wörld", "", "  padded \t", "a'b", "x" * 100]


def _tf_message(e):
    """TensorFlow's message without its function-node prefix and trailing name."""
    m = re.sub(r"^\{\{function_node [^}]*\}\}\s*", "", str(e).strip())
    return re.sub(r"\s*name:\s*$", "", m)


VALUE_CASES = [
    lambda m: m.constant(WORDS),
    lambda m: m.constant("scalar"),
    lambda m: m.constant([[b"\xff\x00", b"b"], [b"c", b""]]),
    lambda m: m.constant(np.array(["ab", "é"])),
    lambda m: m.constant(np.array([b"ab", b"c"], dtype=object)),
    lambda m: m.constant(["a", "b"], dtype=m.string),
    lambda m: m.constant(["a", 1]),
    lambda m: m.constant([1], dtype=m.string),
    lambda m: m.constant("a", dtype=m.int32),
    lambda m: m.constant([["a"], ["b", "c"]]),
    lambda m: m.zeros([2, 1], m.string),
    lambda m: m.zeros_like(m.constant(["a", "b"])),
    lambda m: m.fill([2, 2], "z"),
    lambda m: m.reshape(m.constant(WORDS), [2, 3]),
    lambda m: m.expand_dims(m.constant(WORDS), 0),
    lambda m: m.squeeze(m.constant([["a"], ["b"]])),
    lambda m: m.concat([m.constant(WORDS), m.constant(["z"])], 0),
    lambda m: m.stack([m.constant(["a", "b"]), m.constant(["c", "d"])], axis=1),
    lambda m: m.unstack(m.constant([["a", "b"], ["c", "d"]])),
    lambda m: m.gather(m.constant(WORDS), [5, 0, 0, 2]),
    lambda m: m.gather(m.constant(WORDS), [7]),
    lambda m: m.gather_nd(m.constant([["a", "b"], ["c", "d"]]), [[1, 0], [0, 1]]),
    lambda m: m.transpose(m.constant([["a", "b", "c"], ["d", "e", "f"]])),
    lambda m: m.tile(m.constant([["a", "b"]]), [2, 2]),
    lambda m: m.slice(m.constant(WORDS), [1], [3]),
    lambda m: m.constant(WORDS)[::-2],
    lambda m: m.split(m.constant(WORDS), 3),
    lambda m: m.reverse(m.constant(WORDS), [0]),
    lambda m: m.broadcast_to(m.constant(["a", "b"]), [3, 2]),
    lambda m: m.where(m.constant([True, False]), m.constant(["a", "b"]), m.constant(["c", "d"])),
    lambda m: m.identity(m.constant(WORDS)),
    lambda m: m.constant(WORDS) == "hello",
    lambda m: m.constant(["a", "b"]) != m.constant([["a"], ["b"]]),
    lambda m: m.equal(m.constant(["a", "b"]), m.constant(["a", "b", "c"])),
    lambda m: m.constant("pre-") + m.constant(WORDS),
    lambda m: m.math.add(m.constant([["a"], ["b"]]), m.constant(["1", "2"])),
    lambda m: m.constant("a") < m.constant("b"),
    lambda m: m.cast(m.constant("1"), m.int32),
    lambda m: m.strings.join([m.constant(["a", "b"]), "-", m.constant(["c", "d"])]),
    lambda m: m.strings.join([m.constant(["a", "b"]), m.constant(["c", "d", "e"])]),
    lambda m: m.strings.join(["x", "y"], separator=", "),
    lambda m: m.strings.length(WORDS),
    lambda m: m.strings.length(WORDS, unit="UTF8_CHAR"),
    lambda m: m.strings.length(["a"], unit="BAD"),
    lambda m: m.strings.upper(WORDS),
    lambda m: m.strings.lower(["MiXeD Ä"]),
    lambda m: m.strings.strip(WORDS),
    lambda m: m.strings.substr(WORDS[:2], 1, 3),
    lambda m: m.strings.substr("hello", -3, 2),
    lambda m: m.strings.substr("hello", 2, -1),
    lambda m: m.strings.substr("hello", 2, 100),
    lambda m: m.strings.substr("hello", 7, 2),
    lambda m: m.strings.substr(["hello", "ab"], [1, 3], [2, 1]),
    lambda m: m.strings.substr(["héllo", "wörld"], 1, 3, unit="UTF8_CHAR"),
    lambda m: m.strings.substr([["hello"], ["world"]], [[0, 1, 2]], [[1, 2, 3]]),
    lambda m: m.strings.substr(["hello", "ab"], [1, 3, 4], [2, 1, 1]),
    lambda m: m.strings.to_number(["1.5", " 2", "3e2", "-inf", "nan", "0x10", "1e40"]),
    lambda m: m.strings.to_number(["1.5", "2"], out_type=m.float64),
    lambda m: m.strings.to_number(["12", "-3", "+7", " 4 "], out_type=m.int32),
    lambda m: m.strings.to_number(["9223372036854775807"], out_type=m.int64),
    lambda m: m.strings.to_number(["12.5"], out_type=m.int32),
    lambda m: m.strings.to_number(["99999999999"], out_type=m.int32),
    lambda m: m.strings.to_number(["abc"]),
    lambda m: m.strings.to_number([""]),
    lambda m: m.strings.as_string([1.5, 2.25, 1e10, float("nan"), -0.0]),
    lambda m: m.strings.as_string([1.5, 2.25], precision=3),
    lambda m: m.strings.as_string(m.constant([1.5, 1e-7], m.float64), scientific=True),
    lambda m: m.strings.as_string(m.constant([1.5, 1e-7, 123456789.0], m.float32), shortest=True),
    lambda m: m.strings.as_string([1, -2], width=5, fill="0"),
    lambda m: m.strings.as_string([1, -2], width=4),
    lambda m: m.strings.as_string(m.constant([250, 3], m.uint8)),
    lambda m: m.strings.as_string(m.constant([-(2 ** 63)], m.int64)),
    lambda m: m.strings.as_string([True, False]),
    lambda m: m.strings.as_string(["x"]),
    lambda m: m.strings.as_string([1.5], scientific=True, shortest=True),
    lambda m: m.strings.as_string([1], fill="ab"),
    lambda m: m.strings.as_string([1], precision=2),
    lambda m: m.strings.reduce_join([["a", "b"], ["c", "d"]]),
    lambda m: m.strings.reduce_join([["a", "b"], ["c", "d"]], axis=0, separator=","),
    lambda m: m.strings.reduce_join([["a", "b"], ["c", "d"]], axis=-1, keepdims=True),
    lambda m: m.strings.reduce_join([["a", "b"], ["c", "d"]], axis=[0, 1]),
    lambda m: m.strings.reduce_join([["a", "b"], ["c", "d"]], axis=[1, 0]),
    lambda m: m.strings.reduce_join([["a", "b"], ["c", "d"]], axis=2),
    lambda m: m.strings.reduce_join([["a", "b"], ["c", "d"]], axis=[0, 0]),
    lambda m: m.strings.reduce_join(m.zeros([2, 0], m.string), axis=1),
    lambda m: m.io.encode_base64(["hello?>", "", "a", "ab", "abc"]),
    lambda m: m.io.encode_base64(["a", "ab", "abc"], pad=True),
    lambda m: m.io.decode_base64(["aGVsbG8_Pg", "YQ==", "YWI", ""]),
    lambda m: m.io.decode_base64(["a"]),
    lambda m: m.io.decode_base64(["a+b/"]),
]


@pytest.mark.parametrize("i", range(len(VALUE_CASES)))
def test_strings_agree_with_tensorflow(oracle, i):
    oracle(VALUE_CASES[i], where="case %d" % i)


# The ops' own errors: the message as TensorFlow words it.
MESSAGE_CASES = [
    lambda m: m.strings.join([m.constant(["a", "b"]), m.constant(["c", "d", "e"])]),
    lambda m: m.strings.substr("hello", 7, 2),
    lambda m: m.strings.substr(["hello", "ab"], [1, 3], [2, 1]),
    lambda m: m.strings.to_number(["abc"]),
    lambda m: m.strings.length(["a"], unit="BAD"),
    lambda m: m.io.decode_base64(["a"]),
    lambda m: m.strings.reduce_join([["a", "b"], ["c", "d"]], axis=2),
]


@pytest.mark.parametrize("i", range(len(MESSAGE_CASES)))
def test_string_errors_say_what_tensorflow_says(i):
    with pytest.raises(Exception) as te:
        MESSAGE_CASES[i](tf)
    with pytest.raises(Exception) as ke:
        MESSAGE_CASES[i](kiln)
    assert type(ke.value).__name__ == type(te.value).__name__
    want = _tf_message(te.value).split("\n")[0]
    want = re.sub(r"\s*;?\s*NodeDef:.*$", "", want)
    assert _tf_message(ke.value).startswith(want), (str(ke.value), want)


def test_reprs_match_tensorflow():
    for value in (WORDS, "scalar", [[b"\xff"], [b"q"]]):
        assert repr(kiln.constant(value)) == repr(tf.constant(value)).replace("tf.", "kiln.")
        assert str(kiln.constant(value)) == str(tf.constant(value)).replace("tf.", "kiln.")
    assert repr(kiln.string) == "kiln.string" and kiln.as_dtype(np.object_) == kiln.string
    assert kiln.string.size == tf.string.size and kiln.string.as_numpy_dtype is tf.string.as_numpy_dtype
    np.testing.assert_array_equal(np.array(kiln.constant(["a", "b"])), np.array(tf.constant(["a", "b"])))
    assert kiln.constant("é").numpy() == tf.constant("é").numpy()


def test_traced_functions_agree_with_eager():
    def program(m, x):
        y = m.strings.join([m.strings.upper(x), m.strings.as_string(m.strings.length(x))], separator=":")
        z = m.concat([y, m.reverse(x, [0])], 0)
        return m.strings.reduce_join(m.gather(z, [3, 0, 1]), separator="|"), m.strings.substr(z, 0, 2), z == "b"

    x = kiln.constant(["a", "bc", "déf"])
    eager = program(kiln, x)
    traced = kiln.function(lambda v: program(kiln, v))(x)
    tf_out = program(tf, tf.constant(["a", "bc", "déf"]))
    for e, t, o in zip(eager, traced, tf_out):
        np.testing.assert_array_equal(np.array(e), np.array(t))
        np.testing.assert_array_equal(np.array(e), np.array(o))


def test_string_signature_and_loop_in_a_function():
    @kiln.function(input_signature=[kiln.TensorSpec([None], kiln.string)])
    def f(x):
        acc = kiln.constant("")
        for i in kiln.range(kiln.shape(x)[0]):
            acc = acc + x[i]
        return acc

    assert f(kiln.constant(["a", "b", "c"])).numpy() == b"abc"
    assert f(kiln.constant(["xy"])).numpy() == b"xy"


def test_checkpoints_carry_strings_both_ways(tmp_path):
    # TensorFlow writes a string variable; kiln reads it.
    ckpt = tf.train.Checkpoint(v=tf.Variable(["a", "", "long " * 40]))
    prefix = ckpt.write(str(tmp_path / "tf"))
    reader = kiln.train.load_checkpoint(prefix)
    name = [n for n in reader.get_variable_to_shape_map() if n.startswith("v/")][0]
    np.testing.assert_array_equal(np.array(reader.get_tensor(name), dtype=object),
                                  np.array(tf.train.load_checkpoint(prefix).get_tensor(name), dtype=object))


def test_saved_model_with_string_signature(tmp_path):
    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def __call__(self, x):
            return {"joined": tf.strings.join([x, tf.constant("!")], separator=" "),
                    "lengths": tf.strings.length(x),
                    "first": tf.strings.substr(x, 0, 1)}

    path = str(tmp_path / "m")
    tf.saved_model.save(M(), path)
    x = ["alpha", "béta", ""]
    want = tf.saved_model.load(path).signatures["serving_default"](x=tf.constant(x))
    got = kiln.saved_model.load(path).signatures["serving_default"](x=kiln.constant(x))
    assert sorted(want) == sorted(got)
    for k in want:
        np.testing.assert_array_equal(np.array(got[k]), np.array(want[k]))


def test_graph_def_string_constants_round_trip():
    f = kiln.function(lambda: kiln.strings.join([kiln.constant(["a", "b"]), kiln.constant("c")]))
    graph_def = f.get_concrete_function().graph.as_graph_def()
    text = str(graph_def)
    assert "string_val" in text and "DT_STRING" in text


def test_string_variables_read_and_assign():
    v = kiln.Variable(["a", "b"])
    assert v.dtype == kiln.string
    v.assign(["c", "d"])
    np.testing.assert_array_equal(v.numpy(), np.array([b"c", b"d"], dtype=object))
