"""tf.signal and the FFT ops against TensorFlow in the same test: values (to float rounding:
both sum the same terms in different orders), dtypes and shapes, eagerly and inside a
kiln.function; windows; the ops' bad arguments; and tf.roll, which fftshift uses."""
import numpy as np
import pytest

import kiln
from conftest import errors_of

RNG = np.random.default_rng(17)


def _c64(*shape):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)


SIGNAL = RNG.standard_normal((2, 50)).astype(np.float32)
CASES = [
    ("fft", lambda m: m.signal.fft(_C)),
    ("fft_128", lambda m: m.signal.fft(m.constant(_C.astype(np.complex128)))),
    ("fft_of_numpy_128", lambda m: m.signal.fft(_C.astype(np.complex128))),  # TensorFlow makes it complex64
    ("fft_prime", lambda m: m.signal.fft(_c64(3, 13)[:, :13] * 0 + _P)),
    # lengths with a prime factor above 61 go through Bluestein's convolution
    ("fft_bluestein_67", lambda m: m.signal.fft(_B67)),
    ("ifft_bluestein_202", lambda m: m.signal.ifft(_B202)),
    ("fft_bluestein_1009_f64", lambda m: m.signal.fft(m.constant(_B1009))),
    ("rfft_bluestein", lambda m: m.signal.rfft(SIGNAL, [127])),
    ("irfft_bluestein", lambda m: m.signal.irfft(_B67[:, :40], [79])),
    ("ifft", lambda m: m.signal.ifft(_C)),
    ("fft_length_1", lambda m: m.signal.fft(_C[:, :1])),
    ("rfft", lambda m: m.signal.rfft(SIGNAL)),
    ("rfft_padded", lambda m: m.signal.rfft(SIGNAL, [64])),
    ("rfft_cut", lambda m: m.signal.rfft(SIGNAL, [17])),
    ("rfft_f64", lambda m: m.signal.rfft(m.constant(SIGNAL.astype(np.float64)), [16])),
    ("rfft_of_numpy_f64", lambda m: m.signal.rfft(SIGNAL.astype(np.float64), [16])),
    ("irfft", lambda m: m.signal.irfft(m.signal.rfft(SIGNAL))),
    ("irfft_odd", lambda m: m.signal.irfft(_C[:, :6], [11])),
    ("irfft_short_input", lambda m: m.signal.irfft(_C[:, :3], [12])),
    ("fftshift", lambda m: m.signal.fftshift(np.arange(10))),
    ("ifftshift", lambda m: m.signal.ifftshift(np.arange(15).reshape(3, 5), axes=1)),
    ("frame", lambda m: m.signal.frame(SIGNAL, 8, 5)),
    ("frame_pad_end", lambda m: m.signal.frame(SIGNAL, 8, 5, pad_end=True, pad_value=-1.0)),
    ("frame_axis0", lambda m: m.signal.frame(np.arange(24).reshape(12, 2), 4, 3, axis=0)),
    ("stft", lambda m: m.signal.stft(SIGNAL, frame_length=16, frame_step=4)),
    ("stft_no_window", lambda m: m.signal.stft(SIGNAL, 10, 7, fft_length=12, window_fn=None, pad_end=True)),
    ("roll", lambda m: m.roll(np.arange(12).reshape(3, 4), shift=[1, -2], axis=[0, 1])),
    ("roll_same_axis", lambda m: m.roll(np.arange(5.), shift=[2, 4], axis=[0, 0])),
]
_C = _c64(3, 8)
_P = _c64(3, 13)
_B67 = _c64(2, 67)
_B202 = _c64(202)
_B1009 = _c64(1009).astype(np.complex128)


@pytest.mark.parametrize("name,fn", CASES, ids=[c[0] for c in CASES])
def test_values_eagerly_and_in_a_function(tf, name, fn):
    want = fn(tf).numpy()
    for got in (fn(kiln), kiln.function(lambda: fn(kiln))()):
        got = got.numpy()
        assert got.dtype == want.dtype and got.shape == want.shape, (name, got.shape, want.shape)
        scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
        tol = 1e-12 if want.dtype in (np.float64, np.complex128) else 3e-6
        np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale)


@pytest.mark.parametrize("length", [1, 2, 7, 16])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("window", ["hann_window", "hamming_window"])
def test_windows_are_tensorflows(tf, window, periodic, length):
    # TensorFlow's arithmetic step for step; only cos may differ, by its last bit.
    for dtype in ("float32", "float64"):
        want = getattr(tf.signal, window)(length, periodic=periodic, dtype=getattr(tf, dtype)).numpy()
        got = getattr(kiln.signal, window)(length, periodic=periodic, dtype=getattr(kiln, dtype)).numpy()
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=0, atol=np.finfo(want.dtype).eps)


BAD = [
    ("fft_real", lambda m: m.raw_ops.FFT(input=m.constant(np.ones(4, np.float32)))),
    ("fft_scalar", lambda m: m.raw_ops.FFT(input=np.complex64(1))),
    ("rfft_complex", lambda m: m.raw_ops.RFFT(input=m.constant(_C), fft_length=[8])),
    ("rfft_length_shape", lambda m: m.raw_ops.RFFT(input=SIGNAL, fft_length=[8, 8])),
    ("irfft_real", lambda m: m.raw_ops.IRFFT(input=m.constant(SIGNAL), fft_length=[8])),
]


@pytest.mark.parametrize("name,call", BAD, ids=[b[0] for b in BAD])
def test_bad_arguments_raise_tensorflows_class(tf, name, call):
    errors_of(call, tf)


def test_a_zero_length_transform_is_empty_not_a_crash():
    # TensorFlow's process aborts here (DUCC's assertion): kiln gives the empty transforms.
    x = np.zeros((2, 7), np.float32)
    assert kiln.raw_ops.RFFT(input=x, fft_length=[0]).shape == (2, 1)
    assert kiln.raw_ops.IRFFT(input=np.zeros((2, 1), np.complex64), fft_length=[0]).shape == (2, 0)
    assert kiln.signal.fft(np.zeros((3, 0), np.complex64)).shape == (3, 0)
