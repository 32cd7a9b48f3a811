"""tf.nn's rank-generic convolution and pooling (convolution, conv1d, conv_transpose, pool,
separable_conv2d) and depth_to_space/space_to_depth, composed over kiln's 2-D and 3-D kernels:
- 1-D runs as 2-D over a height of one (TensorFlow's own conv1d does the same);
- channels-first layouts (NCW, NCHW, NCDHW) are transposed to channels-last and back;
- grouped convolution (input channels a multiple of the filter's) runs one convolution per group.
"""
from ._convert import convert_to_tensor

_CHANNELS_FIRST = ("NCW", "NCHW", "NCDHW")
_CHANNELS_LAST = {1: "NWC", 2: "NHWC", 3: "NDHWC"}


def _k():
    import kiln
    return kiln


def _spatial(value, n, name, default=1):
    """An int or n ints (or n + 2 with ones at the ends) -> n ints."""
    if value is None:
        return [default] * n
    if isinstance(value, int) or (hasattr(value, "__int__") and not hasattr(value, "__len__")):
        return [int(value)] * n
    value = [int(v) for v in value]
    if len(value) == 1:
        return value * n
    if len(value) == n:
        return value
    if len(value) == n + 2:
        return value[1:-1]
    raise ValueError("%s should be of length 1, %d or %d. Received: %s=%s" % (name, n, n + 2, name, value))


def _rank_of(x, data_format, what):
    rank = x.shape.rank
    if rank is None:
        raise ValueError("%s needs an input of known rank" % what)
    n = rank - 2
    if n not in (1, 2, 3):
        raise ValueError("%s: input must be 3-D, 4-D or 5-D (batch, spatial..., channels); got rank %d" % (what, rank))
    if data_format not in (None, _CHANNELS_LAST[n], _CHANNELS_FIRST[n - 1], "N..C"):
        raise ValueError("%s: data_format %r does not fit a %d-D input" % (what, data_format, rank))
    return n


def _to_last(x, n):
    return _k().transpose(x, [0] + list(range(2, n + 2)) + [1])


def _to_first(x, n):
    return _k().transpose(x, [0, n + 1] + list(range(1, n + 1)))


def _channels_last(fn, x, n, data_format):
    """fn over x in channels-last layout, whatever data_format x is in."""
    if data_format in _CHANNELS_FIRST:
        return _to_first(fn(_to_last(x, n)), n)
    return fn(x)


def _conv_last(x, filters, n, strides, padding, dilations):
    """A channels-last convolution of rank n (grouped when the filter has fewer input channels)."""
    k = _k()
    in_channels, filter_in = x.shape[-1], filters.shape[-2]
    if in_channels is not None and filter_in is not None and in_channels != filter_in:
        if in_channels % filter_in:
            raise ValueError("The number of input channels (%d) is not a multiple of the filter's (%d)"
                             % (in_channels, filter_in))
        groups = in_channels // filter_in
        xs = k.split(x, groups, axis=-1)
        fs = k.split(filters, groups, axis=-1)
        return k.concat([_conv_last(a, b, n, strides, padding, dilations) for a, b in zip(xs, fs)], axis=-1)
    if n == 1:
        y = k.nn.conv2d(k.expand_dims(x, 1), k.expand_dims(filters, 0), [1] + strides, padding,
                        dilations=[1] + dilations)
        return k.squeeze(y, [1])
    if n == 2:
        return k.nn.conv2d(x, filters, strides, padding, dilations=dilations)
    return k.nn.conv3d(x, filters, [1] + strides + [1], padding, dilations=[1] + dilations + [1])


def convolution(input, filters, strides=None, padding="VALID", data_format=None, dilations=None,  # noqa: A002
                name=None):
    """tf.nn.convolution: an N-D convolution (N = 1, 2, 3), any of TensorFlow's data formats."""
    del name
    x, filters = convert_to_tensor(input), convert_to_tensor(filters)
    n = _rank_of(x, data_format, "convolution")
    strides, dilations = _spatial(strides, n, "strides"), _spatial(dilations, n, "dilations")
    padding = padding.upper() if isinstance(padding, str) else padding
    return _channels_last(lambda t: _conv_last(t, filters, n, strides, padding, dilations), x, n, data_format)


def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None, name=None):  # noqa: A002
    """tf.nn.conv1d: [batch, width, in] (or NCW) with [width, in, out] filters."""
    return convolution(input, filters, stride, padding, data_format, dilations, name)


def conv_transpose(input, filters, output_shape, strides, padding="SAME", data_format=None,  # noqa: A002
                   dilations=None, name=None):
    """tf.nn.conv_transpose: the gradient of convolution with respect to its input (N = 1, 2, 3)."""
    del name
    k = _k()
    x, filters = convert_to_tensor(input), convert_to_tensor(filters)
    n = _rank_of(x, data_format, "conv_transpose")
    strides, dilations = _spatial(strides, n, "strides"), _spatial(dilations, n, "dilations")
    output_shape = k.cast(convert_to_tensor(output_shape), k.int32)
    if data_format in _CHANNELS_FIRST:  # the output shape is given channels-first too
        output_shape = k.gather(output_shape, [0] + list(range(2, n + 2)) + [1])

    def run(t):
        if n == 1:
            shape = k.concat([output_shape[:1], [1], output_shape[1:]], 0)
            y = k.nn.conv2d_transpose(k.expand_dims(t, 1), k.expand_dims(filters, 0), shape, [1] + strides, padding,
                                      dilations=[1] + dilations)
            return k.squeeze(y, [1])
        if n == 2:
            return k.nn.conv2d_transpose(t, filters, output_shape, strides, padding, dilations=dilations)
        return k.raw_ops.Conv3DBackpropInputV2(input_sizes=output_shape, filter=filters, out_backprop=t,
                                               strides=[1] + strides + [1], padding=padding,
                                               dilations=[1] + dilations + [1])

    return _channels_last(run, x, n, data_format)


