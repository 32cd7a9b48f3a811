"""kiln.nn: TensorFlow's tf.nn names kiln has."""
from . import _core
from ._convert import convert_to_tensor
from ._ops import relu, sigmoid, tanh, softmax, log_softmax, sparse_softmax_cross_entropy_with_logits, _t
from ._random import get_seed

__all__ = ["relu", "sigmoid", "tanh", "softmax", "log_softmax", "sparse_softmax_cross_entropy_with_logits", "dropout",
           "bias_add"]


def bias_add(value, bias, data_format=None, name=None):
    """value + bias along value's last dimension (NHWC; NCHW is not supported by kiln)."""
    if data_format not in (None, "NHWC", "N..C"):
        raise NotImplementedError("kiln.nn.bias_add supports data_format NHWC only, got %r" % (data_format,))
    value = convert_to_tensor(value)
    return _core.bias_add(value, convert_to_tensor(bias, dtype=value.dtype))


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    if noise_shape is not None:
        raise NotImplementedError("kiln.nn.dropout with noise_shape is not implemented")
    rate = float(rate)
    if not 0 <= rate < 1:
        raise ValueError("`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate=%r" % rate)
    return _core.dropout(_t(x), rate, get_seed(seed))
