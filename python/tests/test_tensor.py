"""kiln.Tensor as a Python object: numpy and DLPack exchange without copies, lifetimes, printing
as TensorFlow prints, shapes and dtypes, and the namespace's errors."""
import gc
import io
import sys
import weakref

import numpy as np
import pytest

import kiln


# -- numpy: no copies either way -----------------------------------------------------------

def test_constant_shares_a_contiguous_numpy_array():
    a = np.arange(1_000_000, dtype=np.float32)
    t = kiln.constant(a)
    assert np.shares_memory(t.numpy(), a)
    a[0] = 42.0  # the tensor is a view of the array (documented: do not write to it after)
    assert float(t[0]) == 42.0


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.int64, np.float32, np.float64])
def test_every_kiln_dtype_round_trips_without_a_copy(dtype):
    a = (np.arange(120) % 3).astype(dtype).reshape(3, 40)  # above 64 bytes, which are copied
    t = kiln.constant(a)
    assert t.dtype == kiln.as_dtype(dtype)
    assert t.shape == (3, 40)
    back = np.asarray(t)
    assert back.dtype == a.dtype
    assert np.shares_memory(back, a)
    np.testing.assert_array_equal(back, a)


def test_non_contiguous_and_unaligned_arrays_are_copied():
    a = np.arange(20, dtype=np.float64).reshape(4, 5)
    t = kiln.constant(a[:, ::2])
    assert not np.shares_memory(t.numpy(), a)
    np.testing.assert_array_equal(t.numpy(), a[:, ::2])
    raw = np.zeros(8 * 5 + 1, dtype=np.uint8)[1:].view(np.float64)  # misaligned
    raw[:] = [1, 2, 3, 4, 5]
    np.testing.assert_array_equal(kiln.constant(raw).numpy(), [1, 2, 3, 4, 5])


def test_numpy_is_a_read_only_view_that_keeps_the_tensor_alive():
    t = kiln.range(10) * 2
    a = t.numpy()
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a[0] = 1
    del t
    gc.collect()
    np.testing.assert_array_equal(a, np.arange(10) * 2)


def test_the_array_stays_alive_while_a_tensor_uses_it():
    a = np.arange(4, dtype=np.float32)
    ref = weakref.ref(a) if hasattr(a, "__weakref__") else None
    t = kiln.constant(a)
    del a
    gc.collect()
    np.testing.assert_array_equal(t.numpy(), [0, 1, 2, 3])
    if ref is not None:
        assert ref() is not None
    del t
    gc.collect()
    if ref is not None:
        assert ref() is None


def test_a_shared_array_is_never_written_by_kiln():
    # Ops that reuse an input's buffer for their output (forwarding) must not write numpy's.
    a = np.ones(1000, dtype=np.float32)
    t = kiln.constant(a)
    u = kiln.exp(t) + 1.0
    assert float(u[0]) == pytest.approx(np.e + 1)
    np.testing.assert_array_equal(a, 1.0)


def test_array_protocol_with_dtype_and_copy():
    t = kiln.constant([1, 2, 3])
    assert np.array(t, dtype=np.float64).dtype == np.float64
    c = np.array(t, copy=True)
    assert not np.shares_memory(c, t.numpy())
    assert c.flags.writeable


def test_numpy_operands_and_ufuncs_defer_to_the_tensor():
    t = kiln.constant([1.0, 2.0])
    r = np.array([1.0, 1.0], dtype=np.float32) + t
    assert isinstance(r, kiln.Tensor)
    np.testing.assert_array_equal(r.numpy(), [2.0, 3.0])


# -- DLPack --------------------------------------------------------------------------------

def test_dlpack_with_numpy_both_ways():
    t = kiln.constant(np.arange(6, dtype=np.int64).reshape(2, 3))
    a = np.from_dlpack(t)
    assert np.shares_memory(a, t.numpy())
    np.testing.assert_array_equal(a, [[0, 1, 2], [3, 4, 5]])
    src = np.linspace(0, 1, 100)  # above the 64 bytes that are copied
    u = kiln.experimental.dlpack.from_dlpack(src)
    assert u.dtype == kiln.float64
    assert np.shares_memory(u.numpy(), src)
    assert t.__dlpack_device__() == (1, 0)


def test_dlpack_with_tensorflow(tf):
    t = kiln.constant([1.5, 2.5])
    back = tf.experimental.dlpack.from_dlpack(kiln.experimental.dlpack.to_dlpack(t))
    np.testing.assert_array_equal(back.numpy(), [1.5, 2.5])
    u = kiln.experimental.dlpack.from_dlpack(tf.constant([[1, 2]], dtype=tf.int64))
    assert u.dtype == kiln.int64 and u.shape == [1, 2]