def conv1d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NWC",  # noqa: A002
                     dilations=None, name=None):
    return conv_transpose(input, filters, output_shape, strides, padding, data_format, dilations, name)


def conv3d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NDHWC",  # noqa: A002
                     dilations=None, name=None):
    return conv_transpose(input, filters, output_shape, strides, padding, data_format, dilations, name)


def pool(input, window_shape, pooling_type, strides=None, padding="VALID", data_format=None,  # noqa: A002
         dilations=None, name=None):
    """tf.nn.pool: N-D max or average pooling (N = 1, 2, 3)."""
    del name
    k = _k()
    x = convert_to_tensor(input)
    n = _rank_of(x, data_format, "pool")
    window, strides = _spatial(window_shape, n, "window_shape"), _spatial(strides, n, "strides")
    if any(d != 1 for d in _spatial(dilations, n, "dilations")):
        raise NotImplementedError("kiln.nn.pool: dilations other than 1 are not implemented")
    if pooling_type not in ("MAX", "AVG"):
        raise ValueError("pooling_type must be 'MAX' or 'AVG', got %r" % (pooling_type,))
    return _channels_last(lambda t: _pool_last(k, t, n, window, strides, padding, pooling_type), x, n, data_format)


def _pool_last(k, x, n, window, strides, padding, kind):
    if n == 1:
        return k.squeeze(_pool_last(k, k.expand_dims(x, 1), 2, [1] + window, [1] + strides, padding, kind), [1])
    if n == 2:
        f = k.nn.max_pool2d if kind == "MAX" else k.nn.avg_pool2d
        return f(x, window, strides, padding)
    f = k.nn.max_pool3d if kind == "MAX" else k.nn.avg_pool3d
    return f(x, window, strides, padding)


def max_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """tf.nn.max_pool: 3-D, 4-D or 5-D inputs."""
    return pool(input, ksize, "MAX", strides, padding, data_format, None, name)


def avg_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """tf.nn.avg_pool: 3-D, 4-D or 5-D inputs."""
    return pool(input, ksize, "AVG", strides, padding, data_format, None, name)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, data_format=None,  # noqa: A002
                     dilations=None, name=None):
    """tf.nn.separable_conv2d: a depthwise convolution, then a 1x1 convolution mixing channels."""
    del name
    k = _k()
    x = convert_to_tensor(input)
    _rank_of(x, data_format, "separable_conv2d")
    strides = _spatial(strides, 2, "strides")
    dilations = _spatial(dilations, 2, "dilations")

    def run(t):
        y = k.nn.depthwise_conv2d(t, depthwise_filter, [1] + strides + [1], padding, dilations=dilations)
        return k.nn.conv2d(y, pointwise_filter, [1, 1, 1, 1], "VALID")

    return _channels_last(run, x, 2, data_format)


def _blocks(input, block_size, data_format, move):  # noqa: A002
    """depth_to_space/space_to_depth: move(t, b) over the channels-last form of input."""
    x = convert_to_tensor(input)
    b = int(block_size)
    if b < 2:
        raise ValueError("Value for attr 'block_size' of %d must be at least minimum 2" % b)
    return _channels_last(lambda t: move(_k(), t, b), x, 2, data_format)


def _depth_to_space(k, t, b):
    s = k.shape(t)
    y = k.reshape(t, k.stack([s[0], s[1], s[2], b, b, s[3] // (b * b)]))
    y = k.transpose(y, [0, 1, 3, 2, 4, 5])
    return k.reshape(y, k.stack([s[0], s[1] * b, s[2] * b, s[3] // (b * b)]))


def _space_to_depth(k, t, b):
    s = k.shape(t)
    y = k.reshape(t, k.stack([s[0], s[1] // b, b, s[2] // b, b, s[3]]))
    y = k.transpose(y, [0, 1, 3, 2, 4, 5])
    return k.reshape(y, k.stack([s[0], s[1] // b, s[2] // b, s[3] * b * b]))


def depth_to_space(input, block_size, data_format="NHWC", name=None):  # noqa: A002
    """tf.nn.depth_to_space: moves blocks of depth into block_size x block_size spatial tiles
    (TensorFlow's DCR order: depth index (row * b + column) * C' + c)."""
    del name
    return _blocks(input, block_size, data_format, _depth_to_space)


def space_to_depth(input, block_size, data_format="NHWC", name=None):  # noqa: A002
    """tf.nn.space_to_depth: moves block_size x block_size spatial tiles into depth."""
    del name
    return _blocks(input, block_size, data_format, _space_to_depth)
