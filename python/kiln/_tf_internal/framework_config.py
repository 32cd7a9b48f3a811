"""tensorflow.python.framework.config: op determinism switches. kiln's kernels are deterministic
(reductions run in a fixed order for a given thread count), so both switches only record the
setting that is_op_determinism_enabled reports."""
_enabled = False


def enable_op_determinism():
    global _enabled
    _enabled = True


def disable_op_determinism():
    global _enabled
    _enabled = False


def is_op_determinism_enabled():
    return _enabled
