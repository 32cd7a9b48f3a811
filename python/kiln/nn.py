"""kiln.nn: TensorFlow's tf.nn names kiln has."""
from . import _core
from ._convert import convert_to_tensor
from ._window import _four
from ._ops import relu, relu6, sigmoid, tanh, softmax, log_softmax, sparse_softmax_cross_entropy_with_logits, _t
from ._ops_indexing import top_k  # noqa: F401
from ._ops_breadth import (elu, selu, leaky_relu, softplus, softsign, gelu, depthwise_conv2d,  # noqa: F401
                           conv2d_transpose, conv3d, max_pool3d, avg_pool3d)
from ._random import get_seed
from ._conv_general import (avg_pool, conv1d, conv1d_transpose, conv3d_transpose, conv_transpose,  # noqa: F401
                            convolution, depth_to_space, max_pool, pool, separable_conv2d, space_to_depth)
from ._ops_composite import compute_average_loss, scale_regularization_loss  # noqa: F401
from ._ops_composite import (moments, l2_normalize, sigmoid_cross_entropy_with_logits,  # noqa: F401
                             softmax_cross_entropy_with_logits, embedding_lookup, batch_normalization, silu, swish,
                             l2_loss, log_sigmoid as _log_sigmoid)

__all__ = ["relu", "relu6", "sigmoid", "tanh", "softmax", "log_softmax", "sparse_softmax_cross_entropy_with_logits", "dropout",
           "bias_add", "conv2d", "max_pool2d", "avg_pool2d", "max_pool", "avg_pool", "elu", "selu", "leaky_relu",
           "softplus", "softsign", "gelu", "depthwise_conv2d", "conv2d_transpose", "conv3d", "max_pool3d", "avg_pool3d",
           "moments", "l2_normalize", "sigmoid_cross_entropy_with_logits", "softmax_cross_entropy_with_logits",
           "embedding_lookup", "batch_normalization", "silu", "swish", "l2_loss", "convolution", "conv1d", "conv_transpose",
           "conv1d_transpose", "conv3d_transpose", "pool", "separable_conv2d", "depth_to_space", "space_to_depth"]


def _nhwc(data_format):
    if data_format not in (None, "NHWC"):
        raise NotImplementedError("kiln supports data_format NHWC only, got %r" % (data_format,))


def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):  # noqa: A002
    """2-D convolution of NHWC (or NCHW) images with [height, width, in, out] filters (tf.nn.conv2d)."""
    if data_format == "NCHW":
        from ._conv_general import convolution
        return convolution(input, filters, strides, padding, data_format, dilations)
    _nhwc(data_format)
    if not isinstance(padding, str):
        raise NotImplementedError("kiln.nn.conv2d takes padding 'SAME' or 'VALID'")
    return _core.conv2d(convert_to_tensor(input), convert_to_tensor(filters), _four(strides, "strides"), padding,
                        _four(1 if dilations is None else dilations, "dilations"))


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    _nhwc(data_format)
    return _core.max_pool2d(convert_to_tensor(input), _four(ksize, "ksize"), _four(strides, "strides"), padding)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    _nhwc(data_format)
    return _core.avg_pool2d(convert_to_tensor(input), _four(ksize, "ksize"), _four(strides, "strides"), padding)


def bias_add(value, bias, data_format=None, name=None):
    """value + bias along the channel dimension: the last one (NHWC, N..C and the other
    channels-last formats) or the second (NCHW, NC..: the bias broadcast over the rest)."""
    if data_format is not None and data_format.startswith("NC"):
        from ._ops import reshape
        value, bias = convert_to_tensor(value), convert_to_tensor(bias)
        rank = value.shape.rank
        if rank is None or rank < 2:
            raise ValueError("bias_add with data_format %s needs an input of rank 2 or more" % data_format)
        if bias.shape.rank != 1:
            raise ValueError("Shape must be rank 1 but is rank %s for bias_add" % bias.shape.rank)
        return value + reshape(bias, [-1] + [1] * (rank - 2))
    if data_format not in (None, "NHWC", "N..C", "NWC", "NDHWC"):
        raise ValueError("Unknown data_format for bias_add: %r" % (data_format,))
    return _core.bias_add(convert_to_tensor(value), convert_to_tensor(bias))


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """Zeroes each element with probability `rate` and scales the rest by 1 / (1 - rate), with
    TensorFlow's ops and random numbers (seed as tf.random.uniform takes it)."""
    import numbers
    from . import random, raw_ops
    from ._ops import shape, where
    if noise_shape is not None:
        raise NotImplementedError("kiln.nn.dropout with noise_shape is not implemented")
    is_rate_number = isinstance(rate, numbers.Real)
    if is_rate_number and not 0 <= rate < 1:
        raise ValueError("`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate=%r" % rate)
    x = convert_to_tensor(x)
    if not x.dtype.is_floating:
        raise ValueError("`x.dtype` must be a floating point tensor as `x` will be scaled. Received: x_dtype=%s"
                         % x.dtype)
    if is_rate_number and rate == 0:
        get_seed(seed)  # TensorFlow steps its seed sequence here too
        return x
    if is_rate_number:
        ret = raw_ops.Mul(x=x, y=convert_to_tensor(1 / (1 - rate), dtype=x.dtype))
    else:
        rate = convert_to_tensor(rate, dtype=x.dtype)
        ret = x / (convert_to_tensor(1, dtype=x.dtype) - rate)
    keep = random.uniform(shape(x), seed=seed, dtype=x.dtype) >= rate
    return where(keep, ret, convert_to_tensor(0, dtype=x.dtype))

def _stateless_dropout(x, rate, seed, rng_alg=None, noise_shape=None, name=None):
    """tf.nn.experimental.stateless_dropout: dropout whose mask is a function of `seed` (TensorFlow's
    rule: keep where stateless_uniform(noise_shape, seed) >= rate, scaling kept values by
    1 / (1 - rate))."""
    del name
    import numbers
    from . import random
    from ._ops import shape, where, zeros_like, cast
    x = convert_to_tensor(x)
    if not x.dtype.is_floating:
        raise ValueError("`x.dtype` must be a floating point tensor as `x` will be scaled. Received: x_dtype=%s"
                         % x.dtype)
    if isinstance(rate, numbers.Real):
        if not 0 <= rate < 1:
            raise ValueError("`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate=%r"
                             % rate)
        if rate == 0:
            return x
    rate_t = cast(convert_to_tensor(rate), x.dtype)
    scaled = x * (convert_to_tensor(1, x.dtype) / (convert_to_tensor(1, x.dtype) - rate_t))
    noise = shape(x) if noise_shape is None else noise_shape
    keep = random.stateless_uniform(noise, seed, dtype=x.dtype, alg=rng_alg or "auto_select") >= rate_t
    return where(keep, scaled, zeros_like(scaled))


class experimental:  # noqa: N801 (TensorFlow's namespace)
    stateless_dropout = staticmethod(_stateless_dropout)


def in_top_k(targets, predictions, k, name=None):
    """tf.nn.in_top_k (TensorFlow 2's argument order): tf.math.in_top_k."""
    from ._array_helpers import in_top_k as _in_top_k
    return _in_top_k(targets, predictions, k, name)
