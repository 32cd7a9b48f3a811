"""tf.math and tf.nn functions that TensorFlow's Python builds from other ops (reduce_std,
reduce_logsumexp, l2_normalize, moments, the cross entropies, batch_normalization, ...): the
same ops in the same order as TensorFlow's math_ops.py / nn_impl.py, so values agree to
rounding and gradients come from the ops'."""
from . import _dtypes
from . import math as _m
from ._convert import convert_to_tensor


def _t(x, dtype=None):
    return convert_to_tensor(x, dtype=dtype)


def _zeros_like(x):
    from ._ops import zeros_like
    return zeros_like(x)


def _const(value, like):
    return convert_to_tensor(value, dtype=like.dtype)


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    x = _t(input_tensor)
    means = _m.reduce_mean(x, axis, keepdims=True)
    deviations = x - means
    if x.dtype.is_complex:
        deviations = _m.abs(deviations)
    return _m.reduce_mean(_m.square(deviations), axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    return _m.sqrt(reduce_variance(input_tensor, axis, keepdims))


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    """log(sum(exp(x))) computed around the maximum (a finite one), so large values do not overflow."""
    from ._ops import reshape, shape, where
    from ._ops_breadth import stop_gradient
    x = _t(input_tensor)
    raw_max = _m.reduce_max(x, axis, keepdims=True)
    my_max = stop_gradient(where(_m.is_finite(raw_max), raw_max, _const(0, raw_max)))
    result = _m.log(_m.reduce_sum(_m.exp(x - my_max), axis, keepdims=keepdims))
    if not keepdims:
        my_max = reshape(my_max, shape(result))
    return result + my_max


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    x = _t(x)
    axis = dim if axis is None else axis
    square_sum = _m.reduce_sum(_m.square(x), axis, keepdims=True)
    return x * _m.rsqrt(_m.maximum(square_sum, _const(epsilon, square_sum)))


def count_nonzero(input, axis=None, keepdims=None, dtype=_dtypes.int64, name=None):  # noqa: A002
    from ._ops import cast
    x = _t(input)
    nonzero = cast(_m.not_equal(x, _const(0, x) if not x.dtype.is_bool else False), _dtypes.int64)
    return cast(_m.reduce_sum(nonzero, axis, keepdims=bool(keepdims)), dtype)


def divide_no_nan(x, y, name=None):
    """x / y, and 0 where y is 0."""
    from ._ops import where
    x = _t(x)
    y = _t(y, x.dtype)
    zero = _m.equal(y, _const(0, y))
    return where(zero, _const(0, x), x / where(zero, _const(1, y), y))


def xlogy(x, y, name=None):
    """x * log(y), and 0 where x is 0."""
    from ._ops import where
    x = _t(x)
    y = _t(y, x.dtype)
    return where(_m.equal(x, _const(0, x)), _zeros_like(x * y), x * _m.log(y))


def log_sigmoid(x, name=None):
    return -_m.softplus(-_t(x))


def moments(x, axes, shift=None, keepdims=False, name=None):
    """(mean, variance) over `axes`; float16 is computed in float32, as TensorFlow does."""
    from ._ops import cast, squeeze
    from ._ops_breadth import stop_gradient
    x = _t(x)
    y = cast(x, _dtypes.float32) if x.dtype == _dtypes.float16 else x
    mean = _m.reduce_mean(y, axes, keepdims=True)
    variance = _m.reduce_mean(_m.squared_difference(y, stop_gradient(mean)), axes, keepdims=True)
    if not keepdims:
        mean, variance = squeeze(mean, axes), squeeze(variance, axes)
    if x.dtype == _dtypes.float16:
        return cast(mean, _dtypes.float16), cast(variance, _dtypes.float16)
    return mean, variance


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """max(x, 0) - x * z + log(1 + exp(-|x|)) for logits x and labels z."""
    from ._ops import where
    if labels is None or logits is None:
        raise ValueError("Both `labels` and `logits` must be provided. Received: labels=%s and logits=%s"
                         % (labels, logits))
    logits = _t(logits)
    labels = _t(labels, logits.dtype)
    zeros = _zeros_like(logits)
    positive = logits >= zeros
    relu_logits = where(positive, logits, zeros)
    neg_abs_logits = where(positive, -logits, logits)
    return (relu_logits - logits * labels) + _m.log1p(_m.exp(neg_abs_logits))


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """-sum(labels * log_softmax(logits)) over `axis`."""
    logits = _t(logits)
    labels = _t(labels, logits.dtype)
    return -_m.reduce_sum(labels * _m.log_softmax(logits, axis=axis), axis)


def embedding_lookup(params, ids, max_norm=None, name=None):
    from ._ops import gather
    if isinstance(params, (list, tuple)):
        if len(params) != 1:
            raise NotImplementedError("kiln.nn.embedding_lookup takes one params tensor (sharded params are not "
                                      "implemented)")
        params = params[0]
    if max_norm is not None:
        raise NotImplementedError("kiln.nn.embedding_lookup(max_norm=...) is not implemented")
    from ._ragged import RaggedTensor
    if isinstance(ids, RaggedTensor):  # one embedding per id, in the ids' rows
        return ids.with_flat_values(gather(params, ids.flat_values))
    return gather(params, ids)


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    from ._ops import cast
    x = _t(x)
    variance = _t(variance)
    inv = _m.rsqrt(variance + _const(variance_epsilon, variance))
    if scale is not None:
        inv = inv * _t(scale, inv.dtype)
    shift = (_t(offset, inv.dtype) - _t(mean, inv.dtype) * inv) if offset is not None else -_t(mean, inv.dtype) * inv
    return x * cast(inv, x.dtype) + cast(shift, x.dtype)


def silu(features, beta=1.0):
    features = _t(features)
    if beta == 1.0:
        return features * _m.sigmoid(features)
    return features * _m.sigmoid(_const(beta, features) * features)


swish = silu


def l2_loss(t, name=None):
    """sum(t ** 2) / 2."""
    t = _t(t)
    return _m.reduce_sum(_m.square(t)) * _const(0.5, t)


def meshgrid(*args, **kwargs):
    """tf.meshgrid(*args, indexing="xy"): each input reshaped along its own axis and multiplied
    by ones of the grid's shape, as TensorFlow's array_ops does ("xy" swaps the first two)."""
    from ._ops import ones, reshape
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        key = list(kwargs)[0]
        raise TypeError("'{}' is an invalid keyword argument for this function".format(key))
    if indexing not in ("xy", "ij"):
        raise ValueError("Argument `indexing` parameter must be either 'xy' or 'ij', got '%s'" % indexing)
    xs = [convert_to_tensor(a) for a in args]
    ndim = len(xs)
    if ndim == 0:
        return []
    shapes = [int(x.shape.num_elements()) for x in xs]
    outputs = []
    for i, x in enumerate(xs):
        s = [1] * ndim
        s[i] = -1
        outputs.append(reshape(x, s))
    if indexing == "xy" and ndim > 1:
        outputs[0] = reshape(xs[0], [1, -1] + [1] * (ndim - 2))
        outputs[1] = reshape(xs[1], [-1, 1] + [1] * (ndim - 2))
        shapes[0], shapes[1] = shapes[1], shapes[0]
    grid = ones(shapes, xs[0].dtype)
    return [o * grid for o in outputs]


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """sum(per_example_loss * sample_weight) / global_batch_size (default: the batch, kiln
    having one replica), as tf.nn.compute_average_loss."""
    from ._ops import cast, reduce_sum, shape
    loss = convert_to_tensor(per_example_loss)
    if sample_weight is not None:
        loss = loss * cast(convert_to_tensor(sample_weight), loss.dtype)
    if global_batch_size is None:
        global_batch_size = shape(loss)[0] if loss.shape.rank else 1
    return reduce_sum(loss) / cast(convert_to_tensor(global_batch_size), loss.dtype)


def scale_regularization_loss(regularization_loss):
    """The regularization loss divided by the number of replicas (one in kiln)."""
    from ._ops import add_n, reduce_sum
    if isinstance(regularization_loss, (list, tuple)):
        regularization_loss = add_n([convert_to_tensor(t) for t in regularization_loss])
    return reduce_sum(convert_to_tensor(regularization_loss))


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """tf.image.convert_image_dtype: integers scale to [0, 1] as floats and back (the scale
    TensorFlow's image_ops uses), integers to integers by powers of two, floats cast."""
    from ._ops import cast, floordiv
    image = convert_to_tensor(image)
    dtype = _dtypes.as_dtype(dtype)
    if not image.dtype.is_floating and not image.dtype.is_integer:
        raise AttributeError("image dtype must be numeric")
    from ._environment import saturate_cast
    convert = saturate_cast if saturate else cast
    if image.dtype == dtype:
        return image
    if image.dtype.is_integer and dtype.is_integer:
        scale_in, scale_out = image.dtype.max, dtype.max
        if scale_in > scale_out:
            scale = (scale_in + 1) // (scale_out + 1)
            return convert(floordiv(image, cast(scale, image.dtype)), dtype)
        return convert(image, dtype) * cast((scale_out + 1) // (scale_in + 1), dtype)
    if image.dtype.is_floating and dtype.is_floating:
        return cast(image, dtype)
    if image.dtype.is_integer:
        return cast(image, dtype) * cast(1.0 / image.dtype.max, dtype)
    return convert(image * cast(dtype.max + 0.5, image.dtype), dtype)


def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype=_dtypes.int32, name=None):
    """counts[i, j]: how often label i was predicted as j (summed weights with weights=)."""
    from ._ops import cast, maximum, ones_like, reduce_max, stack
    from ._ops_indexing import scatter_nd
    labels = cast(convert_to_tensor(labels), _dtypes.int64)
    predictions = cast(convert_to_tensor(predictions), _dtypes.int64)
    if num_classes is None:
        num_classes = maximum(reduce_max(labels), reduce_max(predictions)) + 1
    n = cast(convert_to_tensor(num_classes), _dtypes.int64)
    values = ones_like(labels, dtype=dtype) if weights is None else cast(convert_to_tensor(weights), dtype)
    return scatter_nd(stack([labels, predictions], axis=1), values, stack([n, n]))


def tensordot(a, b, axes, name=None):
    """tf.tensordot: sums the products of a's and b's elements over the given axes (an int N:
    a's last N with b's first N; or two lists of axes), as a transpose, a reshape and a matmul."""
    del name
    import kiln as k
    a, b = k.convert_to_tensor(a), k.convert_to_tensor(b)
    ra, rb = a.shape.rank, b.shape.rank
    if ra is None or rb is None:
        raise ValueError("tensordot needs inputs of known rank")
    if isinstance(axes, k.Tensor):
        axes = axes.numpy().tolist()
    if isinstance(axes, int):
        if axes < 0:
            raise ValueError("'axes' must be at least 0.")
        if axes > min(ra, rb):
            raise ValueError("'axes' must not be larger than the number of dimensions of tensor %s." % (a,))
        a_axes, b_axes = list(range(ra - axes, ra)), list(range(axes))
    else:
        if len(axes) != 2:
            raise ValueError("'axes' must be an integer or have length 2.")
        a_axes, b_axes = axes
        a_axes = [a_axes] if isinstance(a_axes, int) else list(a_axes)
        b_axes = [b_axes] if isinstance(b_axes, int) else list(b_axes)
        if len(a_axes) != len(b_axes):
            raise ValueError("Different number of contraction axes 'a' and 'b', %d != %d." % (len(a_axes), len(b_axes)))
    a_axes = [x % ra for x in a_axes]
    b_axes = [x % rb for x in b_axes]
    a_free = [i for i in range(ra) if i not in a_axes]
    b_free = [i for i in range(rb) if i not in b_axes]
    sa, sb = k.shape(a), k.shape(b)
    at = k.transpose(a, a_free + a_axes)
    bt = k.transpose(b, b_axes + b_free)
    free_a = k.gather(sa, a_free) if a_free else k.zeros([0], k.int32)
    free_b = k.gather(sb, b_free) if b_free else k.zeros([0], k.int32)
    inner = k.reduce_prod(k.gather(sa, a_axes)) if a_axes else k.constant(1)
    a2 = k.reshape(at, k.stack([k.reduce_prod(free_a), inner]))
    b2 = k.reshape(bt, k.stack([inner, k.reduce_prod(free_b)]))
    static = [a.shape[i] for i in a_free] + [b.shape[i] for i in b_free]
    if all(d is not None for d in static):
        return k.reshape(k.matmul(a2, b2), static)
    # The free dimensions known while tracing are constants of the shape, the rest read from
    # it, so the result's static shape has them (TensorFlow sets it: [?, 5, 16], not [?, ?, ?]).
    dims = [a.shape[i] if a.shape[i] is not None else sa[i] for i in a_free] + \
           [b.shape[i] if b.shape[i] is not None else sb[i] for i in b_free]
    return k.reshape(k.matmul(a2, b2), k.stack(dims))
