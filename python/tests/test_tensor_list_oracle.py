"""TensorList ops (what Keras's recurrent layers and tf.TensorArray put in their loops), called
through kiln.raw_ops and tf.raw_ops alike: each program builds and reads lists the same way in
both, eagerly and inside a kiln.function, and must give TensorFlow's values; bad calls must
raise TensorFlow's error class with its message."""
import re

import numpy as np
import pytest

import kiln

tf = pytest.importorskip("tensorflow")


def _steps(ops, dt):
    x = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
    out = []
    steps = ops.TensorListFromTensor(tensor=x, element_shape=[-1, 2])
    out.append(ops.TensorListLength(input_handle=steps))
    acc = ops.TensorListReserve(element_shape=[2, 2], num_elements=3, element_dtype=dt)
    for i in range(3):
        item = ops.TensorListGetItem(input_handle=steps, index=i, element_shape=[-1, 2], element_dtype=dt)
        acc = ops.TensorListSetItem(input_handle=acc, index=2 - i, item=item * 2.0)
    out.append(ops.TensorListStack(input_handle=acc, element_shape=[2, 2], element_dtype=dt, num_elements=3))
    out.append(ops.TensorListElementShape(input_handle=steps, shape_type=ops_int64(ops)))
    return out


def _unset_items_read_as_zeros(ops, dt):
    lst = ops.TensorListReserve(element_shape=[3], num_elements=4, element_dtype=dt)
    lst = ops.TensorListSetItem(input_handle=lst, index=1, item=[1.0, 2.0, 3.0])
    return [ops.TensorListGetItem(input_handle=lst, index=0, element_shape=[3], element_dtype=dt),
            ops.TensorListStack(input_handle=lst, element_shape=[-1], element_dtype=dt)]


def _push_pop(ops, dt):
    lst = ops.EmptyTensorList(element_shape=[-1], max_num_elements=5, element_dtype=dt)
    for v in ([1.0], [2.0, 3.0], [4.0]):
        lst = ops.TensorListPushBack(input_handle=lst, tensor=v)
    lst, last = ops.TensorListPopBack(input_handle=lst, element_shape=[-1], element_dtype=dt)
    return [last, ops.TensorListLength(input_handle=lst),
            ops.TensorListGetItem(input_handle=lst, index=1, element_shape=[-1], element_dtype=dt)]


def _int_lists(ops, dt):
    x = np.array([[1, 2], [3, 4]], np.int32)
    lst = ops.TensorListFromTensor(tensor=x, element_shape=-1)
    return [ops.TensorListStack(input_handle=lst, element_shape=-1, element_dtype=ops_int32(ops))]


def ops_int64(ops):
    return tf.int64 if ops is tf.raw_ops else kiln.int64


def ops_int32(ops):
    return tf.int32 if ops is tf.raw_ops else kiln.int32


PROGRAMS = [_steps, _unset_items_read_as_zeros, _push_pop, _int_lists]


def _values(outputs):
    return [np.asarray(o) for o in outputs]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.strip("_"))
def test_programs_match_tensorflow(program):
    want = _values(program(tf.raw_ops, tf.float32))
    got = _values(program(kiln.raw_ops, kiln.float32))
    traced = _values(kiln.function(lambda: program(kiln.raw_ops, kiln.float32))())
    for w, g, t in zip(want, got, traced):
        assert g.dtype == w.dtype and g.shape == w.shape, (g, w)
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(t, w)


def _reserved(ops, dt, n=2):
    return ops.TensorListReserve(element_shape=[2], num_elements=n, element_dtype=dt)


BAD = [
    ("read past the end", lambda o, dt: o.TensorListGetItem(input_handle=_reserved(o, dt), index=2,
                                                           element_shape=[2], element_dtype=dt)),
    ("write past the end", lambda o, dt: o.TensorListSetItem(input_handle=_reserved(o, dt), index=5,
                                                            item=np.zeros(2, np.float32))),
    ("negative reserve", lambda o, dt: _reserved(o, dt, -1)),
    ("wrong element dtype", lambda o, dt: o.TensorListStack(input_handle=_reserved(o, dt), element_shape=[2],
                                                           element_dtype=ops_int32(o))),
    ("wrong count", lambda o, dt: o.TensorListStack(input_handle=_reserved(o, dt), element_shape=[2],
                                                   element_dtype=dt, num_elements=3)),
    ("scalar to slice", lambda o, dt: o.TensorListFromTensor(tensor=np.float32(1), element_shape=-1)),
    ("pop from empty", lambda o, dt: o.TensorListPopBack(
        input_handle=o.EmptyTensorList(element_shape=-1, max_num_elements=-1, element_dtype=dt),
        element_shape=-1, element_dtype=dt)),
    ("stack unknown empty", lambda o, dt: o.TensorListStack(
        input_handle=o.EmptyTensorList(element_shape=-1, max_num_elements=-1, element_dtype=dt),
        element_shape=-1, element_dtype=dt)),
    ("incompatible item", lambda o, dt: o.TensorListSetItem(input_handle=_reserved(o, dt), index=0,
                                                           item=np.zeros(3, np.float32))),
]


def _message(e):
    text = str(e).split(" [Op:")[0].strip()
    return re.sub(r"^\{\{function_node [^}]*\}\} ", "", text)  # TensorFlow names its eager wrapper


@pytest.mark.parametrize("name,call", BAD, ids=[b[0] for b in BAD])
def test_bad_calls_raise_tensorflows_errors(name, call):
    with pytest.raises(Exception) as theirs:
        call(tf.raw_ops, tf.float32)
    with pytest.raises(kiln.errors.OpError) as mine:
        call(kiln.raw_ops, kiln.float32)
    assert type(mine.value).__name__ == type(theirs.value).__name__, (mine.value, theirs.value)
    assert _message(mine.value) == _message(theirs.value)


def test_a_variant_is_no_number():
    lst = _reserved(kiln.raw_ops, kiln.float32)
    assert repr(lst) == repr(_reserved(tf.raw_ops, tf.float32)).replace("tf.", "kiln.")
    assert lst.dtype == kiln.variant and kiln.as_dtype("variant") == kiln.variant
    with pytest.raises(kiln.errors.InvalidArgumentError, match="Cannot convert a Tensor of dtype variant"):
        lst.numpy()
    with pytest.raises(kiln.errors.InvalidArgumentError):
        kiln.raw_ops.Cast(x=lst, DstT=kiln.float32)
    with pytest.raises(kiln.errors.InvalidArgumentError, match="cannot produce a variant"):
        kiln.raw_ops.Cast(x=[1.0], DstT=kiln.variant)
