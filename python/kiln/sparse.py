"""kiln.sparse (tf.sparse): SparseTensor and its functions (python/kiln/_sparse.py)."""
from ._sparse import (SparseTensor, add, concat, eye, from_dense, map_values, matmul, maximum,  # noqa: F401
                      minimum, reduce_max, reduce_sum, reorder, retain, sparse_dense_matmul, to_dense, transpose)

__all__ = ["SparseTensor", "add", "concat", "eye", "from_dense", "map_values", "matmul", "maximum", "minimum", "reduce_max", "reduce_sum", "reorder", "retain",
           "sparse_dense_matmul", "to_dense", "transpose"]
