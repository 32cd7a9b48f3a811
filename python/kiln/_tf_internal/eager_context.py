"""tensorflow.python.eager.context: the pieces of TensorFlow's eager context libraries call."""
from .._environment import executing_eagerly


class _Context:
    """kiln's process context: kernels are not cached per shape, and execution is synchronous."""

    def clear_kernel_cache(self):
        pass

    def executing_eagerly(self):
        return executing_eagerly()


_CONTEXT = _Context()


def context():
    return _CONTEXT


def async_wait():
    """Waits for pending eager ops: kiln runs ops synchronously, so there are none."""


def async_clear_error():
    pass


def _reset_context():
    """Forgets the process's device configuration (TensorFlow's test helper: logical devices can
    then be configured again)."""
    from .. import config
    config._logical_cpus[0] = 1
