"""kiln.math: TensorFlow's tf.math names kiln has."""
from ._ops import (add, add_n, subtract, multiply, divide, truediv, floordiv, floormod, mod, pow, maximum, minimum,
                   squared_difference, atan2, equal, not_equal, greater, greater_equal, less, less_equal, logical_and,
                   logical_or, logical_xor, logical_not, negative, abs, sign, exp, log, sqrt, rsqrt, square, floor,
                   ceil, round, tanh, sigmoid, reduce_sum, reduce_mean, reduce_max, reduce_min, reduce_prod,
                   reduce_any, reduce_all, argmax, unsorted_segment_sum, softmax, log_softmax)
from ._ops_breadth import (argmin, cumsum, cumprod, sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh,
                           log1p, expm1, erf, erfc, erfinv, lgamma, digamma, rint, is_nan, is_inf, is_finite,
                           softplus, zeta, polygamma)
from ._ops_indexing import (top_k, segment_sum, segment_mean, segment_max, segment_min, segment_prod,  # noqa: F401
                            unsorted_segment_max, unsorted_segment_min, unsorted_segment_prod)

from ._ops_complex import real, imag, conj, angle  # noqa: F401
from ._ops_indexing import bincount  # noqa: F401


# Last: these call this module's functions at call time (they import it back).
from ._ops_composite import confusion_matrix  # noqa: E402,F401
from ._ops_composite import (reduce_variance, reduce_std, reduce_logsumexp, l2_normalize, count_nonzero,  # noqa: E402,F401
                             divide_no_nan, xlogy, log_sigmoid)

from ._array_helpers import reciprocal, invert_permutation, in_top_k, nextafter  # noqa: E402,F401

__all__ = [n for n in dir() if not n.startswith("_")]
