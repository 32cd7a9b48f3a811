"""The kernel fuzzer's TensorFlow side: every op kiln registers that TensorFlow has too, run on
random inputs and attrs by both (kiln through execute_op, TensorFlow through tf.raw_ops), the
outcomes compared. Inputs follow TensorFlow's OpDef (argument names, list arguments, type attrs
and their allowed dtypes); values include NaN, infinities and integer extremes; shapes include
zero-sized and broadcast dims. A case is fixed by (op, case number), printed with a finding.

A finding is: one side raises and the other returns, different dtypes or shapes, or different
values (exact for integers and bools; a few ulps for floats, NaNs equal). Where both raise,
the error classes are compared too."""
import zlib

import numpy as np
import pytest

import kiln
from conftest import _ulp_distance, flush_denormals

CASES_PER_OP = 40

# Ops whose values kiln and TensorFlow may round differently (transcendental functions, sums in
# another order): compared within these ulps. Everything else is compared bit for bit.
_ULPS = {"Exp": 4, "Log": 4, "Tanh": 4, "Sigmoid": 4, "Rsqrt": 4, "Sqrt": 1, "Pow": 8, "Atan2": 4, "Softmax": 8,
         "LogSoftmax": 8, "Mean": 64, "Sum": 64, "Prod": 64, "MatMul": 64, "BatchMatMulV2": 64, "RealDiv": 1,
         "Conv2D": 64, "AvgPool": 8, "BiasAdd": 0, "FusedBatchNormV3": 64, "SquaredDifference": 1,
         "SparseSoftmaxCrossEntropyWithLogits": 64,
         # The rest of the elementwise math: kiln calls the C library, TensorFlow Eigen's versions.
         "Sin": 4, "Cos": 4, "Tan": 4, "Asin": 4, "Acos": 4, "Atan": 4, "Sinh": 4, "Cosh": 4, "Asinh": 4, "Acosh": 4,
         "Atanh": 4, "Log1p": 4, "Expm1": 4, "Erf": 4, "Erfc": 8, "Erfinv": 8, "Lgamma": 8, "Digamma": 16,
         "Softplus": 4, "Elu": 4, "Selu": 4, "Softsign": 1, "Zeta": 4, "Polygamma": 8,
         # LU and LLT: TensorFlow's Eigen and this machine's order the blocked updates differently.
         "MatrixInverse": 64, "MatrixSolve": 64, "MatrixDeterminant": 64, "LogMatrixDeterminant": 64, "Cholesky": 64,
         "MatrixTriangularSolve": 64,
         # A per-channel mean (a sum in another order) taken back out of each pixel.
         "AdjustContrastv2": 64}

# Cases where kiln deliberately or knowingly differs, with the reason; they are skipped, and
# every other case of the op is compared.
def _has_non_finite(inputs):
    return any(np.issubdtype(np.asarray(v).dtype, np.floating) and not np.all(np.isfinite(v))
               for vs in inputs.values() for v in (vs if isinstance(vs, list) else [vs]))


def _complex_with_non_finite(inputs):
    return any(np.iscomplexobj(v) and not np.all(np.isfinite(v)) for v in inputs.values())


_KNOWN_DIFFERENCES = {
    # TensorFlow's complex products and quotients are Eigen's: vectorized lanes compute the
    # textbook formulas (a quotient with a scaled divisor), the scalar tail calls the C
    # library's (C99 Annex G, which recovers infinities), so an infinite or NaN part gives
    # results that depend on the element's position; kiln computes every element as the lanes.
    "RealDiv": _complex_with_non_finite,
    "Mul": _complex_with_non_finite,
    "Square": _complex_with_non_finite,
    # TensorFlow's CPU softmax (oneDNN) gives a row with a NaN or +Inf NaN only where that
    # element is and 0 elsewhere; kiln's row is NaN throughout (IEEE arithmetic of exp/sum).
    "Softmax": _has_non_finite,
    "LogSoftmax": _has_non_finite,
    # TensorFlow 2.21's CPU Round of an integer tensor returns zeros (raw_ops.Round([1, 2]) is
    # [0, 0]); kiln registers Round for float types only, as tf.math.round's docs describe.
    "Round": lambda inputs: np.issubdtype(np.asarray(inputs["x"]).dtype, np.integer),
    # TensorFlow 2.21's float64 Erf of +-inf is NaN; kiln gives +-1 (the limit; float32 agrees).
    "Erf": lambda inputs: np.asarray(inputs["x"]).dtype == np.float64 and np.isinf(inputs["x"]).any(),
}

