"""TensorFlow's Python API over the ops real models brought (padding, splitting, scans,
one-hot, einsum, the rest of the elementwise math and activations, depthwise and transposed
convolutions, resizing). Each function is TensorFlow's argument handling around kiln.raw_ops,
so a traced graph holds the ops TensorFlow's would."""
import math as _pymath

from . import _dtypes
from . import raw_ops
from ._convert import convert_to_tensor
from ._window import _four, _five


def _t(x, dtype=None):
    return convert_to_tensor(x, dtype=dtype)


# ---- array ops ----
def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    tensor = _t(tensor)
    mode = mode.upper()
    if mode == "CONSTANT":
        if not hasattr(constant_values, "dtype") and constant_values == 0:
            return raw_ops.Pad(input=tensor, paddings=paddings)
        return raw_ops.PadV2(input=tensor, paddings=paddings, constant_values=_t(constant_values, tensor.dtype))
    if mode in ("REFLECT", "SYMMETRIC"):
        return raw_ops.MirrorPad(input=tensor, paddings=paddings, mode=mode)
    raise ValueError('Value of argument `mode` expected to be one of "CONSTANT", "REFLECT", or "SYMMETRIC". '
                     "Received `mode` = %s" % mode)


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    value = _t(value)
    if isinstance(num_or_size_splits, int):
        return raw_ops.Split(axis=axis, value=value, num_split=num_or_size_splits)
    sizes = _t(num_or_size_splits)
    if num is None:
        shape = sizes._shape_tuple()
        if len(shape) != 1 or shape[0] is None:
            raise ValueError("Cannot infer argument `num` from shape %s" % (sizes.shape,))
        num = shape[0]
    return raw_ops.SplitV(value=value, size_splits=sizes, axis=axis, num_split=num)


def unstack(value, num=None, axis=0, name="unstack"):
    value = _t(value)
    shape = value._shape_tuple()
    if num is None:
        if shape is None:
            raise ValueError("Cannot infer argument `num` from shape <unknown>")
        rank = len(shape)
        if axis < -rank or axis >= rank:
            raise ValueError("Argument `axis` = %d not in range [%d, %d)" % (axis, -rank, rank))
        num = shape[axis]
        if num is None:
            raise ValueError("Cannot infer argument `num` from shape %s" % (value.shape,))
    return raw_ops.Unpack(value=value, num=num, axis=axis)


def reverse(tensor, axis, name=None):
    return raw_ops.ReverseV2(tensor=tensor, axis=axis)


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    given = on_value if on_value is not None else off_value
    if dtype is None:
        dtype = _t(given).dtype if given is not None else _dtypes.float32
    dtype = _dtypes.as_dtype(dtype)
    on = _t(1 if on_value is None else on_value, dtype)
    off = _t(0 if off_value is None else off_value, dtype)
    return raw_ops.OneHot(indices=indices, depth=depth, on_value=on, off_value=off, axis=-1 if axis is None else axis)


def einsum(equation, *inputs, **kwargs):
    equation = equation.replace(" ", "")
    if "->" not in equation:  # implicit output: labels seen once, alphabetically, after "..."
        labels = equation.replace("...", "").replace(",", "")
        once = sorted(ch for ch in set(labels) if labels.count(ch) == 1)
        equation += "->" + ("..." if "..." in equation else "") + "".join(once)
    if len(inputs) > 2:
        return _einsum_pairwise(equation, list(inputs))
    return raw_ops.Einsum(inputs=list(inputs), equation=equation)


def _einsum_pairwise(equation, inputs):
    """More than two operands: contracted left to right, two at a time, each intermediate
    keeping the labels a later operand or the output still needs (TensorFlow lets opt_einsum
    choose the order: values agree to rounding)."""
    lhs, out = equation.split("->")
    specs = lhs.split(",")
    if len(specs) != len(inputs):
        raise ValueError("Invalid einsum equation %r: %d operands given for %d subscripts"
                         % (equation, len(inputs), len(specs)))
    if "..." in equation:  # spelled out: the broadcast dims get letters the equation does not use
        from ._convert import convert_to_tensor
        from ._tensor import Tensor

        inputs = [x if isinstance(x, Tensor) else convert_to_tensor(x) for x in inputs]
        ranks = [len(s.replace("...", "")) for s in specs]
        widths = [x.shape.rank - r if "..." in s else 0 for x, s, r in zip(inputs, specs, ranks)]
        if any(w is None or w < 0 for w in widths):
            raise ValueError("Invalid einsum equation %r: an operand's rank does not fit its subscripts" % equation)
        free = [ch for ch in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if ch not in equation]
        labels = "".join(free[:max(widths)])
        specs = [s.replace("...", labels[len(labels) - w:]) for s, w in zip(specs, widths)]
        out = out.replace("...", labels)
    acc, acc_spec = inputs[0], specs[0]
    for k in range(1, len(inputs)):
        later = set("".join(specs[k + 1:]) + out)
        keep = "".join(dict.fromkeys(ch for ch in acc_spec + specs[k] if ch in later))
        result = out if k == len(inputs) - 1 else keep
        acc = raw_ops.Einsum(inputs=[acc, inputs[k]], equation="%s,%s->%s" % (acc_spec, specs[k], result))
        acc_spec = result
    return acc


def stop_gradient(input, name=None):  # noqa: A002
    return raw_ops.StopGradient(input=input)


def identity_n(input, name=None):  # noqa: A002
    return raw_ops.IdentityN(input=list(input))


def argmin(input, axis=None, output_type=_dtypes.int64, name=None):  # noqa: A002
    return raw_ops.ArgMin(input=input, dimension=0 if axis is None else axis, output_type=output_type)


