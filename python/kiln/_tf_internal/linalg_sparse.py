"""tensorflow.python.ops.linalg.sparse: TensorFlow's CSR sparse-matrix ops, which kiln does not have.
The module imports (Keras imports it at start-up); each op raises naming what is missing."""
import types


def _missing(name):
    def op(*args, **kwargs):
        raise NotImplementedError("kiln does not implement TensorFlow's CSR sparse matrices (sparse_csr_matrix_ops.%s)"
                                  % name)
    return op


sparse_csr_matrix_ops = types.ModuleType("tensorflow.python.ops.linalg.sparse.sparse_csr_matrix_ops")
sparse_csr_matrix_ops.__getattr__ = lambda name: _missing(name) if not name.startswith("__") else None