# The stateless V2 ops with a Philox counter shorter than its two words: TensorFlow does not
# check the length and reads past the counter's end; kiln refuses it (InvalidArgumentError).
for _op in ("StatelessRandomUniformV2", "StatelessRandomNormalV2", "StatelessTruncatedNormalV2",
            "StatelessRandomUniformIntV2", "StatelessRandomUniformFullIntV2"):
    _KNOWN_DIFFERENCES[_op] = lambda inputs: np.asarray(inputs["counter"]).size < 2
del _op
# Ops that only move bytes: their float outputs are compared bit for bit (TensorFlow flushes
# no denormals there, which the ulp comparison of computed values allows for).
_MOVES_BITS = {"Bitcast", "DecodePaddedRaw"}

# Cases TensorFlow 2.21 cannot survive: its kernel aborts the process (a failed CHECK) instead
# of raising, so they are not run there; kiln's C++ kernel fuzzer runs them on kiln alone.
def _window_attrs_not_of_rank(rank):
    return lambda inputs, attrs: any(len(attrs[k]) != rank for k in ("strides", "ksize", "dilations") if k in attrs) or \
        "strides" not in attrs


_TENSORFLOW_ABORTS = {
    # These backprop ops index strides (ksize, dilations) by NHWC / NDHWC position without
    # checking the list's length.
    "DepthwiseConv2dNativeBackpropInput": _window_attrs_not_of_rank(4),
    "DepthwiseConv2dNativeBackpropFilter": _window_attrs_not_of_rank(4),
}
# TensorFlow's 3-D convolution and pooling ops abort on most inputs that are not 5-D volumes
# (this fuzzer's shapes have rank 4 at most): they are left to test_conv_grad_oracle.py's cases
# and to kiln's own C++ kernel fuzzer.
_TENSORFLOW_ABORTS_ON_RANDOM_SHAPES = {"Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2", "MaxPool3D",
                                       "AvgPool3D", "MaxPool3DGrad", "AvgPool3DGrad"}
# Random matrices are almost never positive definite, and there TensorFlow's Cholesky leaves
# the upper triangle of its output uninitialized (kiln gives zeros): test_linalg_oracle.py
# compares Cholesky on matrices that are, and on one that is not (lower triangle: NaN).
# Singular vectors, Q and eigenvectors are unique only up to sign, and random inputs (with
# NaNs and infinities) send the iterative solvers down paths where those choices and NaN
# placement differ: test_linalg_oracle.py compares them sign-free and through their products.
# The FFTs: TensorFlow's (DUCC) and kiln's (KISS FFT) factor a length differently, so terms that
# cancel to nearly zero differ by any number of ulps and NaNs and infinities spread through
# different butterflies; and TensorFlow aborts on an fft_length of 0. test_signal_oracle.py
# compares them within a tolerance scaled by the outputs' magnitude.
_NOT_COMPARABLE_ON_RANDOM_INPUTS = {"Cholesky", "Svd", "Qr", "SelfAdjointEigV2", "FFT", "IFFT", "RFFT", "IRFFT"}

_DTYPES = {"DT_FLOAT": np.float32, "DT_DOUBLE": np.float64, "DT_INT32": np.int32, "DT_INT64": np.int64,
           "DT_BOOL": np.bool_, "DT_UINT8": np.uint8, "DT_INT8": np.int8, "DT_INT16": np.int16, "DT_UINT16": np.uint16,
           "DT_UINT32": np.uint32, "DT_UINT64": np.uint64, "DT_STRING": np.object_, "DT_COMPLEX64": np.complex64,
           "DT_COMPLEX128": np.complex128}

# String values: empty, ASCII, whitespace, numbers (valid and not), base64, UTF-8 and bytes that
# are no UTF-8.
_STRINGS = [b"", b"a", b"abc", b"  Mixed Case\t", b"12", b"-3.5", b"1e3", b"inf", b"nan", b"0x1f", b"9999999999",
            "h\u00e9llo w\u00f6rld".encode(), b"aGVsbG8", b"YQ==", b"a+b/", b"\xff\xfe", b"x" * 40]


_COMMON_DTYPES = (np.float32, np.float64, np.int32, np.int64, np.bool_, np.complex64, np.complex128)


