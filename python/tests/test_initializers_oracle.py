"""tf.zeros_initializer, ones_initializer, constant_initializer, random_normal_initializer and
random_uniform_initializer against TensorFlow's: values (a seeded initializer gives TensorFlow's
bits), configs and error classes."""
import pytest

import kiln

tf = pytest.importorskip("tensorflow")

CASES = [
    lambda m: m.random_normal_initializer(seed=1)((2, 2)),
    lambda m: m.random_normal_initializer(1.0, 2.0, seed=7)((3,), m.float64),
    lambda m: m.random_uniform_initializer(-1, 1, seed=3)((2, 5)),
    lambda m: m.random_uniform_initializer(0, 10, seed=3)((4,), m.int32),
    lambda m: m.random_uniform_initializer(-1, 1, seed=3).get_config(),
    lambda m: m.random_uniform_initializer.from_config({"minval": 0, "maxval": 2, "seed": 9})((2,)),
    lambda m: m.random_normal_initializer(seed=4).get_config(),
    lambda m: m.zeros_initializer()(shape=[2], dtype=m.int32),
    lambda m: m.ones_initializer()([1, 2], m.bool),
    lambda m: m.ones_initializer()([2, 0]),
    lambda m: m.constant_initializer([1, 2])((2,)),
    lambda m: m.constant_initializer(3.0)((2, 1), m.float64),
    lambda m: m.constant_initializer([[1.5, 2.5]]).get_config(),
    lambda m: m.Variable(m.random_normal_initializer(seed=5)(shape=(2,))).read_value(),
    lambda m: m.zeros_initializer()((2,), m.float32, partition_shape=(1,)),
    # bad arguments
    lambda m: m.random_normal_initializer()((2,), m.int32),
    lambda m: m.zeros_initializer()((2,), m.string),
    lambda m: m.constant_initializer({1: 2}),
    lambda m: m.zeros_initializer()((2,), m.float32, bogus=1),
    lambda m: m.constant_initializer([1, 2, 3])((2,)),
    lambda m: m.constant_initializer(1.0)((2,), partition_shape=(1,)),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_initializers_are_tensorflows(oracle, case):
    oracle(CASES[case], where="case %d" % case)


def test_unseeded_initializers_draw_new_numbers():
    init = kiln.random_uniform_initializer()
    a, b = init((64,)).numpy(), init((64,)).numpy()
    assert (a != b).any() and (abs(a) <= 0.05).all()
