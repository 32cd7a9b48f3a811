"""The smaller tf.* names TensorFlow's guides use, against TensorFlow in the same test:
composite tf.math / tf.nn functions (values, eagerly and traced, and their gradients), the
clip functions, saturate_cast, bitcast, tf.executing_eagerly, tf.device, tf.config's device
lists, tf.is_tensor, tf.version and numpy scalars from .numpy()."""
import numpy as np
import pytest

import kiln

RNG = np.random.default_rng(7)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _close(ours, theirs, rtol=2e-6):
    if isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _close(o, t, rtol)
        return
    o, t = np.asarray(ours), np.asarray(theirs)
    assert o.dtype == t.dtype and o.shape == t.shape, (o.dtype, t.dtype, o.shape, t.shape)
    if o.dtype.kind in "fc":
        np.testing.assert_allclose(o, t, rtol=rtol, atol=rtol * 1e-3)
    else:
        np.testing.assert_array_equal(o, t)


CASES = [
    ("reduce_variance", lambda m, x: m.math.reduce_variance(x, axis=1), [_f32(3, 4)]),
    ("einsum_three", lambda m, a, b, c: m.einsum("ij,jk,kl->il", a, b, c), [_f32(3, 4), _f32(4, 5), _f32(5, 2)]),
    ("einsum_three_sum", lambda m, a, b, c: m.einsum("ij,ij,ij->i", a, b, c), [_f32(3, 4), _f32(3, 4), _f32(3, 4)]),
    ("einsum_three_ellipsis", lambda m, a, b, c: m.einsum("...ij,...jk,kl->...il", a, b, c),
     [_f32(2, 3, 4), _f32(2, 4, 5), _f32(5, 2)]),
    ("einsum_three_trailing_ellipsis", lambda m, a, b, c: m.einsum("ij,jk,k...->i...", a, b, c),
     [_f32(3, 4), _f32(4, 5), _f32(5, 2, 2)]),
    ("meshgrid_xy", lambda m, a, b: m.stack(m.meshgrid(a, b)), [_f32(3), _f32(2)]),
    ("meshgrid_ij_3d", lambda m, a, b, c: m.stack(m.meshgrid(a, b, c, indexing="ij")), [_f32(3), _f32(2), _f32(4)]),
    ("meshgrid_xy_3d", lambda m, a, b, c: m.stack(m.meshgrid(a, b, c)), [_f32(3), _f32(2), _f32(4)]),
    ("reduce_std", lambda m, x: m.math.reduce_std(x, keepdims=True), [_f32(3, 4)]),
    ("reduce_logsumexp", lambda m, x: m.math.reduce_logsumexp(x * 50.0, axis=0), [_f32(3, 4)]),
    ("reduce_logsumexp_all", lambda m, x: m.math.reduce_logsumexp(x), [_f32(5)]),
    ("l2_normalize", lambda m, x: m.math.l2_normalize(x, axis=-1), [_f32(2, 3)]),
    ("nn_l2_normalize", lambda m, x: m.nn.l2_normalize(x, 0), [_f32(4)]),
    ("log_sigmoid", lambda m, x: m.math.log_sigmoid(x * 10.0), [_f32(6)]),
    ("divide_no_nan", lambda m, x: m.math.divide_no_nan(x, x * np.float32([0, 1, 0, 2])), [_f32(4)]),
    ("xlogy", lambda m, x: m.math.xlogy(x * np.float32([0, 1, 1, 0]), m.abs(x) + 0.5), [_f32(4)]),
    ("moments_mean", lambda m, x: m.nn.moments(x, axes=[0, 1])[0], [_f32(2, 3, 2)]),
    ("moments_variance", lambda m, x: m.nn.moments(x, axes=[0], keepdims=True)[1], [_f32(5, 3)]),
    ("sigmoid_xent", lambda m, x: m.nn.sigmoid_cross_entropy_with_logits(
        labels=np.float32([[0, 1, 0.5], [1, 0, 0]]), logits=x * 5.0), [_f32(2, 3)]),
    ("softmax_xent", lambda m, x: m.nn.softmax_cross_entropy_with_logits(
        labels=np.float32([[0, 1, 0], [0.3, 0.3, 0.4]]), logits=x), [_f32(2, 3)]),
    ("embedding_lookup", lambda m, x: m.nn.embedding_lookup(x, [[2, 0], [1, 1]]), [_f32(3, 4)]),
    ("batch_normalization", lambda m, x: m.nn.batch_normalization(
        x, np.float32([0.1, -0.2]), np.float32([1.5, 0.5]), np.float32([0.0, 1.0]), np.float32([2.0, 0.5]), 1e-3),
     [_f32(3, 2)]),
    ("silu", lambda m, x: m.nn.silu(x), [_f32(5)]),
    ("swish", lambda m, x: m.nn.swish(x), [_f32(5)]),
    ("l2_loss", lambda m, x: m.nn.l2_loss(x), [_f32(3, 3)]),
    ("clip_by_value", lambda m, x: m.clip_by_value(x, -0.5, 0.25), [_f32(6)]),
    ("clip_by_norm", lambda m, x: m.clip_by_norm(x, 1.0), [_f32(3, 2) * 3]),
    ("clip_by_norm_axes", lambda m, x: m.clip_by_norm(x, 0.5, axes=[1]), [_f32(3, 2)]),
    ("clip_by_global_norm", lambda m, x, y: m.clip_by_global_norm([x, y], 1.0)[0][1], [_f32(3) * 2, _f32(2, 2)]),
]
GRADIENT_FREE = {"divide_no_nan", "xlogy", "clip_by_value"}  # where-based: TensorFlow's raw op grads differ at 0


