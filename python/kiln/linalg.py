"""kiln.linalg: tf.linalg's names kiln has. The decompositions are TensorFlow's ops with
Eigen's algorithms (MatrixInverse, MatrixDeterminant, LogMatrixDeterminant, Svd, Qr,
SelfAdjointEigV2, MatrixSolve, Cholesky,
MatrixTriangularSolve, MatrixBandPart); the rest compose them as TensorFlow's Python does."""
from . import raw_ops
from ._convert import convert_to_tensor
from ._ops import eye, matmul, transpose  # noqa: F401
from ._ops_breadth import einsum  # noqa: F401
from ._clip import global_norm  # noqa: F401
from ._array_helpers import logdet  # noqa: F401
from ._ops_composite import l2_normalize  # noqa: F401

__all__ = ["cross", "logdet", "matmul", "matvec", "inv", "det", "slogdet", "solve", "cholesky", "cholesky_solve", "triangular_solve",
           "band_part", "trace", "diag_part", "adjoint", "matrix_transpose", "norm", "eye", "einsum", "global_norm",
           "l2_normalize", "svd", "qr", "eigh", "eigvalsh", "diag"]


def inv(input, adjoint=False, name=None):  # noqa: A002
    return raw_ops.MatrixInverse(input=convert_to_tensor(input), adjoint=adjoint)


def det(input, name=None):  # noqa: A002
    return raw_ops.MatrixDeterminant(input=convert_to_tensor(input))


def solve(matrix, rhs, adjoint=False, name=None):
    return raw_ops.MatrixSolve(matrix=convert_to_tensor(matrix), rhs=convert_to_tensor(rhs), adjoint=adjoint)


def cholesky(input, name=None):  # noqa: A002
    return raw_ops.Cholesky(input=convert_to_tensor(input))


def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    return raw_ops.MatrixTriangularSolve(matrix=convert_to_tensor(matrix), rhs=convert_to_tensor(rhs), lower=lower,
                                         adjoint=adjoint)


def cholesky_solve(chol, rhs, name=None):
    """Solves A X = rhs given chol = cholesky(A)."""
    y = triangular_solve(chol, rhs, lower=True, adjoint=False)
    return triangular_solve(chol, y, lower=True, adjoint=True)


def band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    return raw_ops.MatrixBandPart(input=convert_to_tensor(input), num_lower=num_lower, num_upper=num_upper)


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    a = convert_to_tensor(a)
    rank = a.shape.rank
    if rank is None or rank < 2:
        raise ValueError("Argument `a` should be a (batch) matrix with rank >= 2.  Received `a` = %s with shape: %s"
                         % (a, a.shape))
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    return transpose(a, perm, conjugate=conjugate)


def adjoint(matrix, name=None):
    return matrix_transpose(matrix, conjugate=True)


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False, name=None):
    from ._ops import expand_dims, squeeze
    product = matmul(a, expand_dims(convert_to_tensor(b), -1), transpose_a=transpose_a, adjoint_a=adjoint_a)
    return squeeze(product, -1)


def diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT"):  # noqa: A002
    """The main diagonal of each matrix (k=0 only): [..., min(rows, cols)]."""
    from ._ops import reduce_sum
    if k != 0:
        raise NotImplementedError("kiln.linalg.diag_part with k != 0 is not implemented")
    x = convert_to_tensor(input)
    if x.shape.rank is None or x.shape.rank < 2:
        raise ValueError("input must be at least 2-dim, received shape: %s" % x.shape)
    n = min(x.shape[-1], x.shape[-2])
    return reduce_sum(band_part(x[..., :n, :n], 0, 0), -1)


def trace(x, name=None):
    from ._ops import reduce_sum
    return reduce_sum(diag_part(x), -1)


