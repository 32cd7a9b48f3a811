"""tf.sparse against TensorFlow in the same test: SparseTensor's constructor, reprs and
attributes, the functions kiln has (eagerly and inside a kiln.function body), and the errors."""
import numpy as np
import pytest

import kiln
from conftest import errors_of

RNG = np.random.default_rng(5)


def _sparse(m, dtype=np.float32):
    return m.sparse.SparseTensor(indices=[[0, 1], [1, 0], [2, 3]], values=np.array([1.5, -2, 4], dtype),
                                 dense_shape=[3, 4])


def _unsorted(m):
    return m.sparse.SparseTensor(indices=[[2, 3], [0, 1], [1, 0]], values=[3.0, 1.0, 2.0], dense_shape=[3, 4])


CASES = [
    ("to_dense", lambda m: m.sparse.to_dense(_sparse(m))),
    ("to_dense_default", lambda m: m.sparse.to_dense(_sparse(m, np.int32), default_value=7)),
    ("to_dense_3d", lambda m: m.sparse.to_dense(m.sparse.SparseTensor([[0, 1, 2], [1, 0, 0]], [True, True], [2, 2, 3]))),
    ("to_dense_empty", lambda m: m.sparse.to_dense(m.sparse.SparseTensor(np.zeros((0, 2), np.int64), np.zeros(0),
                                                                         [2, 0]))),
    ("from_dense_indices", lambda m: m.sparse.from_dense(m.constant([[0, 3, 0], [4, 0, 5]])).indices),
    ("from_dense_values", lambda m: m.sparse.from_dense(m.constant([[0., 3, 0], [4, 0, 5]])).values),
    ("reorder", lambda m: m.sparse.to_dense(m.sparse.reorder(_unsorted(m)))),
    ("reorder_indices", lambda m: m.sparse.reorder(_unsorted(m)).indices),
    ("add_sparse_indices", lambda m: m.sparse.add(_sparse(m), m.sparse.from_dense(m.constant(
        [[0, 1, 0, 0], [0, 0, 0, 0], [9, 0, 0, -4]], m.float32))).indices),
    ("add_sparse_values", lambda m: m.sparse.add(_sparse(m), m.sparse.from_dense(m.constant(
        [[0, 1, 0, 0], [0, 0, 0, 0], [9, 0, 0, -4]], m.float32))).values),
    ("add_dense", lambda m: m.sparse.add(_sparse(m), m.ones([3, 4]))),
    ("matmul", lambda m: m.sparse.sparse_dense_matmul(_sparse(m), np.arange(8, dtype=np.float32).reshape(4, 2))),
    ("matmul_adjoint", lambda m: m.sparse.sparse_dense_matmul(_sparse(m), np.ones((3, 2), np.float32),
                                                              adjoint_a=True)),
    ("reduce_sum", lambda m: m.sparse.reduce_sum(_sparse(m))),
    ("reduce_sum_axis", lambda m: m.sparse.reduce_sum(_sparse(m), axis=1, keepdims=True)),
    ("retain", lambda m: m.sparse.to_dense(m.sparse.retain(_sparse(m), [True, False, True]))),
    ("map_values", lambda m: m.sparse.to_dense(m.sparse.map_values(m.math.square, _sparse(m)))),
    ("transpose", lambda m: m.sparse.to_dense(m.sparse.transpose(_sparse(m)))),
    ("eye", lambda m: m.sparse.to_dense(m.sparse.eye(3, 4, dtype=m.int32))),
    ("mul_dense", lambda m: m.sparse.to_dense(_sparse(m) * m.constant([1., 10, 100, 1000]))),
    ("mul_scalar", lambda m: m.sparse.to_dense(_sparse(m) * 3.0)),
    ("div_scalar", lambda m: (_sparse(m) / 2.0).values),
    ("dense_shape", lambda m: _sparse(m).dense_shape),
]


@pytest.mark.parametrize("name,fn", CASES, ids=[c[0] for c in CASES])
def test_values_eagerly_and_in_a_function(tf, name, fn):
    want = fn(tf).numpy()
    for got in (fn(kiln), kiln.function(lambda: fn(kiln))()):
        got = got.numpy()
        assert got.dtype == want.dtype and got.shape == want.shape, name
        np.testing.assert_array_equal(got, want)


def test_repr_attributes_and_the_tensor_guides_cell(tf):
    for m in (tf, kiln):
        sp = m.sparse.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4])
        assert sp.shape.as_list() == sp.get_shape().as_list() == [3, 4] and sp.dtype == m.int32
        assert sp.indices.dtype == sp.dense_shape.dtype == m.int64
    theirs = str(tf.sparse.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4]))
    ours = str(kiln.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4]))
    assert ours.replace("kiln.", "tf.") == theirs
    assert str(kiln.sparse.to_dense(kiln.SparseTensor([[0, 0], [1, 2]], [1, 2], [3, 4]))).replace("kiln.", "tf.") == \
        str(tf.sparse.to_dense(tf.SparseTensor([[0, 0], [1, 2]], [1, 2], [3, 4])))