_CATALOG = {entry["name"]: entry for entry in kiln._core._op_catalog()}


def _kiln_kernel_dtypes(op):
    """The dtypes kiln has kernels for that this test draws values of (numpy's own types)."""
    entry = _CATALOG.get(op)
    if not entry:
        return ()
    return tuple(np.object_ if d == "string" else np.dtype(d).type for d in entry["dtypes"]
                 if d in _NUMPY_NAMES or d == "string")


_NUMPY_NAMES = {np.dtype(t).name for t in _DTYPES.values()}


def _tf_op_def(name):
    from tensorflow.python.framework import op_def_registry
    return op_def_registry.get(name)


def _fuzzable_ops():
    """(name, kiln attrs) of the ops both have that can run on random inputs."""
    tf = pytest.importorskip("tensorflow")
    ops = []
    for name, attrs, stateful, _tfjs, internal in kiln._core._registered_ops():
        if internal or stateful or not hasattr(tf.raw_ops, name) or _tf_op_def(name) is None:
            continue
        if name in ("Const", "Placeholder", "NoOp", "StatelessIf", "StatelessWhile", "StatelessCase"):
            continue
        if name in _TENSORFLOW_ABORTS_ON_RANDOM_SHAPES or name in _NOT_COMPARABLE_ON_RANDOM_INPUTS:
            continue
        if any(t in ("func", "list(func)") for _, t, _ in attrs):
            continue
        # Variants (TensorList handles) are made by ops, not drawn at random, and hold no
        # values to compare: test_tensor_list_oracle.py compares those ops' programs.
        op_def = _tf_op_def(name)
        if any(arg.type == 21 for arg in list(op_def.input_arg) + list(op_def.output_arg)):
            continue
        ops.append((name, attrs))
    return ops


class _Case:
    def __init__(self, op, number):
        self.rng = np.random.default_rng(zlib.crc32(op.encode()) * 1000 + number)

    def chance(self, p):
        return self.rng.random() < p

    def shape(self):
        dims = []
        for _ in range(int(self.rng.integers(0, 5))):
            r = int(self.rng.integers(0, 10))
            dims.append(0 if r == 0 else 1 if r <= 3 else int(self.rng.integers(2, 5)))
        return dims

    def values(self, dtype, shape, index=False):
        n = int(np.prod(shape)) if shape else 1
        if dtype == np.object_:
            picks = self.rng.integers(len(_STRINGS), size=n)
            return np.array([_STRINGS[i] for i in picks] + [None], dtype=object)[:-1].reshape(shape)
        if dtype == np.bool_:
            return self.rng.random(n).reshape(shape) < 0.5
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            v = self.rng.integers(-2 if index else -3, 5 if index else 7, n).astype(dtype)
            if not index:
                special = self.rng.random(n)
                v[special < 0.05] = info.min
                v[(special >= 0.05) & (special < 0.1)] = info.max
            return v.reshape(shape)
        if np.issubdtype(dtype, np.complexfloating):
            part = np.float32 if dtype == np.complex64 else np.float64
            z = np.empty(shape, dtype)  # parts set directly: 1j * inf would make a NaN real part
            z.real, z.imag = self.values(part, shape), self.values(part, shape)
            return z
        v = self.rng.uniform(-4, 4, n).astype(dtype)
        special = self.rng.random(n)
        v[special < 0.04] = np.nan
        v[(special >= 0.04) & (special < 0.07)] = np.inf
        v[(special >= 0.07) & (special < 0.1)] = 0.0
        return v.reshape(shape)


