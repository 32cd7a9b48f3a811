"""kiln.signal (tf.signal): fft/ifft/rfft/irfft over the innermost dimension (the FFT, IFFT,
RFFT and IRFFT ops, src/ops/fft.cc), fftshift/ifftshift, frame, hann_window/hamming_window (in
TensorFlow's arithmetic, so the bits agree) and stft (frame, window, rfft). frame and stft need
the signal's length along the framed axis when they are traced (a static shape)."""
import math

import numpy as np

from . import _dtypes
from ._convert import convert_to_tensor
from ._tensor import Tensor

__all__ = ["fft", "ifft", "rfft", "irfft", "fftshift", "ifftshift", "frame", "hann_window", "hamming_window", "stft"]


def _k():
    import kiln

    return kiln


def _t(x, preferred=None):
    """A tensor of x; numbers and arrays take the `preferred` dtype (TensorFlow converts the
    transforms' Python and numpy inputs to float32 or complex64, whatever their precision)."""
    if isinstance(x, Tensor):
        return x
    if preferred is not None:
        array = np.asarray(x)
        if array.dtype.kind in "iufc" and not (array.dtype.kind == "c" and preferred.is_floating):
            return convert_to_tensor(array.astype(preferred.as_numpy_dtype))
    return convert_to_tensor(x)


def fft(input, name=None):  # noqa: A002 (TensorFlow's names)
    return _k().raw_ops.FFT(input=_t(input, _dtypes.complex64))


def ifft(input, name=None):  # noqa: A002
    return _k().raw_ops.IFFT(input=_t(input, _dtypes.complex64))


def _length(input, fft_length):
    """fft_length as an int32 vector of one element: the innermost dimension when not given."""
    k = _k()
    if fft_length is None:
        inner = input.shape[-1] if input.shape.rank else None
        return k.constant([inner], _dtypes.int32) if inner is not None else k.shape(input)[-1:]
    return k.cast(k.reshape(_t(fft_length), [1]), _dtypes.int32)


def rfft(input_tensor, fft_length=None, name=None):
    """The n/2 + 1 non-redundant terms of the spectrum of a real signal (complex64 for float32)."""
    k = _k()
    x = _t(input_tensor, _dtypes.float32)
    complex_dtype = _dtypes.complex64 if x.dtype == _dtypes.float32 else _dtypes.complex128
    return k.raw_ops.RFFT(input=x, fft_length=_length(x, fft_length), Tcomplex=complex_dtype)


def irfft(input_tensor, fft_length=None, name=None):
    """The real signal whose spectrum starts with input_tensor; its length is fft_length,
    2 * (m - 1) for m terms when not given."""
    k = _k()
    x = _t(input_tensor, _dtypes.complex64)
    if fft_length is None:
        m = x.shape[-1]
        if m is None:
            raise ValueError("irfft needs fft_length when the innermost dimension is unknown")
        fft_length = [2 * (m - 1)]
    real = _dtypes.float32 if x.dtype == _dtypes.complex64 else _dtypes.float64
    return k.raw_ops.IRFFT(input=x, fft_length=_length(x, fft_length), Treal=real)


def _shift(x, axes, sign):
    k = _k()
    x = _t(x)
    if axes is None:
        axes = list(range(x.shape.rank))
    elif isinstance(axes, int):
        axes = [axes]
    shifts = [x.shape[a] // 2 if sign > 0 else -(x.shape[a] // 2) for a in axes]
    return k.roll(x, shifts, axes)


def fftshift(x, axes=None, name=None):
    """The zero-frequency term moved to the center (a roll by n // 2 along each axis)."""
    return _shift(x, axes, 1)


def ifftshift(x, axes=None, name=None):
    """fftshift undone (a roll by -(n // 2))."""
    return _shift(x, axes, -1)


def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """Windows of frame_length samples every frame_step samples along `axis`: that axis becomes
    [frames, frame_length]. pad_end pads the end with pad_value so every sample is framed."""
    k = _k()
    x = _t(signal)
    rank = x.shape.rank
    axis = axis + rank if axis < 0 else axis
    length = x.shape[axis]
    if length is None:
        raise ValueError("frame: the length of axis %d must be known when traced, got shape %s" % (axis, x.shape))
    frame_length, frame_step = int(frame_length), int(frame_step)
    if pad_end:
        frames = -(-length // frame_step)
        needed = max(0, (frames - 1) * frame_step + frame_length - length)
        if needed:
            paddings = [[0, 0]] * rank
            paddings[axis] = [0, needed]
            x = k.pad(x, paddings, constant_values=k.cast(pad_value, x.dtype))
    else:
        frames = max(0, 1 + (length - frame_length) // frame_step) if length >= frame_length else 0
    index = (np.arange(frames)[:, None] * frame_step + np.arange(frame_length)[None, :]).astype(np.int32)
    return k.gather(x, index.reshape(frames, frame_length), axis=axis)


def _raised_cosine(window_length, periodic, dtype, a, b):
    k = _k()
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError("dtype must be a floating point type. Found %s" % dtype)
    window_length = int(window_length)
    if window_length == 1:
        return k.ones([1], dtype)
    even = 1 - window_length % 2
    n = k.cast(window_length + int(bool(periodic)) * even - 1, dtype)
    count = k.cast(k.range(window_length), dtype)
    cos_arg = k.constant(2 * math.pi, dtype) * count / n
    return k.constant(a, dtype) - k.constant(b, dtype) * k.cos(cos_arg)


def hann_window(window_length, periodic=True, dtype=_dtypes.float32, name=None):
    return _raised_cosine(window_length, periodic, dtype, 0.5, 0.5)


def hamming_window(window_length, periodic=True, dtype=_dtypes.float32, name=None):
    return _raised_cosine(window_length, periodic, dtype, 0.54, 0.46)


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window, pad_end=False, name=None):
    """The short-time Fourier transform: rfft of each windowed frame of the innermost axis
    ([..., frames, fft_length // 2 + 1]); fft_length defaults to the smallest power of 2 that
    holds a frame."""
    x = _t(signals)
    if fft_length is None:
        fft_length = 1 << max(0, int(frame_length) - 1).bit_length()
    framed = frame(x, frame_length, frame_step, pad_end=pad_end)
    if window_fn is not None:
        framed = framed * window_fn(frame_length, dtype=x.dtype)
    return rfft(framed, [fft_length])