@pytest.mark.parametrize("indices", [[[1, 0], [0, 1]], [[0, 1], [0, 1]], [[0, 1], [5, 0]]],
                         ids=["out_of_order", "repeated", "out_of_bounds"])
def test_to_dense_validates_indices_as_tensorflow(tf, indices):
    ours, theirs = errors_of(lambda m: m.sparse.to_dense(m.sparse.SparseTensor(indices, [1.0, 2.0], [3, 4])), tf)
    assert type(ours).__name__ == type(theirs).__name__ == "InvalidArgumentError"
    assert str(theirs).split("}} ")[-1].split(" [Op")[0] == str(ours)


@pytest.mark.parametrize("args", [([[0, 0]], [[1.0]], [3, 4]), ([0, 1], [1.0], [3, 4]), ([[0, 0]], [1.0, 2.0], [3, 4])],
                         ids=["values_rank", "indices_rank", "lengths"])
def test_bad_constructor_arguments_raise_valueerror(tf, args):
    for m in (tf, kiln):
        with pytest.raises(ValueError):
            m.sparse.SparseTensor(*args)


MASKS = [
    ("vector", lambda m: m.boolean_mask([1, 2, 3, 4], np.array([True, False, True, False]))),
    ("rows", lambda m: m.boolean_mask(np.arange(12.).reshape(3, 4), [False, True, True])),
    ("axis1", lambda m: m.boolean_mask(np.arange(24).reshape(2, 3, 4), [True, False, True], axis=1)),
    ("2d_mask", lambda m: m.boolean_mask(np.arange(24).reshape(2, 3, 4), np.eye(2, 3, dtype=bool))),
    ("none", lambda m: m.boolean_mask(np.arange(6.).reshape(3, 2), [False, False, False])),
]


@pytest.mark.parametrize("name,fn", MASKS, ids=[c[0] for c in MASKS])
def test_boolean_mask_eagerly_and_in_a_function(tf, name, fn):
    want = fn(tf).numpy()
    for got in (fn(kiln), kiln.function(lambda: fn(kiln))()):
        assert got.numpy().dtype == want.dtype and got.numpy().shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want)


def test_boolean_mask_bad_arguments(tf):
    for m in (tf, kiln):
        with pytest.raises(ValueError, match="mask cannot be scalar"):
            m.boolean_mask([1, 2], True)
        with pytest.raises(ValueError, match="incompatible"):
            m.boolean_mask([1, 2, 3], [True, False])


RAGGED = [
    ("ragged_to_sparse", lambda m: m.ragged.constant([[[1, 2], [3]], [], [[4, 5, 6]]]).to_sparse()),
    ("ragged_strings_concat", lambda m: m.sparse.concat(sp_inputs=[
        m.ragged.constant([["John"], ["a", "big", "dog"]]).to_sparse(),
        m.ragged.constant([["fell", "asleep"], ["barked"]]).to_sparse()], axis=1)),
    ("concat_axis0", lambda m: m.sparse.concat(0, [_sparse(m), _sparse(m) * 2.0])),
    ("concat_expanding", lambda m: m.sparse.concat(1, [_sparse(m), m.sparse.SparseTensor([[0, 0]], [9.0], [2, 2])],
                                                   expand_nonconcat_dims=True)),
]


@pytest.mark.parametrize("name,fn", RAGGED, ids=[c[0] for c in RAGGED])
def test_ragged_conversions_and_concat(tf, name, fn):
    want, got = fn(tf), fn(kiln)
    for part in ("indices", "values", "dense_shape"):
        a, b = getattr(got, part).numpy(), getattr(want, part).numpy()
        assert a.dtype == b.dtype and a.shape == b.shape, (name, part)
        assert a.tolist() == b.tolist(), (name, part)
    assert str(kiln.sparse.to_dense(got, validate_indices=False)).replace("kiln.", "tf.") == \
        str(tf.sparse.to_dense(want, validate_indices=False))


def test_ragged_from_sparse(tf):
    for m in (tf, kiln):
        st = m.SparseTensor([[0, 0], [0, 1], [2, 0]], [1, 2, 3], [4, 3])
        assert m.RaggedTensor.from_sparse(st).to_list() == [[1, 2], [], [3], []]
    with pytest.raises(kiln.errors.InvalidArgumentError):
        kiln.RaggedTensor.from_sparse(kiln.SparseTensor([[0, 1]], [1], [2, 3]))
