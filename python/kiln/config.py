"""kiln.config: run_functions_eagerly (tf.config.run_functions_eagerly), threading
(tf.config.threading), and run_limits (kiln's own: limits on calls, for servers)."""
from . import _core
from . import _threading as threading

__all__ = ["run_functions_eagerly", "functions_run_eagerly", "threading", "run_limits"]


def run_functions_eagerly(run_eagerly):
    """When on, every kiln.function runs its Python function directly: no tracing (for debugging)."""
    _core.run_functions_eagerly(bool(run_eagerly))


def functions_run_eagerly():
    return _core.functions_run_eagerly()


def run_limits(timeout=None, memory_limit_bytes=0):
    """Limits on the calls this thread makes inside a `with` block (kiln's own; TensorFlow has
    none). Past `timeout` seconds a call raises kiln.errors.DeadlineExceededError; a call whose
    tensors alive at once would pass `memory_limit_bytes` raises ResourceExhaustedError. Graphs
    check between steps and loops between iterations; kiln stays usable afterwards.

        with kiln.config.run_limits(timeout=0.5, memory_limit_bytes=1 << 28):
            y = served(x)
    """
    return _core.RunLimits(None if timeout is None else float(timeout), int(memory_limit_bytes))
