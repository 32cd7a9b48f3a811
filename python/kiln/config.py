"""kiln.config: run_functions_eagerly (tf.config.run_functions_eagerly) and threading
(tf.config.threading)."""
from . import _core
from . import _threading as threading

__all__ = ["run_functions_eagerly", "functions_run_eagerly", "threading"]


def run_functions_eagerly(run_eagerly):
    """When on, every kiln.function runs its Python function directly: no tracing (for debugging)."""
    _core.run_functions_eagerly(bool(run_eagerly))


def functions_run_eagerly():
    return _core.functions_run_eagerly()