@pytest.mark.parametrize("module", ["torch", "jax"])
def test_dlpack_with_other_frameworks_when_installed(module):
    m = pytest.importorskip(module)
    t = kiln.constant([1.0, 2.0, 3.0])
    if module == "torch":
        x = m.from_dlpack(t)
        assert x.tolist() == [1.0, 2.0, 3.0]
        np.testing.assert_array_equal(kiln.experimental.dlpack.from_dlpack(m.arange(3)).numpy(), [0, 1, 2])
    else:
        x = m.dlpack.from_dlpack(t)
        assert x.tolist() == [1.0, 2.0, 3.0]
        back = kiln.experimental.dlpack.from_dlpack(m.numpy.arange(100, dtype="int32"))
        assert back.dtype == kiln.int32 and int(kiln.reduce_sum(back)) == 4950


# -- printing ------------------------------------------------------------------------------

PRINTED = [1.5, 7, True, [1.0, 2.0], [[1, 2], [3, 4]], np.arange(2000, dtype=np.float32), [], np.zeros((2, 0)),
           np.array([1e-8, 1e8]), [float("nan"), float("-inf")], np.array(3, np.int64), [[True, False]]]


@pytest.mark.parametrize("value", PRINTED, ids=lambda v: repr(v)[:30])
def test_repr_and_str_as_tensorflow(tf, value):
    k = kiln.constant(value)
    t = tf.constant(value)
    assert repr(k) == repr(t).replace("tf.Tensor", "kiln.Tensor")
    assert str(k) == str(t).replace("tf.Tensor", "kiln.Tensor")


def test_print_goes_to_stderr_and_output_stream(tf, capfd):
    for m in (kiln, tf):
        m.print("value:", m.constant([[1.0, 2.5], [3.0, 4.0]]), m.constant(1e-9), m.constant([True]), 4.5,
                m.range(20), m.constant(2**40), m.constant("text"), m.constant([["a", "b"]]))
    err = capfd.readouterr().err
    half = len(err) // 2
    assert err[:half] == err[half:]
    assert err[:half] == ('value: [[1 2.5]\n [3 4]] 1e-09 [1] 4.5 [0 1 2 ... 17 18 19] 1099511627776 "text" '
                          '[["a" "b"]]\n')
    for m in (kiln, tf):
        m.print(m.constant("alone"))
    assert capfd.readouterr().err == "alone\nalone\n"
    buf = io.StringIO()
    kiln.print(kiln.constant([[1.5]]), output_stream=buf)
    assert buf.getvalue() == "[[1.5]]\n"
    kiln.print("to stdout", output_stream=sys.stdout)
    assert capfd.readouterr().out == "to stdout\n"


def test_format_of_scalars():
    assert "%.2f" % kiln.constant(1.2345) == "1.23"
    assert f"{kiln.constant(3):>4}" == "   3"


# -- shape and dtype -----------------------------------------------------------------------

def test_shape_compares_with_tuples_and_lists(tf):
    t = kiln.zeros([2, 3, 4])
    assert t.shape == (2, 3, 4) and t.shape == [2, 3, 4] and t.shape != (2, 3)
    assert t.shape[1] == 3 and t.shape[1:] == (3, 4) and t.shape.rank == 3 and t.ndim == 3
    assert t.shape.as_list() == [2, 3, 4] and t.shape.num_elements() == 24
    assert repr(t.shape) == repr(tf.zeros([2, 3, 4]).shape)
    assert str(t.shape) == str(tf.zeros([2, 3, 4]).shape)
    assert len(t) == 2 and t.get_shape() == t.shape


def test_dtypes(tf):
    for name in ["bool", "int32", "int64", "float32", "float64", "uint8", "int8", "int16", "uint16", "uint32",
                 "uint64", "float16", "bfloat16", "complex64", "complex128", "string"]:
        k, t = getattr(kiln, name), getattr(tf, name)
        assert k.name == t.name and str(k) == str(t)
        assert k.is_floating == t.is_floating and k.is_integer == t.is_integer and k.is_unsigned == t.is_unsigned
        assert k.is_complex == t.is_complex and k.real_dtype.name == t.real_dtype.name
        if name in ("bool", "complex64", "complex128", "string"):
            for which in ("min", "max"):
                with pytest.raises(TypeError) as ours:
                    getattr(k, which)
                with pytest.raises(TypeError) as theirs:
                    getattr(t, which)
                assert str(ours.value) == str(theirs.value)
        else:
            assert (k.min, k.max, k.size) == (t.min, t.max, t.size)
        assert kiln.as_dtype(t.name) == k and kiln.as_dtype(np.dtype(t.as_numpy_dtype)) == k
        assert k.as_numpy_dtype == t.as_numpy_dtype
    assert kiln.float64 is kiln.double
    assert kiln.half is kiln.float16 and kiln.as_dtype("half") is kiln.float16
    assert kiln.variant.name == tf.variant.name and not kiln.variant.is_numpy_compatible
    with pytest.raises(TypeError, match="qint8"):
        kiln.as_dtype("qint8")
    with pytest.raises(TypeError):
        kiln.zeros([2], dtype="float128")


