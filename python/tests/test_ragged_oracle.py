"""kiln.RaggedTensor and kiln.ragged against TensorFlow's in the same test: constructors,
shapes, conversions, row access, arithmetic on the flat values, reductions over rows,
tf.strings.split / bytes_split / unicode_split, and the reprs ("kiln." read as "tf.")."""
import numpy as np
import pytest

import kiln


def _cases(m):
    r = m.ragged.constant([[1, 2, 3], [], [4, 5]])
    deep = m.ragged.constant([[[1, 2], [3]], [[4]]])
    return [str(r), repr(r), str(r.shape), r.ragged_rank, r.row_splits, r.values, r.to_tensor(),
            r.to_tensor(default_value=-1), r.to_list(), r[0], str(r[1:]), r.row_lengths(), r.nrows(),
            r.bounding_shape(), str(r + 1), str(r * r), str(2 - r), str(m.ragged.map_flat_values(m.square, r)),
            str(m.RaggedTensor.from_row_splits([1, 2, 3, 4], [0, 1, 4])),
            str(m.RaggedTensor.from_row_lengths([1, 2, 3, 4], [3, 1])),
            str(m.RaggedTensor.from_value_rowids([3, 1, 4, 1], [0, 0, 2, 2], nrows=4)),
            str(m.RaggedTensor.from_tensor([[1, 0], [2, 3]], padding=0)),
            str(m.ragged.constant([[1.5], [2.0, 3.0]])), str(m.ragged.constant([["a", "b"], ["c"]])),
            str(deep), str(deep.shape), deep.to_tensor(), deep.ragged_rank,
            m.reduce_sum(r, axis=1), m.reduce_mean(m.ragged.constant([[1., 2.], [3.]]), axis=1),
            m.reduce_max(r, axis=1), m.reduce_sum(r), r.dtype.name, r[2, 1], len(r.numpy()),
            str(m.strings.split(["a b", "c"])), m.strings.split("a b  c"), str(m.strings.split(["a,b", ""], sep=",")),
            str(m.strings.bytes_split(["ab", "c"])), m.strings.unicode_split("h\u00e9llo", "UTF-8"),
            m.ragged.constant([1, 2])]


def _dispatch_cases(m):
    """TensorFlow's ragged dispatch as the ragged_tensor guide uses it."""
    digits = m.ragged.constant([[3, 1, 4, 1], [], [5, 9, 2], [6], []])
    words = m.ragged.constant([["So", "long"], ["thanks", "for", "all", "the", "fish"]])
    floats = m.ragged.constant([[1.5, -2.0], [], [0.25]])
    table = m.reshape(m.range(16.0), [8, 2])
    vectors = m.nn.embedding_lookup(table, m.ragged.constant([[1, 2], [3], [7, 0, 5]]))
    return [m.add(digits, 3), m.multiply(2, digits), m.maximum(digits, 4), m.math.square(digits), m.abs(floats),
            m.math.exp(floats), m.negative(floats), m.add(floats, floats), m.equal(digits, 1),
            m.concat([digits, [[5, 3]]], axis=0), m.concat([words, words], axis=1),
            m.concat([m.fill([words.nrows(), 1], "#"), words, m.fill([2, 1], "$")], axis=1),
            m.concat([digits, digits], axis=-1), m.tile(digits, [1, 2]), m.tile(digits, [2, 1]),
            m.tile(digits, [2, 3]), m.strings.substr(words, 0, 2), m.strings.upper(words), m.strings.length(words),
            m.strings.join([words[:, :-1], words[:, 1:]], separator="+"), m.map_fn(m.math.square, digits),
            m.map_fn(m.reduce_sum, digits, fn_output_signature=m.int32), vectors,
            m.reduce_mean(vectors, axis=1), m.concat([vectors, vectors[:, :1]], axis=1), digits[:, 1:],
            digits[1:4, :-1], digits[:, ::2], digits[:, ::-1], digits[:, 5:], m.math.sin(floats), m.cast(digits, m.float32),
            m.math.is_nan(floats), m.nn.relu(floats), m.math.log1p(m.abs(floats))]


def test_ragged_dispatch_matches_tensorflow(tf):
    theirs, ours = _dispatch_cases(tf), _dispatch_cases(kiln)
    assert len(ours) == len(theirs)
    for i, (o, t) in enumerate(zip(ours, theirs)):
        assert isinstance(o, kiln.RaggedTensor) == isinstance(t, tf.RaggedTensor), (i, o, t)
        if isinstance(t, tf.RaggedTensor):
            assert repr(o).replace("kiln.", "tf.") == repr(t), (i, o, t)
            assert o.flat_values.dtype.name == t.flat_values.dtype.name, (i, o, t)
        else:
            assert o.dtype.name == t.dtype.name and np.array_equal(o.numpy(), t.numpy()), (i, o, t)


def test_ragged_dispatch_refuses_what_it_cannot_do():
    a = kiln.ragged.constant([[1, 2], [3]])
    with pytest.raises(ValueError, match="same number of rows"):
        kiln.concat([a, kiln.ragged.constant([[1]])], axis=1)
    with pytest.raises(ValueError, match="same rows"):
        kiln.strings.join([kiln.ragged.constant([["a"], ["b", "c"]]), kiln.ragged.constant([["a", "b"], ["c"]])])
    with pytest.raises(ValueError, match="fn returned a scalar"):
        kiln.map_fn(kiln.reduce_sum, a)
    with pytest.raises(NotImplementedError):
        kiln.concat([kiln.ragged.constant([[[1]], [[2], [3]]]), kiln.ragged.constant([[[1]], [[2]]])], axis=0)


def test_values_and_texts_match_tensorflow(tf):
    theirs, ours = _cases(tf), _cases(kiln)
    assert len(ours) == len(theirs)
    for i, (o, t) in enumerate(zip(ours, theirs)):
        if hasattr(t, "numpy"):
            o, t = o.numpy(), t.numpy()
            assert o.dtype == t.dtype and o.shape == t.shape and np.array_equal(o, t), (i, o, t)
        elif isinstance(t, str):
            assert o.replace("kiln.", "tf.") == t, (i, o, t)
        else:
            assert o == t, (i, o, t)


@pytest.mark.parametrize("call", [lambda m: m.RaggedTensor.from_row_splits([1, 2, 3], [0, 2, 1]),
                                  lambda m: m.RaggedTensor.from_row_splits([1, 2, 3], [0, 2])],
                         ids=["decreasing_splits", "splits_short_of_values"])
def test_bad_partitions_are_errors(tf, call):
    with pytest.raises(Exception):
        call(tf)
    with pytest.raises(ValueError):
        call(kiln)
