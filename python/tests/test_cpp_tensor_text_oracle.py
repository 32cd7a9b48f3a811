"""The C++ core's text of a tensor (kiln::Tensor::str(), what C++ and R print) against
TensorFlow's str of the same tensor: numpy's formatting, run here, is the oracle."""
import numpy as np
import pytest
import tensorflow as tf

import kiln

CASES = [
    (0.30000000000000004, "float64"),  # a scalar prints Python's shortest repr
    (12.0, "float64"),
    (1e-05, "float64"),
    (1.5e20, "float64"),
    (-0.0, "float64"),
    (0.1, "float32"),
    (1.1, "float16"),
    (5.5, "float64"),
    ([0.1 + 0.2], "float64"),  # an array rounds to 8 digits, no trailing zeros
    ([53.452800000000011, 1.0], "float64"),
    ([1.5, np.nan, np.inf], "float64"),
    ([-1.25, np.nan, 100.0], "float64"),
    ([np.nan, -np.inf], "float64"),
    ([1.5, -np.inf], "float64"),
    ([1.0, -1.0], "float64"),
    ([[12.0]], "float64"),
    ([1.5, 2.25], "float32"),
    ([1e-5, 1.0], "float64"),
    ([1.1, 2.0], "float16"),
    ([7, 7, 1], "int32"),
    ([True, False], "bool"),
    ([[1, -20], [300, 4]], "int64"),
]


@pytest.mark.parametrize("value,dtype", CASES)
def test_cpp_text_matches_tensorflow(value, dtype):
    ours = kiln.constant(value, dtype=getattr(kiln, dtype))._str()
    theirs = str(tf.constant(value, dtype=getattr(tf, dtype)))
    assert ours.replace("kiln.Tensor(", "tf.Tensor(", 1) == theirs