@pytest.mark.parametrize("name,fn,xs", CASES, ids=[c[0] for c in CASES])
def test_values_eagerly_and_traced(tf, name, fn, xs):
    theirs = fn(tf, *[tf.constant(x) for x in xs]).numpy()
    _close(fn(kiln, *[kiln.constant(x) for x in xs]).numpy(), theirs)
    traced = kiln.function(lambda *a: fn(kiln, *a))
    _close(traced(*xs).numpy(), theirs)


@pytest.mark.parametrize("name,fn,xs", [c for c in CASES if c[0] not in GRADIENT_FREE], ids=lambda v: v
                         if isinstance(v, str) else "")
def test_gradients(tf, name, fn, xs):
    def grads(m):
        vs = [m.Variable(x) for x in xs]
        with m.GradientTape() as tape:
            y = m.reduce_sum(fn(m, *vs) * np.float32(1.5))
        # TensorFlow's gradient of a gather is an IndexedSlices: compared densely.
        return [m.convert_to_tensor(g).numpy() for g in tape.gradient(y, vs)]
    _close(grads(kiln), grads(tf), rtol=2e-5)


def test_count_nonzero_and_saturate_cast(tf):
    x = np.array([[0, 1.5, -2], [0, 0, 3e10]], np.float32)
    for args in ([], [0], [1]):
        _close(kiln.math.count_nonzero(x, *args).numpy(), tf.math.count_nonzero(x, *args).numpy())
    _close(kiln.math.count_nonzero(x, keepdims=True, dtype=kiln.int32).numpy(),
           tf.math.count_nonzero(x, keepdims=True, dtype=tf.int32).numpy())
    for to in ("int32", "uint8", "int64", "float16", "int8"):
        _close(kiln.dtypes.saturate_cast(x * 1e3, getattr(kiln, to)).numpy(),
               tf.dtypes.saturate_cast(x * 1e3, getattr(tf, to)).numpy())
    big = np.array([1e300, -1e300, 7.5], np.float64)
    _close(kiln.saturate_cast(big, kiln.float32).numpy(), tf.saturate_cast(big, tf.float32).numpy())
    _close(kiln.bitcast(kiln.constant([1.0, -2.0]), kiln.int32).numpy(),
           tf.bitcast(tf.constant([1.0, -2.0]), tf.int32).numpy())


def test_environment_names(tf):
    assert kiln.executing_eagerly() is tf.executing_eagerly() is True
    assert kiln.function(lambda: kiln.constant(kiln.executing_eagerly()))().numpy() == \
        tf.function(lambda: tf.constant(tf.executing_eagerly()))().numpy()
    assert [d.device_type for d in kiln.config.list_physical_devices("CPU")] == \
        [d.device_type for d in tf.config.list_physical_devices("CPU")]
    assert kiln.config.list_physical_devices("GPU") == tf.config.list_physical_devices("GPU") == []
    assert [d.name for d in kiln.config.list_logical_devices()] == [d.name for d in tf.config.list_logical_devices()]
    for m in (kiln, tf):
        with m.device("/CPU:0"):
            assert float(m.constant(2.0) * 3.0) == 6.0
        assert m.is_tensor(m.constant(1)) and m.is_tensor(m.Variable(1.0)) and not m.is_tensor(np.float32(1))
        assert isinstance(m.version.VERSION, str)
        m.get_logger().debug("accepted")


def test_scalar_numpy_is_a_numpy_scalar(tf):
    for value in (3, 2.5, True, np.float64(1.25), b"bytes"):
        ours, theirs = kiln.constant(value).numpy(), tf.constant(value).numpy()
        assert type(ours) is type(theirs) and ours == theirs
    assert type(kiln.constant([1, 2]).numpy()) is np.ndarray


