"""kiln.TensorArray against tf.TensorArray in the same test: eager arrays (writes, reads that
clear, stack, gather, concat, unstack, dynamic size), arrays carried by AutoGraph loops inside
functions (the guide's patterns), and TensorFlow's errors."""
import numpy as np
import pytest

import kiln
from conftest import errors_of


def eager_writes(m):
    ta = m.TensorArray(m.float32, size=3)
    ta = ta.write(0, [1., 2.])
    ta = ta.write(2, [5., 6.])
    return [ta.stack(), ta.read(2), ta.size(), ta.gather([2, 0]), ta.concat()]


def dynamic_size(m):
    ta = m.TensorArray(m.int32, size=0, dynamic_size=True)
    for i in range(4):
        ta = ta.write(i, i * i)
    return [ta.stack(), ta.size()]


def unstack_then_read(m):
    u = m.TensorArray(m.float32, size=0, dynamic_size=True).unstack(m.constant([[1., 2.], [3., 4.]]))
    return [u.read(1), u.size(), u.read(0)]


def keep_after_read(m):
    ta = m.TensorArray(m.float32, size=2, clear_after_read=False).write(0, 3.0).write(1, 4.0)
    return [ta.read(0), ta.stack()]


def squares_in_a_loop(m):
    @m.function
    def squares(n):
        ta = m.TensorArray(m.float32, size=0, dynamic_size=True)
        for i in m.range(n):
            ta = ta.write(i, m.cast(i, m.float32) ** 2)
        return ta.stack()
    return [squares(m.constant(5)), squares(m.constant(0))]


def rnn_loop(m):
    @m.function
    def rnn(x):
        ta = m.TensorArray(m.float32, size=x.shape[0])
        state = m.zeros([2])
        for i in m.range(x.shape[0]):
            state = m.tanh(state + x[i])
            ta = ta.write(i, state)
        return m.transpose(ta.stack())
    return [rnn(m.constant(np.arange(8, dtype=np.float32).reshape(4, 2) / 8))]


def reads_in_a_loop(m):
    @m.function
    def fib(n):
        ta = m.TensorArray(m.int32, size=n, element_shape=[])
        ta = ta.write(0, 0)
        ta = ta.write(1, 1)
        for i in m.range(2, n):
            ta = ta.write(i, ta.read(i - 1) + ta.read(i - 2))
        return ta.stack()
    return [fib(m.constant(10))]


CASES = [eager_writes, dynamic_size, unstack_then_read, keep_after_read, squares_in_a_loop, rnn_loop, reads_in_a_loop]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_values_match_tensorflow(tf, case):
    for ours, theirs in zip(case(kiln), case(tf)):
        ours, theirs = ours.numpy(), theirs.numpy()
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)


BAD = [
    ("write_past_the_end", lambda m: m.TensorArray(m.float32, size=2).write(3, 1.0)),
    ("read_past_the_end", lambda m: m.TensorArray(m.float32, size=2).read(5)),
    ("element_shapes_differ", lambda m: m.TensorArray(m.float32, size=2).write(0, [1.0, 2.0]).write(1, [1., 2., 3.])),
    ("no_size", lambda m: m.TensorArray(m.float32)),
]


@pytest.mark.parametrize("name,call", BAD, ids=[b[0] for b in BAD])
def test_errors_match_tensorflow(tf, name, call):
    ours, theirs = errors_of(call, tf)
    assert str(ours) == str(theirs)
