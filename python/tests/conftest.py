"""Shared fixtures: TensorFlow (the oracle) and the comparison of one program run by both.

An oracle case is a function of a module: it is called once with `kiln` and once with
`tensorflow`, and both outcomes must agree: the same exception class, or the same dtype,
shape and values (bit for bit, or within `ulps` for transcendental float ops)."""
import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# The oracle is the same TensorFlow on every CPU: its oneDNN kernels, which it turns on by itself
# only where the CPU has AVX-512's neural-network extensions. On an AVX2-only CPU its default
# kernels differ (Conv3D and dilated Conv2D gradients refused, other max-pool NaN handling,
# other error messages), and the suite's cases were those of the oneDNN build.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")


@pytest.fixture(scope="session")
def tf():
    return pytest.importorskip("tensorflow")


def _outcome(fn, module):
    try:
        return ("value", fn(module))
    except Exception as e:  # noqa: BLE001 (the class is what is compared)
        return ("error", e)


def errors_of(call, tf):
    """(kiln's exception, TensorFlow's) from call(module), each of which must raise; their
    classes must have the same name."""
    import kiln

    with pytest.raises(Exception) as theirs:
        call(tf)
    with pytest.raises(Exception) as ours:
        call(kiln)
    assert type(ours.value).__name__ == type(theirs.value).__name__, (ours.value, theirs.value)
    return ours.value, theirs.value


def _as_numpy(v):
    if hasattr(v, "numpy"):
        return ("tensor", v.dtype.name, np.asarray(v.numpy()))
    if isinstance(v, (list, tuple)):
        return type(v)(_as_numpy(x) for x in v)
    return v


def raw_ops_kwargs_for_tf(kwargs):
    """The same raw-op arguments for tf.raw_ops: kiln dtypes become TensorFlow's."""
    import kiln
    import tensorflow as tf

    return {k: (getattr(tf, v.name) if isinstance(v, kiln.DType) else v) for k, v in kwargs.items()}


def as_list(out):
    """An op's outputs as a list (one tensor, a tuple or a namedtuple)."""
    return list(out) if isinstance(out, (list, tuple)) else [out]


def raw_op_outputs(name, kwargs, traced):
    """Raw op `name` run by kiln (eagerly, or inside a kiln.function when `traced`) and by
    TensorFlow on the same arguments: [(kiln's output, TensorFlow's)] as numpy arrays, after
    checking that the two have the same number of outputs and each the same dtype and shape."""
    import kiln
    import tensorflow as tf

    want = as_list(getattr(tf.raw_ops, name)(**raw_ops_kwargs_for_tf(kwargs)))
    fn = getattr(kiln.raw_ops, name)
    got = as_list(kiln.function(lambda: fn(**kwargs))() if traced else fn(**kwargs))
    assert len(got) == len(want), (len(got), len(want))
    pairs = [(g.numpy(), w.numpy()) for g, w in zip(got, want)]
    for g, w in pairs:
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
    return pairs


def _ulp_distance(a, b):
    """Per element, how many representable floats lie between a and b (NaNs equal each other)."""
    a = np.asarray(a)
    b = np.asarray(b)
    itype = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    ai = a.view(itype).astype(np.int64)
    bi = b.view(itype).astype(np.int64)
    # Map the sign-magnitude bit patterns onto a line where adjacent floats differ by one.
    top = np.int64(1) << (8 * a.dtype.itemsize - 1)
    ai = np.where(ai < 0, -(ai + top), ai)
    bi = np.where(bi < 0, -(bi + top), bi)
    d = np.abs(ai - bi)
    d = np.where(np.isnan(a) & np.isnan(b), 0, d)
    d = np.where(np.isnan(a) ^ np.isnan(b), np.iinfo(np.int64).max, d)
    return d


def flush_denormals(a):
    """kiln's result as TensorFlow's CPU kernels give it: they flush denormal results to zero
    (FTZ), kiln keeps IEEE arithmetic (a deliberate difference, see test_denormals_are_kept)."""
    a = np.asarray(a)
    tiny = np.finfo(a.dtype).tiny
    return np.where(np.abs(a) < tiny, np.copysign(np.zeros_like(a), a), a)


def assert_same_value(k, t, ulps=0, where=""):
    if isinstance(t, tuple) and t and t[0] == "tensor":
        assert isinstance(k, tuple) and k and k[0] == "tensor", "%s: kiln gave %r, TensorFlow a tensor" % (where, k)
        _, kd, ka = k
        _, td, ta = t
        assert kd == td, "%s: dtype kiln %s, TensorFlow %s" % (where, kd, td)
        assert ka.shape == ta.shape, "%s: shape kiln %s, TensorFlow %s" % (where, ka.shape, ta.shape)
        if ka.dtype.kind == "c":  # each part as a float
            assert_same_value(("tensor", kd, ka.real), ("tensor", td, ta.real), ulps, where + " (real part)")
            assert_same_value(("tensor", kd, ka.imag), ("tensor", td, ta.imag), ulps, where + " (imaginary part)")
        elif ka.dtype.kind == "f":
            d = _ulp_distance(flush_denormals(ka), ta)
            worst = int(d.max()) if d.size else 0
            assert worst <= ulps, "%s: %d ulps apart (allowed %d)\nkiln %r\ntf   %r" % (where, worst, ulps, ka, ta)
        else:
            np.testing.assert_array_equal(ka, ta, err_msg=where)
    elif isinstance(t, (list, tuple)):
        assert len(k) == len(t), where
        for i, (a, b) in enumerate(zip(k, t)):
            assert_same_value(a, b, ulps, "%s[%d]" % (where, i))
    else:
        assert k == t, "%s: kiln %r, TensorFlow %r" % (where, k, t)


def same_error_class(ke, te):
    if type(te).__module__.startswith("tensorflow"):
        return type(ke).__name__ == type(te).__name__ and type(ke).__module__.startswith("kiln")
    return isinstance(ke, type(te))  # a subclass (UnsupportedDTypeError is a TypeError) is that class


_COMPARISONS = [0]


def pytest_terminal_summary(terminalreporter):
    if _COMPARISONS[0]:
        terminalreporter.write_line("kiln vs TensorFlow: %d oracle comparisons (programs run by both)"
                                    % _COMPARISONS[0])


@pytest.fixture(scope="session")
def oracle(tf):
    import kiln

    def check(fn, ulps=0, where=""):
        _COMPARISONS[0] += 1
        kind_k, k = _outcome(fn, kiln)
        kind_t, t = _outcome(fn, tf)
        if kind_t == "error":
            assert kind_k == "error", "%s: TensorFlow raised %s(%s), kiln returned %r" % (where, type(t).__name__, t, k)
            assert same_error_class(k, t), "%s: TensorFlow raised %s(%s), kiln %s(%s)" % (
                where, type(t).__name__, t, type(k).__name__, k)
            return
        assert kind_k == "value", "%s: kiln raised %s(%s), TensorFlow returned %r" % (where, type(k).__name__, k, t)
        assert_same_value(_as_numpy(k), _as_numpy(t), ulps, where)

    return check