def test_nest_is_tensorflows(tf):
    import collections
    point = collections.namedtuple("Point", "b a")
    s = {"b": [1, (2, None)], "a": point(3, {"z": 4, "y": "s"}), "c": collections.OrderedDict([("q", 5), ("p", 6)])}
    assert kiln.nest.flatten(s) == tf.nest.flatten(s)
    assert repr(kiln.nest.pack_sequence_as(s, range(8))) == repr(tf.nest.pack_sequence_as(s, range(8)))
    pair = [[1, (2, 3)], [4, (5, 6)]]
    assert kiln.nest.map_structure(lambda x, y: x + y, *pair) == tf.nest.map_structure(lambda x, y: x + y, *pair)
    for x in ([1], "ab", None, {"a": 1}, (1,), 3):
        assert kiln.nest.is_nested(x) == tf.nest.is_nested(x)
        assert kiln.nest.flatten(x) == tf.nest.flatten(x)
    for a, b in ([1, 2], [1]), ([1, 2], (1, 2)), ({"a": 1}, {"b": 1}), (1, [1]), ([1, [2]], [3, [4]]):
        errors = []
        for m in (kiln, tf):
            try:
                m.nest.assert_same_structure(a, b)
                errors.append(None)
            except (TypeError, ValueError) as e:
                errors.append((type(e), str(e).split("\n")[0]))
        assert errors[0] == errors[1], (a, b, errors)
    kiln.nest.assert_same_structure([1, 2], (1, 2), check_types=False)
    with pytest.raises(ValueError, match="Structure had 2 atoms, but flat_sequence had 1 items"):
        kiln.nest.pack_sequence_as([1, 2], [1])


def test_print_inside_functions_prints_on_every_call(tf, tmp_path):
    """tf.print in a traced function is an op: each call writes its line (to a file here, which
    TensorFlow's PrintV2 and kiln's KilnPrint both append to)."""
    import subprocess
    import sys
    for m in (kiln, tf):
        path = tmp_path / ("%s.txt" % m.__name__)
        f = m.function(lambda x, p="file://" + str(path), m=m: (
            m.print("x:", x, [x, 2], {"k": x * 2}, output_stream=p, end=";\n"), x + 1)[1])
        for v in ([1, 2], [3, 4]):
            f(m.constant(v))
        m.print("eager", m.constant([[1.5, 2.0]]), output_stream="file://" + str(path))
    assert (tmp_path / "kiln.txt").read_text() == (tmp_path / "tensorflow.txt").read_text()
    # sys.stdout inside a function: the op writes to the process's stdout on every call
    program = ("import sys, kiln\n"
               "f = kiln.function(lambda x: (kiln.print('x =', x, output_stream=sys.stdout), x)[1])\n"
               "f(kiln.constant(1)); f(kiln.constant(2))\n")
    import os
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(os.path.dirname(kiln.__file__))))
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True,
                         env=env).stdout
    assert out == "x = 1\nx = 2\n"


def _variadic(*args, **kwargs):
    return len(args) + len(kwargs)


def test_function_call_forms_of_the_guides(tf):
    for m in (kiln, tf):
        assert int(m.function(_variadic, input_signature=[])()) == 0
        scaled = m.function(lambda x, n: x * n)
        concrete = scaled.get_concrete_function(m.TensorSpec([2], m.float32), 4)
        # the traced Python value is part of the concrete function: the tensor alone calls it
        np.testing.assert_array_equal(concrete(m.constant([1.0, 2.0])).numpy(), [4.0, 8.0])
        x = m.constant(1.0)
        with m.GradientTape() as tape:
            tape.watch(x)
            y = m.constant(2.0) * 3
        assert float(tape.gradient(y, x, unconnected_gradients=m.UnconnectedGradients.ZERO)) == 0.0
        assert tape.gradient is not None


def test_an_assignment_returns_the_unread_variable(tf):
    def texts(m):
        v = m.Variable([1.0, 2.0, 3.0])
        first = repr(v.assign([1, 2, 3]))
        second = repr(v.assign_add([1, 1, 1]))
        return [first, second, repr(v.assign_sub([1, 1, 1], read_value=False)), repr(v)]
    assert [t.replace("kiln.", "tf.") for t in texts(kiln)] == texts(tf)


def test_an_extension_type_is_refused_by_name():
    # tf.experimental.ExtensionType is not implemented: defining one says so at once.
    import kiln

    for base in (kiln.experimental.ExtensionType, kiln.experimental.BatchableExtensionType):
        with pytest.raises(NotImplementedError, match="ExtensionType is not implemented in kiln"):
            type("MaskedTensor", (base,), {"__annotations__": {"values": kiln.Tensor}})
