"""kiln: TensorFlow's eager + tf.function model on a C++ core. `import kiln as tf`."""
import os as _os
import sys as _sys

from ._openblas import point_at_wheel_openblas as _point_at_wheel_openblas

_point_at_wheel_openblas()

# The extension and libkiln resolve their own dependencies first (RTLD_DEEPBIND): a process
# that imported TensorFlow already has TF's private protobuf runtime in its global symbol
# scope, and kiln's GraphDef code must keep using the protobuf it was built with.
_flags = _sys.getdlopenflags()
_sys.setdlopenflags(_os.RTLD_NOW | getattr(_os, "RTLD_DEEPBIND", 0))
try:
    from . import _core
finally:
    _sys.setdlopenflags(_flags)
from . import _dtypes
from . import _shape
from . import errors
from . import _convert
from . import _tensor  # noqa: F401 (adds Tensor's Python methods)

_core._set_hooks(_dtypes.BY_ENUM, _convert.convert_to_tensor, _convert.binary_operand, _shape.TensorShape._from_dims,
                 errors._BY_CPP_CODE)

from ._core import Tensor  # noqa: E402

__version__ = _core.version()  # the library's (include/kiln/version.h), as the CLI reports it
from ._dtypes import (DType, as_dtype, bool, int32, int64, float32, float64, double, uint8, int8, int16,  # noqa: E402,A004,E501
                      uint16, uint32, uint64, variant, float16, bfloat16, half, string, complex64, complex128)
from ._shape import TensorShape  # noqa: E402
from ._convert import constant, convert_to_tensor  # noqa: E402
from ._ops import (  # noqa: E402
    add, add_n, subtract, multiply, divide, truediv, floordiv, maximum, minimum, equal, not_equal, greater,
    greater_equal, less, less_equal, logical_and, logical_or, logical_not, negative, abs, sign, exp, sqrt, square,
    round, tanh, sigmoid, cast, identity, zeros_like, ones_like, where, matmul, reduce_sum, reduce_mean, reduce_max,
    reduce_min, reduce_prod, reduce_any, reduce_all, argmax, reshape, transpose, concat, stack, slice,
    strided_slice, gather, expand_dims, squeeze, broadcast_to, tile, shape, size, rank, zeros, ones, fill, eye, range,
    print, pow)
from ._ops_breadth import (  # noqa: E402
    pad, split, unstack, reverse, one_hot, einsum, stop_gradient, identity_n, argmin, cumsum, sin, cos, tan, asin,
    acos, atan, sinh, cosh, asinh, acosh, atanh)
from ._ops_indexing import (  # noqa: E402
    boolean_mask, roll,
    gather_nd, scatter_nd, tensor_scatter_nd_update, tensor_scatter_nd_add, tensor_scatter_nd_sub,
    tensor_scatter_nd_max, tensor_scatter_nd_min, sort, argsort, unique, linspace, reverse_sequence)
from ._spec import TensorSpec, TypeSpec, SparseTensorSpec, RaggedTensorSpec  # noqa: E402
from ._variable import Variable, VariableAggregation, VariableSynchronization  # noqa: E402
from ._tape import GradientTape, UnconnectedGradients  # noqa: E402
from ._custom_gradient import custom_gradient, recompute_grad, init_scope  # noqa: E402
from ._tensor_array import TensorArray  # noqa: E402
from ._functional import map_fn  # noqa: E402
from ._py_function import numpy_function, py_function  # noqa: E402
from ._ragged import RaggedTensor  # noqa: E402
from . import ragged  # noqa: E402
from ._sparse import SparseTensor  # noqa: E402
from ._indexed_slices import IndexedSlices  # noqa: E402
from . import sparse  # noqa: E402
from ._environment import get_current_name_scope, name_scope  # noqa: E402
from ._module import Module  # noqa: E402
from ._function import function, Function, ConcreteFunction  # noqa: E402
from ._control_flow import cond, while_loop, switch_case, group, no_op  # noqa: E402
from . import math, nn, random, debugging, experimental, config, autograph, dtypes, train, saved_model, distribute  # noqa: E402,E501
from . import types  # noqa: E402
from . import sysconfig  # noqa: E402
from . import compat  # noqa: E402
from . import raw_ops, image, bitwise, strings, io, nest, linalg, signal, autodiff, data  # noqa: E402
from .strings import as_string  # noqa: E402
from .linalg import norm  # noqa: E402  (tf.norm is tf.linalg.norm)
from ._ops_complex import complex  # noqa: E402,A004
from ._ops_composite import meshgrid, tensordot  # noqa: E402
from ._array_helpers import (repeat, sequence_mask, searchsorted, unique_with_counts,  # noqa: E402
                             broadcast_dynamic_shape, broadcast_static_shape, ensure_shape, Assert)
from ._functional import scan, vectorized_map, foldl, foldr  # noqa: E402
from .debugging import (assert_equal, assert_less, assert_greater, assert_less_equal,  # noqa: E402
                        assert_greater_equal)
from .math import floor  # noqa: E402
from ._random import set_seed as _set_seed  # noqa: E402,F401
from ._clip import clip_by_value, clip_by_norm, clip_by_global_norm  # noqa: E402
from ._environment import (executing_eagerly, get_logger, device, is_tensor, bitcast, saturate_cast,  # noqa: E402
                           get_static_value)
from ._environment import _version  # noqa: E402
from ._tensorflow_alias import install as install_as_tensorflow  # noqa: E402
from . import _internal_api as __internal__  # noqa: E402

version = _version()

newaxis = None

# tf names kiln does not have fail as AttributeError naming them (module __getattr__ runs only
# for names not found above).
def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    if name == "keras":  # imported on first use: Keras is optional and slow to import
        from ._keras import load
        globals()["keras"] = load()
        return globals()["keras"]
    raise AttributeError("module 'kiln' has no attribute '%s' (TensorFlow's tf.%s is not implemented in kiln)"
                         % (name, name))
from ._initializers import (zeros_initializer, ones_initializer, constant_initializer,  # noqa: E402
                            random_normal_initializer, random_uniform_initializer)
from ._ragged import install_dispatch as _install_ragged_dispatch  # noqa: E402
_install_ragged_dispatch(_sys.modules[__name__], math, nn, dtypes)  # elementwise functions keep ragged rows
