"""kiln.config: run_functions_eagerly (tf.config.run_functions_eagerly)."""
from . import _core

__all__ = ["run_functions_eagerly", "functions_run_eagerly"]


def run_functions_eagerly(run_eagerly):
    """When on, every kiln.function runs its Python function directly: no tracing (for debugging)."""
    _core.run_functions_eagerly(bool(run_eagerly))


def functions_run_eagerly():
    return _core.functions_run_eagerly()