def slogdet(input, name=None):  # noqa: A002
    """(sign, log|det|) of each matrix, from its LU factors (no overflow through det)."""
    sign, log_abs = raw_ops.LogMatrixDeterminant(input=convert_to_tensor(input))
    return sign, log_abs


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):  # noqa: A002
    """tf.norm for the common orders: euclidean/2/fro, 1, inf over a vector axis or all elements."""
    from . import math
    from ._ops import reduce_max, reduce_sum, sqrt
    x = convert_to_tensor(tensor)
    keepdims = bool(keepdims)
    if isinstance(axis, (list, tuple)) and len(axis) == 2 and ord not in ("euclidean", "fro", 2):
        raise NotImplementedError("kiln.linalg.norm of matrices supports ord='euclidean' or 'fro'")
    magnitude = math.abs(x)
    if ord in ("euclidean", "fro", 2) or (ord == 2.0):
        return sqrt(reduce_sum(x * math.conj(x) if x.dtype.is_complex else x * x, axis, keepdims=keepdims))
    if ord == 1:
        return reduce_sum(magnitude, axis, keepdims=keepdims)
    if ord == float("inf"):
        return reduce_max(magnitude, axis, keepdims=keepdims)
    raise ValueError("'ord' must be a supported vector norm, got %s" % (ord,))


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """(s, u, v) with tensor = u @ diag(s) @ adjoint(v); s alone when compute_uv is False."""
    s, u, v = raw_ops.Svd(input=convert_to_tensor(tensor), compute_uv=compute_uv, full_matrices=full_matrices)
    return (s, u, v) if compute_uv else s


def qr(input, full_matrices=False, name=None):  # noqa: A002
    """(q, r): q with orthonormal columns, r upper triangular."""
    q, r = raw_ops.Qr(input=convert_to_tensor(input), full_matrices=full_matrices)
    return q, r


def eigh(tensor, name=None):
    """(eigenvalues ascending, eigenvectors as columns) of self-adjoint matrices (lower triangle read)."""
    e, v = raw_ops.SelfAdjointEigV2(input=convert_to_tensor(tensor), compute_v=True)
    return e, v


def eigvalsh(tensor, name=None):
    e, _ = raw_ops.SelfAdjointEigV2(input=convert_to_tensor(tensor), compute_v=False)
    return e


def diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0, align="RIGHT_LEFT"):
    """Square matrices with `diagonal` on the main diagonal (k=0 only): [..., n] -> [..., n, n]."""
    from ._ops import expand_dims, eye
    if k != 0 or num_rows != -1 or num_cols != -1:
        raise NotImplementedError("kiln.linalg.diag supports k=0 with the default num_rows/num_cols only")
    d = convert_to_tensor(diagonal)
    if d.shape.rank is None or d.shape.rank < 1:
        raise ValueError("diagonal must be at least 1-dim, received shape: %s" % d.shape)
    n = d.shape[-1]
    return expand_dims(d, -1) * eye(n, dtype=d.dtype)


_CROSS_TYPES = ("float32", "float64", "int32", "uint8", "int16", "int8", "int64", "bfloat16", "uint16", "float16",
                "uint32", "uint64")


def cross(a, b, name=None):
    """tf.linalg.cross: the cross product of the 3-element vectors along the last axis of `a` and
    `b` (same dtype and shape, no broadcasting), computed in their dtype as TensorFlow's Cross
    (integers wrap)."""
    del name
    from . import errors
    from ._ops import stack
    from ._ops_breadth import unstack

    a = convert_to_tensor(a)
    b = convert_to_tensor(b, dtype=a.dtype)
    if a.dtype.name not in _CROSS_TYPES:
        names = ", ".join({"float32": "float", "float64": "double", "float16": "half"}.get(t, t) for t in _CROSS_TYPES)
        raise errors.InvalidArgumentError(None, None, "Value for attr 'T' of %s is not in the list of allowed values: "
                                                      "%s [Op:Cross]" % (a.dtype.name, names))
    if a.shape.as_list() != b.shape.as_list():
        raise errors.InvalidArgumentError(None, None, "Both inputs must be of same shape: [%s] vs. [%s] [Op:Cross]" % (
            ",".join(str(d) for d in a.shape.as_list()), ",".join(str(d) for d in b.shape.as_list())))
    if a.shape.rank == 0 or a.shape[-1] != 3:
        raise errors.FailedPreconditionError(None, None,
                                             "Cross-products are only defined for 3-element vectors. [Op:Cross]")
    a0, a1, a2 = unstack(a, axis=-1)
    b0, b1, b2 = unstack(b, axis=-1)
    return stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