# -- the namespace and its errors ----------------------------------------------------------

def test_names_tensorflow_has_and_kiln_lacks_are_attribute_errors():
    with pytest.raises(AttributeError, match="lite"):
        kiln.lite
    with pytest.raises(AttributeError):
        kiln.nn.ctc_loss
    assert not hasattr(kiln, "Variable_that_never_was")


def test_op_errors_are_tensorflow_classes_with_the_cpp_message():
    with pytest.raises(kiln.errors.InvalidArgumentError) as e:
        kiln.matmul(kiln.ones([2, 3]), kiln.ones([2, 3]))
    assert isinstance(e.value, kiln.errors.OpError)
    assert "MatMul" in str(e.value) or "Matrix size-incompatible" in str(e.value)
    with pytest.raises(kiln.errors.InvalidArgumentError):
        kiln.constant([1, 2]) + kiln.constant([1.0, 2.0])
    with pytest.raises(kiln.errors.InvalidArgumentError):
        kiln.reshape(kiln.range(6), [4, 2])
    assert issubclass(kiln.errors.OperatorNotAllowedInGraphError, TypeError)


def test_tensors_are_unhashable_but_have_refs():
    t = kiln.constant(1)
    with pytest.raises(TypeError, match="ref"):
        {t}
    r = t.ref()
    assert r.deref() is t and r in {r} and r != kiln.constant(1).ref()


def test_eager_tensors_have_no_name():
    with pytest.raises(AttributeError, match="eager"):
        kiln.constant(1).name


# -- random, dropout and assertions --------------------------------------------------------

def test_random_streams_repeat_with_seeds():
    kiln.random.set_seed(5)
    a = kiln.random.uniform([1000])
    b = kiln.random.normal([3], seed=1)
    kiln.random.set_seed(5)
    assert np.array_equal(a.numpy(), kiln.random.uniform([1000]).numpy())
    assert np.array_equal(b.numpy(), kiln.random.normal([3], seed=1).numpy())
    assert 0 <= float(kiln.reduce_min(a)) and float(kiln.reduce_max(a)) < 1
    assert abs(float(kiln.reduce_mean(a)) - 0.5) < 0.05
    i = kiln.random.uniform([100], minval=-3, maxval=3, dtype=kiln.int32)
    assert i.dtype == kiln.int32 and -3 <= int(kiln.reduce_min(i)) and int(kiln.reduce_max(i)) < 3
    with pytest.raises(ValueError, match="maxval"):
        kiln.random.uniform([2], dtype=kiln.int64)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_truncated_normal_is_tensorflows(tf, dtype):
    """TensorFlow's numbers (test_random_oracle.py has the rest): each call advances the stream."""
    for m in (kiln, tf):
        m.random.set_seed(11)
    for _ in range(2):
        ours = kiln.random.truncated_normal([20000], mean=1.0, stddev=2.0, dtype=dtype, seed=3)
        theirs = tf.random.truncated_normal([20000], mean=1.0, stddev=2.0, dtype=dtype, seed=3)
        assert ours.dtype.name == theirs.dtype.name and ours.shape == theirs.shape
        a, b = ours.numpy().astype(np.float64), theirs.numpy().astype(np.float64)
        np.testing.assert_array_equal(a, b)
        assert a.min() >= -3.01 and a.max() <= 5.01  # within two standard deviations
    traced = kiln.function(lambda: kiln.random.truncated_normal([4], dtype=dtype, seed=9))()
    assert traced.dtype.name == dtype and traced.shape == [4]
    for m in (kiln, tf):  # the float mean cannot become an int32 tensor
        with pytest.raises(TypeError, match="Cannot convert 0.0 to EagerTensor of dtype int32"):
            m.random.truncated_normal([2], dtype=m.int32)


def test_dropout_keeps_the_expected_sum():
    x = kiln.ones([10000])
    y = kiln.nn.dropout(x, rate=0.5, seed=3)
    kept = y.numpy()
    assert set(np.unique(kept)) <= {0.0, 2.0}
    assert abs(kept.mean() - 1.0) < 0.05
    with pytest.raises(ValueError, match="rate"):
        kiln.nn.dropout(x, rate=1.0)


def test_debugging_assertions(tf):
    kiln.debugging.assert_equal(kiln.constant([1, 2]), [1, 2])
    kiln.debugging.assert_less(kiln.constant([1, 2]), 3)
    for m in (kiln, tf):
        with pytest.raises(m.errors.InvalidArgumentError, match="did not hold"):
            m.debugging.assert_greater(m.constant([1, 2]), 1, message="too small")
