"""Window arguments of the image ops, as TensorFlow takes them."""


def _four(value, name):
    """TensorFlow's 2-D window arguments: an int or 1, 2 or 4 ints -> [1, h, w, 1] (NHWC)."""
    if isinstance(value, int):
        return [1, value, value, 1]
    value = [int(v) for v in value]
    if len(value) == 1:
        return [1, value[0], value[0], 1]
    if len(value) == 2:
        return [1, value[0], value[1], 1]
    if len(value) == 4:
        return value
    raise ValueError("%s should be of length 1, 2 or 4. Received: %s=%s of length %d" % (name, name, value, len(value)))


def _five(value, name):
    """The same for 3-D windows: an int or 1, 3 or 5 ints -> [1, d, h, w, 1] (NDHWC)."""
    if isinstance(value, int):
        return [1, value, value, value, 1]
    value = [int(v) for v in value]
    if len(value) == 1:
        return [1] + value * 3 + [1]
    if len(value) == 3:
        return [1] + value + [1]
    if len(value) == 5:
        return value
    raise ValueError("%s should be of length 1, 3 or 5. Received: %s=%s of length %d" % (name, name, value, len(value)))