def _make(op, attrs, number):
    """(inputs by TF arg name, attrs by name) for one case, or None if TF's OpDef needs
    something this fuzzer cannot make."""
    case = _Case(op, number)
    op_def = _tf_op_def(op)
    kiln_attr_types = {a: t for a, t, _ in attrs}
    # The kernel's dtype (the first input's type attr) is drawn from the dtypes kiln has kernels
    # for; other type attrs (index types) from the five dtypes every op takes. Dtypes TensorFlow
    # registers and kiln lacks are counted by bench/python/op_coverage.py, not fuzzed.
    kernel_attr = next((arg.type_attr for arg in op_def.input_arg if arg.type_attr), None)
    chosen = {}  # type attr -> numpy dtype
    for a in op_def.attr:
        if a.type != "type":
            continue
        names = tf_type_names(a.allowed_values.list.type) if a.HasField("allowed_values") else list(_DTYPES)
        usable = _kiln_kernel_dtypes(op) if a.name == kernel_attr else _COMMON_DTYPES
        allowed = [_DTYPES[t] for t in names if t in _DTYPES and _DTYPES[t] in usable]
        if not allowed and a.name == kernel_attr:  # the kernel's dtype is another input's (Substr's string)
            allowed = [_DTYPES[t] for t in names if t in _DTYPES and _DTYPES[t] in _COMMON_DTYPES]
        if not allowed:
            return None
        chosen[a.name] = allowed[int(case.rng.integers(len(allowed)))]
    base = case.shape()
    inputs, out_attrs = {}, {}
    type_list_attrs = {arg.type_list_attr for arg in op_def.input_arg if arg.type_list_attr}
    for arg in op_def.input_arg:
        if arg.type_list_attr:  # a list of tensors of any dtypes (IdentityN's input)
            dtypes = list(_DTYPES.values())
            inputs[arg.name] = [case.values(dtypes[int(case.rng.integers(len(dtypes)))], base)
                                for _ in range(int(case.rng.integers(1, 4)))]
            continue
        if arg.type_attr:
            dtype = chosen.get(arg.type_attr)
        else:
            dtype = _DTYPES.get(_type_name(arg.type))
        if dtype is None:
            return None
        index = np.issubdtype(dtype, np.integer) and arg.name not in ("x", "y", "input", "features", "value", "values")

        def one():
            if index:
                dims = [len(base)] if case.chance(0.5) else ([] if case.chance(0.5) else [int(case.rng.integers(0, 4))])
            elif case.chance(0.3):
                dims = [1 if case.chance(0.3) else d for d in base[int(case.rng.integers(0, len(base) + 1)):]]
            else:
                dims = base
            return case.values(dtype, dims, index)

        if arg.number_attr:
            n = int(case.rng.integers(1, 4))
            out_attrs[arg.number_attr] = n
            inputs[arg.name] = [one() for _ in range(n)]
        else:
            inputs[arg.name] = one()
    for a in op_def.attr:
        if a.name in out_attrs or a.type == "type" or a.name in type_list_attrs or a.name not in kiln_attr_types:
            continue
        if a.HasField("default_value") and case.chance(0.6):
            continue
        if a.type == "int":
            out_attrs[a.name] = int(case.rng.integers(-1, 5))
        elif a.type == "float":
            out_attrs[a.name] = float(case.rng.choice([0.0, 0.5, 1e-3, -1.0, 2.0]))
        elif a.type == "bool":
            out_attrs[a.name] = bool(case.chance(0.5))
        elif a.type == "string":
            options = list(a.allowed_values.list.s) if a.HasField("allowed_values") else [b"NHWC", b"NCHW", b""]
            out_attrs[a.name] = options[int(case.rng.integers(len(options)))].decode()
        elif a.type == "list(int)":
            out_attrs[a.name] = [int(x) for x in case.rng.integers(0, 4, int(case.rng.integers(0, 5)))]
        else:
            return None
    type_attrs = {k: v for k, v in chosen.items() if k in kiln_attr_types}
    return inputs, out_attrs, type_attrs


def _type_name(enum_value):
    from tensorflow.core.framework import types_pb2
    return types_pb2.DataType.Name(enum_value)


def tf_type_names(values):
    return [_type_name(v) for v in values]


def _run_kiln(op, inputs, attrs, type_attrs):
    flat = []
    for v in inputs.values():
        flat.extend(v if isinstance(v, list) else [v])
    all_attrs = dict(attrs)
    all_attrs.update({k: kiln.as_dtype(v) for k, v in type_attrs.items()})
    return [np.asarray(t.numpy()) for t in kiln._core.execute_op(op, [kiln.constant(x) for x in flat], all_attrs)]


