"""kiln.config.threading (tf.config.threading): how many threads share one big kernel, and
how many independent steps of a function run side by side."""
import operator

from . import _core

__all__ = ["set_intra_op_parallelism_threads", "get_intra_op_parallelism_threads", "set_inter_op_parallelism_threads",
           "get_inter_op_parallelism_threads"]


def set_intra_op_parallelism_threads(num_threads):
    """At most num_threads threads split one kernel; 0 (or less) means one per CPU this process
    may run on. Unlike TensorFlow, kiln accepts a change at any time, not only before the
    first op."""
    _core.set_intra_op_parallelism_threads(operator.index(num_threads))


def get_intra_op_parallelism_threads():
    """The value last set; 0 when never set (the default)."""
    return _core.get_intra_op_parallelism_threads()


def set_inter_op_parallelism_threads(num_threads):
    """At most num_threads independent steps of a function run side by side; 1 runs one step at
    a time, each with the intra-op threads; 0 (or less) is the default, as many as the intra-op
    threads. kiln runs steps side by side only where a function's plan found independent
    branches of small steps. Unlike TensorFlow, kiln accepts a change at any time."""
    _core.set_inter_op_parallelism_threads(operator.index(num_threads))


def get_inter_op_parallelism_threads():
    """The value last set; 0 when never set (the default)."""
    return _core.get_inter_op_parallelism_threads()
