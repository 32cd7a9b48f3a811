"""Complex numbers as TensorFlow's Python API offers them (tf.complex, tf.math.real, imag,
conj, angle, abs), over the raw ops Complex, Real, Imag, Conj, Angle and ComplexAbs. Real
inputs pass through as TensorFlow's functions let them."""
import math as _math

from . import _dtypes
from . import raw_ops as _raw
from ._convert import convert_to_tensor as _t


def complex(real, imag, name=None):  # noqa: A001 (TensorFlow's name)
    """real + imag * 1j: float32 parts make complex64, float64 parts complex128."""
    real = _t(real)
    imag = _t(imag, dtype_hint=real.dtype)
    if real.dtype != imag.dtype:
        raise TypeError("real and imag must have the same dtype, got %s and %s" % (real.dtype.name, imag.dtype.name))
    out = _dtypes.complex128 if real.dtype == _dtypes.float64 else _dtypes.complex64
    return _raw.Complex(real=real, imag=imag, Tout=out)


def real(input, name=None):  # noqa: A002
    input = _t(input)  # noqa: A001
    return _raw.Real(input=input, Tout=input.dtype.real_dtype) if input.dtype.is_complex else input


def imag(input, name=None):  # noqa: A002
    from ._ops import zeros_like

    input = _t(input)  # noqa: A001
    return _raw.Imag(input=input, Tout=input.dtype.real_dtype) if input.dtype.is_complex else zeros_like(input)


def conj(x, name=None):
    x = _t(x)
    return _raw.Conj(input=x) if x.dtype.is_complex else x


def angle(input, name=None):  # noqa: A002
    from ._ops import fill, shape, where, zeros_like

    input = _t(input)  # noqa: A001
    if input.dtype.is_complex:
        return _raw.Angle(input=input, Tout=input.dtype.real_dtype)
    pi = fill(shape(input), _t(_math.pi, input.dtype))
    return where(input < 0, pi, zeros_like(input))


def complex_abs(x):
    """|x| of a complex tensor, in its real dtype (tf.abs of complex input)."""
    return _raw.ComplexAbs(x=x, Tout=x.dtype.real_dtype)
