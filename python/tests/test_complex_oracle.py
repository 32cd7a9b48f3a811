"""complex64 and complex128 with TensorFlow as the oracle: constants and dtype inference, reprs,
numpy exchange, arithmetic (+ - * / negation, square, equality), casts to and from every real
dtype, the parts (tf.math.real, imag, conj, angle, abs, tf.complex), the element movers, eager
and inside kiln.function, and complex tensors through SavedModels and checkpoints."""
import numpy as np
import pytest

import kiln

tf = pytest.importorskip("tensorflow")

Z64 = np.array([1 + 2j, -3.5 - 4j, 0j, 1e-3 + 1e3j, np.nan + 1j, np.inf - 1j], np.complex64)
Z128 = Z64.astype(np.complex128) * (1 + 1e-12j)


# Finite values for products and quotients: with an infinite or NaN part TensorFlow's result
# depends on the element's position (Eigen's vector lanes vs its C-library tail; see
# test_kernel_fuzz_oracle's known differences).
F64 = Z64[:4]


def _z(m, a=Z64):
    return m.constant(a)


CASES = [
    lambda m: m.constant(1j),
    lambda m: m.constant([1 + 2j, 3]),
    lambda m: m.constant(1.5, dtype=m.complex64),
    lambda m: m.constant([1, 2], dtype=m.complex128),
    lambda m: m.constant(1j, dtype=m.float32),
    lambda m: _z(m),
    lambda m: _z(m, Z128),
    lambda m: _z(m) + _z(m),
    lambda m: _z(m, Z128) - m.constant(1 + 1j, dtype=m.complex128),
    lambda m: _z(m, F64) * m.constant([[2j], [1]], dtype=m.complex64),
    lambda m: _z(m, F64) / m.constant(2 - 1j, dtype=m.complex64),
    lambda m: -_z(m, Z128),
    lambda m: m.math.square(_z(m, F64)),
    lambda m: m.equal(_z(m), m.constant(1 + 2j, dtype=m.complex64)),
    lambda m: m.not_equal(_z(m, Z128), _z(m, Z128)),
    lambda m: _z(m) + m.constant([1.0] * 6),
    lambda m: m.cast(_z(m), m.float32),
    # (finite values: NaN and overflow to an integer saturate in kiln, TensorFlow's CPU result
    # is the x86 conversion's; test_python_oracle covers that documented difference)
    lambda m: m.cast(_z(m, Z128[:4]), m.int32),
    lambda m: m.cast(_z(m), m.bool),
    lambda m: m.cast(_z(m), m.complex128),
    lambda m: m.cast(_z(m, Z128), m.complex64),
    lambda m: m.cast(m.constant([1.5, -2.0]), m.complex64),
    lambda m: m.cast(m.constant([7, -2], m.int64), m.complex128),
    lambda m: m.cast(m.constant([True, False]), m.complex64),
    lambda m: m.math.real(_z(m)),
    lambda m: m.math.imag(_z(m, Z128)),
    lambda m: m.math.conj(_z(m)),
    lambda m: m.math.angle(_z(m)),
    lambda m: m.abs(_z(m, Z128)),
    lambda m: m.math.real(m.constant([1.5])),
    lambda m: m.math.imag(m.constant([1.5])),
    lambda m: m.math.conj(m.constant([1.5])),
    lambda m: m.math.angle(m.constant([-1.5, 0.0, 2.0])),
    lambda m: m.complex(m.constant([1.0, 2.0]), m.constant([3.0, -4.0])),
    lambda m: m.complex(m.constant([[1.0], [2.0]], m.float64), m.constant([3.0, -4.0], m.float64)),
    lambda m: m.complex(m.constant([1.0]), m.constant([1.0], m.float64)),
    lambda m: m.reshape(_z(m), [2, 3]),
    lambda m: m.transpose(m.reshape(_z(m, Z128), [2, 3])),
    lambda m: m.concat([_z(m), _z(m)], 0),
    lambda m: m.gather(_z(m), [5, 0, 2]),
    lambda m: m.stack([_z(m), _z(m)], axis=1),
    lambda m: m.where(m.constant([True, False] * 3), _z(m), m.zeros([6], m.complex64)),
    lambda m: m.ones([2], m.complex128),
    lambda m: m.zeros_like(_z(m)),
    lambda m: m.raw_ops.Real(input=_z(m), Tout=m.float32),
    lambda m: m.raw_ops.ComplexAbs(x=_z(m, Z128), Tout=m.float64),
]


# Division: TensorFlow's Eigen kernel and the C++ library scale the divisor differently, and
# results may differ in the last bit.
ULPS = {10: 2}


@pytest.mark.parametrize("i", range(len(CASES)))
def test_complex_agrees_with_tensorflow(oracle, i):
    oracle(CASES[i], ulps=ULPS.get(i, 0), where="case %d" % i)


def test_reprs_and_numpy():
    for a in (Z64, Z128, np.complex64(1 - 2j)):
        assert repr(kiln.constant(a)) == repr(tf.constant(a)).replace("tf.", "kiln.")
        assert str(kiln.constant(a)) == str(tf.constant(a)).replace("tf.", "kiln.")
    arr = np.asarray(kiln.constant(Z128))
    assert arr.dtype == np.complex128
    np.testing.assert_array_equal(arr, Z128)
    with pytest.raises(TypeError):
        float(kiln.constant(1j))


def test_traced_equals_eager():
    def program(m, z):
        w = m.math.conj(z) * z + m.complex(m.math.real(z), m.math.angle(z))
        return m.abs(w), m.cast(w, m.float32), m.reshape(w, [2, 2])

    z = kiln.constant(F64)
    eager = program(kiln, z)
    traced = kiln.function(lambda v: program(kiln, v))(z)
    expected = program(tf, tf.constant(F64))
    for e, t, o in zip(eager, traced, expected):
        np.testing.assert_array_equal(e.numpy(), t.numpy())
        np.testing.assert_allclose(e.numpy(), o.numpy(), rtol=1e-6)


def test_saved_model_and_checkpoint_with_complex(tmp_path):
    class M(tf.Module):
        def __init__(self):
            self.w = tf.Variable(tf.constant([1 + 1j, 2 - 3j], tf.complex64))

        @tf.function(input_signature=[tf.TensorSpec([2], tf.complex64)])
        def __call__(self, z):
            return {"y": z * self.w + tf.constant(0.5j, tf.complex64), "r": tf.math.real(z)}

    path = str(tmp_path / "m")
    tf.saved_model.save(M(), path)
    z = np.array([3 - 1j, -2j], np.complex64)
    want = tf.saved_model.load(path).signatures["serving_default"](z=tf.constant(z))
    got = kiln.saved_model.load(path).signatures["serving_default"](z=kiln.constant(z))
    for k in want:
        np.testing.assert_array_equal(got[k].numpy(), want[k].numpy())
    prefix = str(tmp_path / "m" / "variables" / "variables")
    reader = kiln.train.load_checkpoint(prefix)
    name = [n for n in reader.get_variable_to_shape_map() if "VARIABLE_VALUE" in n][0]
    np.testing.assert_array_equal(np.asarray(reader.get_tensor(name)),
                                  tf.train.load_checkpoint(prefix).get_tensor(name))