def _run_tf(tf, op, inputs, attrs, type_attrs):
    import inspect
    # tf.raw_ops names inputs as TensorFlow's API defs rename them (Sum's reduction_indices is
    # `axis`): by position, in the OpDef's order.
    params = list(inspect.signature(getattr(tf.raw_ops, op)).parameters)
    kwargs = {params[i]: ([tf.constant(x) for x in v] if isinstance(v, list) else tf.constant(v))
              for i, v in enumerate(inputs.values())}
    op_def = _tf_op_def(op)
    number_attrs = {a.number_attr for a in op_def.input_arg if a.number_attr}
    type_attrs_of_inputs = {a.type_attr or a.type_list_attr for a in op_def.input_arg
                            if a.type_attr or a.type_list_attr}
    # The raw op's other parameters are the OpDef's attrs that inputs do not imply, in order
    # (TensorFlow's API defs may rename them: Squeeze's squeeze_dims is `axis`).
    settable = [a.name for a in op_def.attr if a.name not in number_attrs and a.name not in type_attrs_of_inputs]
    attr_params = params[len(op_def.input_arg):len(op_def.input_arg) + len(settable)]
    renamed = dict(zip(settable, attr_params))
    kwargs.update({renamed.get(k, k): v for k, v in attrs.items() if k not in number_attrs})
    kwargs.update({renamed.get(k, k): tf.as_dtype(v) for k, v in type_attrs.items() if k not in type_attrs_of_inputs})
    out = getattr(tf.raw_ops, op)(**kwargs)
    if isinstance(out, (list, tuple)):
        return [np.asarray(o.numpy()) for o in out]
    return [np.asarray(out.numpy())]


def _compare(op, k, t):
    if len(k) != len(t):
        return "output counts differ: kiln %d, TensorFlow %d" % (len(k), len(t))
    for i, (a, b) in enumerate(zip(k, t)):
        if a.dtype != b.dtype:
            return "output %d: dtype kiln %s, TensorFlow %s" % (i, a.dtype, b.dtype)
        if a.shape != b.shape:
            return "output %d: shape kiln %s, TensorFlow %s" % (i, a.shape, b.shape)
        if a.dtype.kind == "c" and op not in _MOVES_BITS:  # each part as a float
            diff = _compare(op, [a.real, a.imag], [b.real, b.imag])
            if diff:
                return "output %d (complex): %s" % (i, diff)
        elif op in _MOVES_BITS:
            if a.tobytes() != b.tobytes():
                return "output %d: bytes differ\nkiln %r\ntf   %r" % (i, a, b)
        elif a.dtype.kind == "f":
            d = _ulp_distance(flush_denormals(a), b)
            if d.size and int(d.max()) > _ULPS.get(op, 0):
                return "output %d: %d ulps apart\nkiln %r\ntf   %r" % (i, int(d.max()), a, b)
        elif not np.array_equal(a, b):
            return "output %d: values differ\nkiln %r\ntf   %r" % (i, a, b)
    return ""


@pytest.mark.parametrize("op, attrs", _fuzzable_ops(), ids=lambda v: v if isinstance(v, str) else "")
def test_kiln_and_tensorflow_agree_on_random_cases(tf, op, attrs):
    findings, compared = [], 0
    for number in range(CASES_PER_OP):
        made = _make(op, attrs, number)
        if made is None:
            continue
        inputs, out_attrs, type_attrs = made
        if op in _KNOWN_DIFFERENCES and _KNOWN_DIFFERENCES[op](inputs):
            continue
        if op in _TENSORFLOW_ABORTS and _TENSORFLOW_ABORTS[op](inputs, out_attrs):
            continue
        try:
            k, k_err = _run_kiln(op, inputs, out_attrs, type_attrs), None
        except Exception as e:  # noqa: BLE001 (the outcome is what is compared)
            k, k_err = None, e
        try:
            t, t_err = _run_tf(tf, op, inputs, out_attrs, type_attrs), None
        except Exception as e:  # noqa: BLE001
            t, t_err = None, e
        compared += 1
        where = "%s case %d (attrs %r, inputs %s)" % (
            op, number, dict(out_attrs, **{a: np.dtype(v).name for a, v in type_attrs.items()}),
            {n: ([np.shape(x) for x in v] if isinstance(v, list) else np.shape(v)) for n, v in inputs.items()})
        if k_err is not None and t_err is None:
            findings.append("%s: kiln raised %s(%s), TensorFlow returned" % (where, type(k_err).__name__, k_err))
        elif k_err is None and t_err is not None:
            findings.append("%s: TensorFlow raised %s, kiln returned" % (where, type(t_err).__name__))
        elif k_err is None:
            diff = _compare(op, k, t)
            if diff:
                findings.append("%s: %s" % (where, diff))
    assert compared > 0
    assert not findings, "\n\n".join(findings[:5]) + ("\n... %d findings" % len(findings))
