"""kiln.raw_ops, generated from the registry's rows, against TensorFlow's tf.raw_ops: the same
functions (names, keyword arguments, defaults), the same results and the same errors."""
import inspect

import numpy as np
import pytest

import kiln
from kiln import raw_ops

tf = pytest.importorskip("tensorflow")

# Ops whose raw_ops signature still differs from TensorFlow's, with the reason. Every other op
# kiln can run by name must take exactly TensorFlow's arguments.
_KNOWN_SIGNATURE_GAPS = {
    "Equal": "incompatible_shape_error=False (a scalar instead of an error) is not implemented",
    "NotEqual": "incompatible_shape_error=False (a scalar instead of an error) is not implemented",
    "CollectiveGatherV2": "ordering tokens, communication hints and is_stateless are not implemented",
    "CollectiveReduceV2": "ordering tokens, communication hints, is_stateless and subdivisions are not implemented",
}


def _runnable():
    return [name for name in raw_ops.__all__ if hasattr(tf.raw_ops, name)]


def test_every_runnable_op_is_generated():
    catalog = kiln._core._op_catalog()
    runnable = sorted(op["name"] for op in catalog if op["runnable"] or op["variable_arg"])
    assert raw_ops.__all__ == runnable
    assert len(runnable) > 80
    for op in catalog:
        assert hasattr(raw_ops, op["name"]) == (op["runnable"] or bool(op["variable_arg"])), op["name"]


@pytest.mark.parametrize("name", _runnable())
def test_signature_is_tensorflows(name):
    ours = inspect.signature(getattr(raw_ops, name)).parameters
    theirs = inspect.signature(getattr(tf.raw_ops, name)).parameters
    if name in _KNOWN_SIGNATURE_GAPS:
        assert set(ours) < set(theirs), name  # a strict subset: the gap is only what is listed
        return
    assert set(ours) == set(theirs), "%s: kiln %s, TensorFlow %s" % (name, list(ours), list(theirs))
    for p in ours:
        a, b = ours[p].default, theirs[p].default
        if b is inspect.Parameter.empty:
            assert a is inspect.Parameter.empty, (name, p)
        elif isinstance(b, tf.dtypes.DType):
            assert a.name == b.name, (name, p, a, b)
        else:
            assert a == b and type(a) is type(b), "%s.%s default: kiln %r, TensorFlow %r" % (name, p, a, b)


def _same(ours, theirs):
    if isinstance(theirs, (list, tuple)):
        assert type(ours).__name__ == type(theirs).__name__ and len(ours) == len(theirs)
        if hasattr(theirs, "_fields"):
            assert ours._fields == theirs._fields
        for o, t in zip(ours, theirs):
            _same(o, t)
        return
    assert ours.dtype.name == theirs.dtype.name
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("name,kwargs", [
    ("AddV2", dict(x=[1.5, 2.0], y=[3.0, -1.0])),
    ("Atan2", dict(y=[1.0, -1.0], x=[0.5, 0.5])),
    ("ConcatV2", dict(values=[[1, 2], [3]], axis=0)),
    ("Pack", dict(values=[[1, 2], [3, 4]], axis=1)),
    ("Sum", dict(input=[[1, 2], [3, 4]], axis=1, keep_dims=True)),
    ("ExpandDims", dict(input=[1, 2], axis=0)),
    ("Squeeze", dict(input=[[[1], [2]]], axis=[2])),
    ("BroadcastGradientArgs", dict(s0=[2, 1, 3], s1=[3])),
    ("Cast", dict(x=np.array([1.0000000999999, 1.9999999999, 1e300], np.float64), DstT=kiln.float32,
                  Truncate=True)),
    ("MatMul", dict(a=[[1.0, 2.0]], b=[[3.0, 4.0]], transpose_b=True, grad_a=True)),
    ("FusedBatchNormV3", dict(x=np.ones([1, 2, 2, 3], np.float32), scale=[1.0, 2.0, 3.0], offset=[0.0, 0.0, 1.0],
                              mean=[0.5, 0.0, 1.0], variance=[1.0, 4.0, 0.25], is_training=False)),
    ("NoOp", dict()),
])
def test_results_are_tensorflows(name, kwargs):
    def for_tf(v):
        return getattr(tf, v.name) if isinstance(v, kiln.DType) else v
    ours = getattr(raw_ops, name)(**kwargs)
    theirs = getattr(tf.raw_ops, name)(**{k: for_tf(v) for k, v in kwargs.items()})
    if theirs is None:
        assert ours is None
    else:
        _same(ours, theirs)


def _error(fn):
    with pytest.raises(Exception) as e:
        fn()
    return type(e.value).__name__, str(e.value)


@pytest.mark.parametrize("call", [
    lambda ops: ops.AddV2(1, 2),
    lambda ops: ops.AddV2(x=1),
    lambda ops: ops.AddV2(x=1, y=2, z=3),
    lambda ops: ops.Cast(x=[1]),
    lambda ops: ops.ExpandDims(input=[1], dim=0),
])
def test_argument_errors_are_tensorflows(call):
    assert _error(lambda: call(raw_ops)) == _error(lambda: call(tf.raw_ops))


def test_op_errors_keep_their_class():
    assert _error(lambda: raw_ops.AddV2(x=[1, 2], y=[1, 2, 3]))[0] == "InvalidArgumentError"
    assert _error(lambda: raw_ops.MatMul(a=[[1.0]], b=[[1]]))[0] == "InvalidArgumentError"


def test_traced_raw_op_is_a_node_of_the_graph():
    @kiln.function
    def f(a):
        return raw_ops.MatMul(a=a, b=a, transpose_b=True) + raw_ops.Sum(input=a, axis=[0, 1])

    x = kiln.constant([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(f(x).numpy(), (x.numpy() @ x.numpy().T) + 10.0)
    ops = [op.type for op in f.get_concrete_function(x).graph.get_operations()]
    assert "MatMul" in ops and "Sum" in ops


def test_missing_op_names_tensorflow():
    with pytest.raises(AttributeError, match="tf.raw_ops.NotAnOp is not implemented"):
        raw_ops.NotAnOp  # noqa: B018


def test_docstrings_come_from_the_row():
    doc = raw_ops.Sum.__doc__
    assert "axis" in doc and "keep_dims: bool, default false" in doc and "Gradient: defined" in doc
    assert raw_ops.Sum.__name__ == "Sum"


def test_ops_on_variables_take_the_variable_as_tensorflow_takes_its_handle():
    """`resource=` (`var=`) is the kiln.Variable; a dtype TensorFlow derives from it is not asked."""
    values = np.arange(6, dtype=np.float32).reshape(3, 2)
    results = []
    for m in (kiln, tf):
        v = m.Variable(values)
        handle = v if m is kiln else v.handle
        m.raw_ops.AssignAddVariableOp(resource=handle, value=np.ones([3, 2], np.float32))
        m.raw_ops.ResourceScatterMul(resource=handle, indices=[2, 0], updates=np.full([2, 2], 3, np.float32))
        m.raw_ops.ResourceApplyGradientDescent(var=handle, alpha=np.float32(0.5), delta=values)
        gathered = m.raw_ops.ResourceGather(resource=handle, indices=[[1, 2]], dtype=m.float32)
        results.append((v.numpy(), gathered.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_array_equal(ours, theirs)
    with pytest.raises(TypeError, match="'resource' must be a kiln.Variable"):
        raw_ops.AssignVariableOp(resource=np.float32(1), value=np.float32(2))
