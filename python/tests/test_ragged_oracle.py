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
