"""TopKV2, GatherNd, ScatterNd, the TensorScatter family, Where, Unique, LinSpace, the segment
reductions and SpaceToBatchND/BatchToSpaceND, called through kiln.raw_ops
and tf.raw_ops with the same arguments: values, dtypes and shapes must agree eagerly and inside
a kiln.function, bad arguments must raise TensorFlow's class and message, gradients must
equal TensorFlow's, and the Python functions over them (tf.gather_nd, tf.math.top_k, ...)
must too."""
import re

import numpy as np
import pytest

import kiln
from conftest import as_list, raw_op_outputs, raw_ops_kwargs_for_tf

tf = pytest.importorskip("tensorflow")
RNG = np.random.default_rng(21)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


TIES = np.array([[3.0, 1.0, 3.0, 2.0, np.nan], [0.0, 5.0, -1.0, 5.0, 5.0]], np.float32)
CASES = [
    ("TopKV2", dict(input=_f32(3, 7), k=3)),
    ("TopKV2", dict(input=TIES, k=3)),
    ("TopKV2", dict(input=np.array([4, 9, 9, -2], np.int64), k=np.int64(4), index_type=kiln.int64)),
    ("TopKV2", dict(input=np.array([[7, 1, 250]], np.uint8), k=2)),
    ("TopKV2", dict(input=_f32(2, 3), k=0)),
    ("GatherNd", dict(params=_f32(4, 3, 2), indices=np.array([[1, 2], [3, 0]], np.int32))),
    ("GatherNd", dict(params=_f32(4, 3), indices=np.array([[[1], [0]], [[3], [3]]], np.int64))),
    ("GatherNd", dict(params=np.arange(6, dtype=np.int32).reshape(2, 3), indices=np.zeros((2, 0), np.int32))),
    ("GatherNd", dict(params=_f32(3, 2), indices=np.array([[5], [1]], np.int32), bad_indices_policy="IGNORE")),
    ("ScatterNd", dict(indices=np.array([[1], [3], [1]], np.int32), updates=np.array([1, 2, 3], np.float32),
                       shape=np.array([5], np.int32))),
    ("ScatterNd", dict(indices=np.array([[0, 1], [2, 0]], np.int64), updates=_f32(2, 4),
                       shape=np.array([3, 2, 4], np.int64))),
    ("TensorScatterUpdate", dict(tensor=_f32(4, 2), indices=np.array([[0], [2]], np.int32), updates=_f32(2, 2))),
    ("TensorScatterUpdate", dict(tensor=np.array([True, False, True]), indices=np.array([[1]], np.int32),
                                 updates=np.array([True]))),
    ("TensorScatterAdd", dict(tensor=np.arange(5, dtype=np.int32), indices=np.array([[1], [1], [4]], np.int32),
                              updates=np.array([10, 20, 30], np.int32))),
    ("TensorScatterSub", dict(tensor=_f32(5), indices=np.array([[0], [3]], np.int64), updates=_f32(2))),
    ("TensorScatterMax", dict(tensor=_f32(5), indices=np.array([[0], [3]], np.int32), updates=_f32(2))),
    ("TensorScatterMin", dict(tensor=_f32(2, 3), indices=np.array([[1]], np.int32), updates=_f32(1, 3))),
    ("Where", dict(condition=np.array([[True, False], [False, True]]))),
    ("Where", dict(condition=np.array([[0.0, 1.5, 0.0], [-2.0, 0.0, np.nan]], np.float32))),
    ("Where", dict(condition=np.zeros((2, 0, 3), np.int32))),
    ("Unique", dict(x=np.array([3, 1, 3, 2, 1], np.int32))),
    ("Unique", dict(x=np.array([0.0, -0.0, np.nan, 1.5, np.nan, 1.5], np.float32), out_idx=kiln.int64)),
    ("Unique", dict(x=np.zeros(0, np.uint8))),
    ("LinSpace", dict(start=np.float32(0), stop=np.float32(1), num=7)),
    ("LinSpace", dict(start=np.float64(-3), stop=np.float64(2.5), num=np.int64(4))),
    ("LinSpace", dict(start=np.float32(2), stop=np.float32(-1), num=1)),
    ("SpaceToBatchND", dict(input=_f32(2, 5, 4, 3), block_shape=np.array([2, 2], np.int32),
                            paddings=np.array([[1, 0], [0, 2]], np.int32))),
    ("SpaceToBatchND", dict(input=np.arange(12, dtype=np.int64).reshape(1, 6, 2), block_shape=np.array([3], np.int64),
                            paddings=np.array([[0, 0]], np.int64))),
    ("BatchToSpaceND", dict(input=_f32(8, 3, 3, 2), block_shape=np.array([2, 2], np.int32),
                            crops=np.array([[1, 0], [0, 2]], np.int32))),
    ("BatchToSpaceND", dict(input=np.arange(12, dtype=np.uint8).reshape(3, 2, 2), block_shape=np.array([3], np.int32),
                            crops=np.array([[1, 1]], np.int32))),
] + [(op, dict(data=np.array([[1, 2], [np.nan, 4], [0.5, -1], [3, 3]], np.float32),
               segment_ids=np.array([0, 0, 2, 2], np.int32))) for op in
     ("SegmentSum", "SegmentMean", "SegmentMax", "SegmentMin", "SegmentProd")] + [
    (op, dict(data=np.array([4, -2, 7, 1, 9], np.int64), segment_ids=np.array([3, 0, -1, 3, 0], np.int64),
              num_segments=5)) for op in ("UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd")] + [
    ("ReverseSequence", dict(input=_f32(2, 3, 4), seq_lengths=np.array([2, 4], np.int32), seq_dim=2)),
    ("ReverseSequence", dict(input=_f32(3, 2, 4), seq_lengths=np.array([0, 3, 1, 2], np.int64), seq_dim=0,
                             batch_dim=2)),
    ("ReverseSequence", dict(input=np.array([["a", "b", "c"], ["d", "e", "f"]], dtype=object),
                             seq_lengths=np.array([3, 1], np.int32), seq_dim=1)),
    ("ReverseSequence", dict(input=np.zeros((0, 5), np.int32), seq_lengths=np.zeros(0, np.int32), seq_dim=1)),
    ("Bincount", dict(arr=np.array([1, 1, 3, 9], np.int32), size=np.int32(5), weights=np.zeros(0, np.float32))),
    ("Bincount", dict(arr=np.array([[1, 1], [3, 0]], np.int32), size=np.int32(4),
                      weights=np.array([[0.5, 1], [2, 4]], np.float64))),
    ("Bincount", dict(arr=np.zeros(0, np.int32), size=np.int32(3), weights=np.zeros(0, np.int64))),
    ("Bincount", dict(arr=np.array([2], np.int32), size=np.int32(0), weights=np.array([7], np.int32))),
]