# ---- math ----
def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):  # noqa: A002 (TensorFlow's names)
    return raw_ops.Cumsum(x=x, axis=axis, exclusive=exclusive, reverse=reverse)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    return raw_ops.Cumprod(x=x, axis=axis, exclusive=exclusive, reverse=reverse)


def _unary(op, arg="x"):
    fn = getattr(raw_ops, op)

    def call(x, name=None):
        return fn(**{arg: x})

    call.__name__ = op[0].lower() + op[1:]
    call.__doc__ = "TensorFlow's tf.math.%s: the %s op elementwise." % (call.__name__, op)
    return call


sin, cos, tan = _unary("Sin"), _unary("Cos"), _unary("Tan")
asin, acos, atan = _unary("Asin"), _unary("Acos"), _unary("Atan")
sinh, cosh, asinh, acosh, atanh = _unary("Sinh"), _unary("Cosh"), _unary("Asinh"), _unary("Acosh"), _unary("Atanh")
log1p, expm1 = _unary("Log1p"), _unary("Expm1")
erf, erfc, erfinv = _unary("Erf"), _unary("Erfc"), _unary("Erfinv")
lgamma, digamma, rint = _unary("Lgamma"), _unary("Digamma"), _unary("Rint")
is_nan, is_inf, is_finite = _unary("IsNan"), _unary("IsInf"), _unary("IsFinite")
softplus, softsign = _unary("Softplus", "features"), _unary("Softsign", "features")
elu, selu = _unary("Elu", "features"), _unary("Selu", "features")


def zeta(x, q, name=None):
    """The Hurwitz zeta function, elementwise with broadcasting (tf.math.zeta)."""
    return raw_ops.Zeta(x=x, q=q)


def polygamma(a, x, name=None):
    """The a-th derivative of digamma at x (tf.math.polygamma)."""
    return raw_ops.Polygamma(a=a, x=x)


def leaky_relu(features, alpha=0.2, name=None):
    return raw_ops.LeakyRelu(features=features, alpha=alpha)


def gelu(features, approximate=False, name=None):
    """0.5 x (1 + erf(x / sqrt 2)), or its tanh approximation (tf.nn.gelu's two forms)."""
    x = _t(features)
    half = _t(0.5, x.dtype)
    if approximate:
        inner = _t(_pymath.sqrt(2 / _pymath.pi), x.dtype) * (x + _t(0.044715, x.dtype) * x * x * x)
        return half * x * (_t(1, x.dtype) + raw_ops.Tanh(x=inner))
    return half * x * (_t(1, x.dtype) + erf(x / _t(_pymath.sqrt(2.0), x.dtype)))


# ---- convolutions ----
def depthwise_conv2d(input, filter, strides, padding, data_format=None, dilations=None, name=None):  # noqa: A002
    if data_format not in (None, "NHWC"):
        raise NotImplementedError("kiln supports data_format NHWC only, got %r" % (data_format,))
    return raw_ops.DepthwiseConv2dNative(input=input, filter=filter, strides=_four(strides, "strides"),
                                         padding=padding, dilations=_four(dilations or 1, "dilations"))


def conv2d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NHWC",  # noqa: A002
                     dilations=None, name=None):
    if data_format not in (None, "NHWC"):
        raise NotImplementedError("kiln supports data_format NHWC only, got %r" % (data_format,))
    return raw_ops.Conv2DBackpropInput(input_sizes=output_shape, filter=filters, out_backprop=input,
                                       strides=_four(strides, "strides"), padding=padding,
                                       dilations=_four(dilations or 1, "dilations"))


def _ndhwc(data_format):
    if data_format not in (None, "NDHWC"):
        raise NotImplementedError("kiln supports data_format NDHWC only, got %r" % (data_format,))


def conv3d(input, filters, strides, padding, data_format="NDHWC", dilations=None, name=None):  # noqa: A002
    """3-D convolution of NDHWC volumes with [depth, height, width, in, out] filters."""
    _ndhwc(data_format)
    return raw_ops.Conv3D(input=input, filter=filters, strides=_five(strides, "strides"), padding=padding,
                          dilations=_five(dilations or 1, "dilations"))


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    _ndhwc(data_format)
    return raw_ops.MaxPool3D(input=input, ksize=_five(ksize, "ksize"), strides=_five(strides, "strides"),
                             padding=padding)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    _ndhwc(data_format)
    return raw_ops.AvgPool3D(input=input, ksize=_five(ksize, "ksize"), strides=_five(strides, "strides"),
                             padding=padding)


# ---- images ----
_RESIZE = {"bilinear": "ResizeBilinear", "nearest": "ResizeNearestNeighbor", "bicubic": "ResizeBicubic",
           "area": "ResizeArea"}


def resize(images, size, method="bilinear", preserve_aspect_ratio=False, antialias=False, name=None):
    """tf.image.resize (TensorFlow 2): pixel centres at half-integers; bilinear, bicubic and area
    give float32, nearest keeps the dtype; a 3-D image is resized as a batch of one."""
    if preserve_aspect_ratio or antialias:
        raise NotImplementedError("kiln.image.resize: preserve_aspect_ratio and antialias are not supported")
    if method not in _RESIZE:
        raise ValueError("Resize method is not implemented: [%s]." % method)
    images = _t(images)
    batched = len(images._shape_tuple()) == 4
    if not batched:
        images = raw_ops.ExpandDims(input=images, axis=0)
    size = _t(size, _dtypes.int32)
    if method == "area":  # TensorFlow's area resize has no pixel-centre choice
        out = raw_ops.ResizeArea(images=images, size=size)
    else:
        out = getattr(raw_ops, _RESIZE[method])(images=images, size=size, half_pixel_centers=True)
    return out if batched else raw_ops.Squeeze(input=out, axis=[0])