@pytest.mark.parametrize("traced", [False, True])
@pytest.mark.parametrize("name,kwargs", CASES, ids=[c[0] + str(i) for i, c in enumerate(CASES)])
def test_values_are_tensorflows(name, kwargs, traced):
    for g, w in raw_op_outputs(name, kwargs, traced):
        np.testing.assert_array_equal(g, w)


BAD = [
    ("TopKV2", dict(input=_f32(2, 3), k=4)),
    ("TopKV2", dict(input=_f32(2, 3), k=-1)),
    ("TopKV2", dict(input=np.float32(1), k=1)),
    ("GatherNd", dict(params=_f32(3, 2), indices=np.array([[5], [1]], np.int32))),
    ("GatherNd", dict(params=_f32(3, 2), indices=np.array([[1, 0, 0]], np.int32))),
    ("GatherNd", dict(params=_f32(3, 2), indices=np.array([[-1, 0]], np.int32))),
    ("ScatterNd", dict(indices=np.array([[1], [7]], np.int32), updates=np.array([1, 2], np.float32),
                       shape=np.array([5], np.int32))),
    ("TensorScatterUpdate", dict(tensor=_f32(4), indices=np.array([[4]], np.int32), updates=_f32(1))),
    ("Where", dict(condition=np.int32(3))),
    ("Unique", dict(x=np.zeros((2, 2), np.int32))),
    ("LinSpace", dict(start=np.float32(0), stop=np.float32(1), num=0)),
    ("SegmentSum", dict(data=np.ones(3, np.float32), segment_ids=np.array([0, 2, 1], np.int32))),
    ("SpaceToBatchND", dict(input=_f32(1, 5, 2), block_shape=np.array([2], np.int32),
                            paddings=np.array([[0, 0]], np.int32))),
    ("BatchToSpaceND", dict(input=_f32(3, 2, 2), block_shape=np.array([2], np.int32),
                            crops=np.array([[0, 0]], np.int32))),
    ("SegmentMax", dict(data=np.ones(3, np.float32), segment_ids=np.array([-1, 0, 1], np.int32))),
    ("SegmentMean", dict(data=np.ones(3, np.float32), segment_ids=np.array([0, 1], np.int32))),
    ("UnsortedSegmentMax", dict(data=np.ones(3, np.float32), segment_ids=np.array([0, 5, 1], np.int32),
                                num_segments=2)),
    ("LinSpace", dict(start=np.array([0, 1], np.float32), stop=np.float32(1), num=3)),
    ("GatherNd", dict(params=np.zeros(0, np.float32), indices=np.zeros(0, np.int32))),
    ("GatherNd", dict(params=np.float32(1), indices=np.zeros((1, 0), np.int32))),
    ("ScatterNd", dict(indices=np.array([1, 3], np.int32), updates=np.array([10, 20], np.float32),
                       shape=np.array([5], np.int32))),
    ("ScatterNd", dict(indices=np.array([[1], [2]], np.int32), updates=np.ones((2, 3), np.float32),
                       shape=np.array([5, 2], np.int32))),
    ("ScatterNd", dict(indices=np.zeros((2, 0), np.int32), updates=np.ones((2, 3), np.float32),
                       shape=np.array([3], np.int32))),
    ("ScatterNd", dict(indices=np.int32(1), updates=np.array([10], np.float32), shape=np.array([5], np.int32))),
    ("TensorScatterUpdate", dict(tensor=np.zeros(5, np.float32), indices=np.array([1, 3], np.int32),
                                 updates=np.array([10, 20], np.float32))),
    ("TensorScatterAdd", dict(tensor=np.float32(0), indices=np.zeros(0, np.int32), updates=np.float32(1))),
    ("TensorScatterSub", dict(tensor=np.zeros(4, np.float32), indices=np.zeros(0, np.int32),
                              updates=np.zeros(4, np.float32))),
    ("TensorScatterMax", dict(tensor=np.zeros((2, 0, 1), np.float32), indices=np.zeros(0, np.int32),
                              updates=np.zeros((2, 0, 1), np.float32))),
] + [("ReverseSequence", dict(input=np.zeros((2, 3, 4), np.float32), seq_lengths=np.array(lengths, np.int32), **attrs))
     for lengths, attrs in [([2, 3], dict(seq_dim=5)), ([2, 3], dict(seq_dim=2, batch_dim=2)),
                            ([2, 3, 1], dict(seq_dim=2)), ([2, 9], dict(seq_dim=2)), ([2, -1], dict(seq_dim=2)),
                            ([[2, 1]], dict(seq_dim=2)), ([1, 2], dict(seq_dim=-1)),
                            ([1, 2], dict(seq_dim=1, batch_dim=4))]] + [
    ("Bincount", dict(arr=np.array([1, -1], np.int32), size=np.int32(5), weights=np.zeros(0, np.float32))),
    ("Bincount", dict(arr=np.array([1], np.int32), size=np.int32(-1), weights=np.zeros(0, np.float32))),
    ("Bincount", dict(arr=np.array([1, 2], np.int32), size=np.int32(5), weights=np.ones(3, np.float32))),
    ("Bincount", dict(arr=np.array([1], np.int32), size=np.array([5], np.int32), weights=np.zeros(0, np.float32))),
]


def _message(e):
    text = str(e).split(" [Op:")[0].strip()
    text = re.sub(r"^\{\{function_node [^}]*\}\} ", "", text)
    return re.sub(r", node name: \S+$", "", text)


@pytest.mark.parametrize("name,kwargs", BAD, ids=[c[0] + str(i) for i, c in enumerate(BAD)])
def test_bad_arguments_raise_tensorflows_errors(name, kwargs):
    with pytest.raises(Exception) as theirs:
        getattr(tf.raw_ops, name)(**raw_ops_kwargs_for_tf(kwargs))
    with pytest.raises(kiln.errors.OpError) as ours:
        getattr(kiln.raw_ops, name)(**kwargs)
    assert type(ours.value).__name__ == type(theirs.value).__name__, (ours.value, theirs.value)
    assert _message(ours.value) == _message(theirs.value)


def _grads(m, fn, *xs):
    vs = [m.Variable(x) for x in xs]
    with m.GradientTape() as tape:
        y = fn(m, *vs)
    return [g.numpy() if g is not None else None for g in tape.gradient(y, vs)]


GRADS = [
    ("top_k", lambda m, x: m.math.top_k(x, k=2).values * np.float32(3), [_f32(3, 5)]),
    ("gather_nd", lambda m, p: m.gather_nd(p, [[1, 0], [1, 0], [2, 1]]) * np.float32(2), [_f32(3, 2)]),
    ("scatter_nd", lambda m, u: m.scatter_nd([[1], [3], [1]], u, [5]) * np.arange(5, dtype=np.float32),
     [_f32(3)]),
    ("tensor_scatter_update", lambda m, t, u: m.tensor_scatter_nd_update(t, [[0], [2]], u) * np.float32(3),
     [_f32(4, 2), _f32(2, 2)]),
    ("tensor_scatter_add", lambda m, t, u: m.tensor_scatter_nd_add(t, [[0], [0]], u) * np.float32(3),
     [_f32(4, 2), _f32(2, 2)]),
    ("tensor_scatter_sub", lambda m, t, u: m.tensor_scatter_nd_sub(t, [[3]], u) * np.float32(3),
     [_f32(4, 2), _f32(1, 2)]),
    ("space_to_batch", lambda m, x: m.raw_ops.SpaceToBatchND(input=x, block_shape=[2], paddings=[[1, 1]]) * 2.0,
     [_f32(2, 4, 3)]),
    ("segment_sum", lambda m, d: m.math.segment_sum(d, [0, 0, 2]) * np.float32(2), [_f32(3, 2)]),
    ("tensor_scatter_max", lambda m, t, u: m.tensor_scatter_nd_max(t, [[1], [2]], u) * np.float32(3),
     [_f32(4), _f32(2)]),
    ("segment_mean", lambda m, d: m.math.segment_mean(d, [0, 0, 2, 2, 2]) * np.float32(2), [_f32(5, 2)]),
    ("segment_max_ties", lambda m, d: m.math.segment_max(m.minimum(d, np.float32(0.3)), [0, 0, 1, 1, 3]) * 3.0,
     [_f32(5, 3) * 2]),
    ("segment_min", lambda m, d: m.math.segment_min(d, [0, 1, 1]) * np.float32(3), [_f32(3, 2)]),
    ("segment_prod", lambda m, d: m.math.segment_prod(d * m.constant([[1.0], [0.0], [1.0], [0.0], [0.0], [1.0]]),
                                                      [0, 0, 1, 1, 2, 2]) + d[0, 0], [_f32(6, 2)]),
    ("unsorted_segment_max", lambda m, d: m.math.unsorted_segment_max(d, [2, 0, 2, 2], 4) * np.float32(2),
     [_f32(4, 3)]),
    ("unsorted_segment_min", lambda m, d: m.math.unsorted_segment_min(m.maximum(d, np.float32(-0.3)), [1, 1, 0, 1], 2),
     [_f32(4) * 2]),
    ("unsorted_segment_prod", lambda m, d: m.math.unsorted_segment_prod(d, [1, 0, 1, 1], 3) * np.float32(2),
     [_f32(4, 2)]),
    # A negative id drops its row: that row's gradient is zero (2-D ids over 3-D data, too).
    ("unsorted_segment_sum_dropped", lambda m, d: m.math.unsorted_segment_sum(d, [[1, -1], [0, 1]], 2) * 3.0,
     [_f32(2, 2, 3)]),
    ("unsorted_segment_max_dropped", lambda m, d: m.math.unsorted_segment_max(d, [2, -1, 0, -3], 3) * 2.0,
     [_f32(4, 2)]),
    ("unsorted_segment_prod_dropped", lambda m, d: m.math.unsorted_segment_prod(d, [-1, 0, 0, -2], 2) * 2.0,
     [_f32(4)]),
    ("digamma", lambda m, x: m.math.digamma(x) * np.float32(2), [np.linspace(0.2, 6, 9, dtype=np.float32)]),
    ("zeta_q", lambda m, q: m.math.zeta(np.float32([2.0, 3.5, 5.0]), q), [np.float32([0.5, 1.5, 3.0])]),
    ("polygamma_x", lambda m, x: m.math.polygamma(np.float32([0.0, 1.0, 2.0]), x), [np.float32([0.5, 1.5, 3.0])]),
    ("mirror_pad_reflect", lambda m, x: m.pad(x, [[2, 1], [1, 2]], "REFLECT") * np.arange(7, dtype=np.float32),
     [_f32(4, 4)]),
    ("mirror_pad_symmetric", lambda m, x: m.pad(x, [[0, 3], [2, 2]], "SYMMETRIC") * np.arange(7, dtype=np.float32),
     [_f32(3, 3)]),
    ("reverse_sequence", lambda m, x: m.reverse_sequence(x, [3, 1], seq_axis=1) * np.arange(4, dtype=np.float32),
     [_f32(2, 4, 4)]),
]


@pytest.mark.parametrize("name,fn,xs", GRADS, ids=[g[0] for g in GRADS])
def test_gradients_are_tensorflows(name, fn, xs):
    want = _grads(tf, fn, *xs)
    got = _grads(kiln, fn, *xs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_python_functions_match_tensorflow():
    x = _f32(2, 6)
    for m in (kiln, tf):
        assert hasattr(m.math, "top_k") and hasattr(m.nn, "top_k")
    for got, want in [
        (kiln.math.top_k(x, 3), tf.math.top_k(x, 3)),
        (kiln.where([[True, False], [True, True]]), tf.where([[True, False], [True, True]])),
        (kiln.gather_nd(x, [[0, 1], [1, 5]]), tf.gather_nd(x, [[0, 1], [1, 5]])),
        (kiln.scatter_nd([[0], [2]], [1.5, 2.5], [4]), tf.scatter_nd([[0], [2]], [1.5, 2.5], [4])),
        (kiln.tensor_scatter_nd_add([1, 2, 3], [[2]], [7]), tf.tensor_scatter_nd_add([1, 2, 3], [[2]], [7])),
        (kiln.unique([4, 4, 1]), tf.unique([4, 4, 1])),
        (kiln.math.segment_mean([[1.0], [3.0], [5.0]], [0, 0, 1]), tf.math.segment_mean([[1.0], [3.0], [5.0]], [0, 0, 1])),
        (kiln.math.unsorted_segment_max([1, 9, 4], [1, 1, 0], 3), tf.math.unsorted_segment_max([1, 9, 4], [1, 1, 0], 3)),
        (kiln.linspace(0.0, 1.0, 5), tf.linspace(0.0, 1.0, 5)),
        (kiln.linspace(1, 5, 3), tf.linspace(1, 5, 3)),
        (kiln.math.bincount([1, 1, 4]), tf.math.bincount([1, 1, 4])),
        (kiln.math.bincount([1, 1, 4], minlength=7, dtype=kiln.float32),
         tf.math.bincount([1, 1, 4], minlength=7, dtype=tf.float32)),
        (kiln.math.bincount([[1], [3]], weights=[[0.5], [2.0]], maxlength=2),
         tf.math.bincount([[1], [3]], weights=[[0.5], [2.0]], maxlength=2)),
        (kiln.math.bincount(np.zeros(0, np.int32)), tf.math.bincount(np.zeros(0, np.int32))),
        (kiln.reverse_sequence(x, [2, 6], seq_axis=1), tf.reverse_sequence(x, [2, 6], seq_axis=1)),
    ] + [(kiln.sort(v, axis=a, direction=d), tf.sort(v, axis=a, direction=d))
         for v in (x, np.array([[3, 1, 3, 250]], np.uint8), np.array([[2, -7, 2, 0]], np.int64))
         for a in (-1, 0) for d in ("ASCENDING", "DESCENDING")] + [
        (kiln.argsort(v, direction=d), tf.argsort(v, direction=d))
        for v in (x, np.array([3, 1, 3, 1], np.uint16), np.array([5, 5, 5], np.int32)) for d in ("ASCENDING", "DESCENDING")]:
        for g, w in zip(as_list(got), as_list(want)):
            np.testing.assert_array_equal(g.numpy(), w.numpy())
            assert g.dtype.name == w.dtype.name


def test_tensorflow_resource_gather_loads(tmp_path):
    """tf.gather and tf.nn.embedding_lookup on a variable inside a TensorFlow function emit
    ResourceGather (the variable's handle and the indices); kiln loads and runs it."""
    class Embedding(tf.Module):
        def __init__(self):
            super().__init__()
            self.table = tf.Variable(np.arange(12, dtype=np.float32).reshape(6, 2))

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.int32)])
        def __call__(self, ids):
            return tf.gather(self.table, ids) + tf.nn.embedding_lookup(self.table, ids[:, :1])

    path = str(tmp_path / "embedding")
    tf.saved_model.save(Embedding(), path)
    loaded = tf.saved_model.load(path)
    ops = {n.op for f in loaded.signatures["serving_default"].graph.as_graph_def().library.function
           for n in f.node_def}
    assert "ResourceGather" in ops
    ids = np.array([[0, 5, 2], [3, 3, 1]], np.int32)
    want = loaded.signatures["serving_default"](ids=tf.constant(ids))["output_0"].numpy()
    got = kiln.saved_model.load(path).signatures["serving_default"](ids=ids)["output_0"].numpy()
    np.testing.assert_array_equal(got, want)
    with pytest.raises(kiln.errors.InvalidArgumentError, match="is not in"):
        kiln.saved_model.load(path).signatures["serving_default"](ids=np.array([[0, 6, 1]], np.int32))
