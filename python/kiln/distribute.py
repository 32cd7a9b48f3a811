"""kiln.distribute: data-parallel training over MPI with Horovod's TensorFlow API, so that a
Horovod script runs with `import kiln.distribute as hvd` (and `import kiln as tf`). Launch
with `mpirun -np N python script.py`. Also tf.distribute's MirroredStrategy over one process's
logical CPUs (kiln/_mirrored.py).

The collectives are kiln ops (CollectiveReduceV2, CollectiveGatherV2, KilnBroadcast): eagerly
they run at once, inside a kiln.function they are part of the traced step, in program order.
Every rank must call the same collectives in the same order with the same dtypes and shapes
(allgather: after the first dimension); a mismatch raises InvalidArgumentError on every rank.
A collective waits at most `timeout_seconds()` (60 s by default, KILN_COLLECTIVE_TIMEOUT) for
the other ranks, then prints which one stalled and aborts the job: a rank that died or raised
never leaves the others hanging."""
import sys

from . import _core
from ._convert import convert_to_tensor
from ._mirrored import (DistributedDataset, DistributedIterator, InputContext, MultiWorkerMirroredStrategy,  # noqa: F401
                        ParameterServerStrategy, Strategy, TPUStrategy)
from ._mirrored import (DistributedValues, MirroredStrategy, PerReplica, ReduceOp, ReplicaContext,  # noqa: F401
                        get_cross_replica_context, get_replica_context, get_strategy, has_strategy,
                        in_cross_replica_context)
from ._variable import MirroredVariable, Variable  # noqa: F401

Average = _core.ReduceOp.Average
Sum = _core.ReduceOp.Sum
Min = _core.ReduceOp.Min
Max = _core.ReduceOp.Max


class _Unsupported:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "kiln.distribute." + self.name


Adasum = _Unsupported("Adasum")  # Horovod's adaptive summation: not supported, passing it raises

# Horovod's default fusion buffer (HOROVOD_FUSION_THRESHOLD): 64 MiB.
FUSION_THRESHOLD_BYTES = 64 << 20

__all__ = ["init", "shutdown", "is_initialized", "mpi_built", "mpi_enabled", "rank", "size", "local_rank",
           "local_size", "allreduce", "grouped_allreduce", "allgather", "broadcast", "broadcast_variables",
           "DistributedGradientTape", "Average", "Sum", "Min", "Max", "timeout_seconds", "set_timeout_seconds",
           "collective_calls", "MirroredStrategy", "Strategy", "DistributedDataset", "DistributedIterator", "InputContext",
           "MultiWorkerMirroredStrategy", "TPUStrategy", "ParameterServerStrategy", "ReduceOp", "PerReplica", "DistributedValues", "ReplicaContext",
           "MirroredVariable", "get_strategy", "has_strategy", "get_replica_context", "get_cross_replica_context",
           "in_cross_replica_context"]


def init(comm=None):
    """Joins the process group (MPI's world). Idempotent. From then on an uncaught exception
    on any rank ends the whole job at once (after printing its traceback), instead of leaving
    the other ranks to wait for the collective timeout."""
    if comm is not None:
        raise NotImplementedError("kiln.distribute.init: only MPI's world communicator is supported")
    _core.dist_init()
    if not getattr(sys.excepthook, "_kiln_distribute", False):
        previous = sys.excepthook

        def end_the_job(kind, value, traceback):
            previous(kind, value, traceback)
            sys.stderr.flush()
            _core.dist_abort_job(1)
        end_the_job._kiln_distribute = True
        sys.excepthook = end_the_job


def shutdown():
    _core.dist_shutdown()


def is_initialized():
    return _core.dist_is_initialized()


def mpi_built():
    """Whether kiln was built with MPI."""
    return _core.dist_available()


def mpi_enabled():
    return _core.dist_available()


def rank():
    return _core.dist_rank()


def size():
    return _core.dist_size()


def local_rank():
    return _core.dist_local_rank()


def local_size():
    return _core.dist_local_size()


def timeout_seconds():
    return _core.dist_timeout_seconds()


def set_timeout_seconds(seconds):
    _core.dist_set_timeout_seconds(float(seconds))


def collective_calls():
    """MPI collective calls this process made (each collective: an agreement on dtypes and
    shapes, then the data)."""
    return _core.dist_collective_calls()


def _tensor(x):
    if isinstance(x, Variable):
        return x.read_value()
    return x if isinstance(x, _core.Tensor) else convert_to_tensor(x)


def _op(op, average):
    if average is not None:
        if op is not None:
            raise ValueError("allreduce: give op or the deprecated average, not both")
        return Average if average else Sum
    if op is None:
        return Average
    if op is Adasum:
        raise NotImplementedError("kiln.distribute: Adasum is not supported")
    if not isinstance(op, _core.ReduceOp):
        raise ValueError("op must be one of kiln.distribute.Average, Sum, Min, Max; got %r" % (op,))
    return op


def allreduce(tensor, average=None, device_dense="", device_sparse="", compression=None, op=None,
              prescale_factor=1.0, postscale_factor=1.0, name=None, process_set=None):
    """The reduction over the ranks of each rank's `tensor` (Average by default). The average
    of an integer tensor divides as TensorFlow's `/` does: float64."""
    del device_dense, device_sparse, name
    _unsupported(compression=compression, process_set=process_set)
    t = _tensor(tensor)
    if prescale_factor != 1.0:
        t = t * prescale_factor
    out = _core.dist_allreduce(t, _op(op, average))
    return out * postscale_factor if postscale_factor != 1.0 else out


def grouped_allreduce(tensors, average=None, device_dense="", device_sparse="", compression=None, op=None,
                      prescale_factor=1.0, postscale_factor=1.0, process_set=None):
    """allreduce of many tensors in few MPI calls (Horovod's tensor fusion): the tensors of
    one dtype travel in buffers of at most FUSION_THRESHOLD_BYTES."""
    del device_dense, device_sparse
    _unsupported(compression=compression, process_set=process_set)
    ts = [_tensor(t) for t in tensors]
    if prescale_factor != 1.0:
        ts = [t * prescale_factor for t in ts]
    out = _core.dist_grouped_allreduce(ts, _op(op, average), FUSION_THRESHOLD_BYTES)
    return [o * postscale_factor for o in out] if postscale_factor != 1.0 else list(out)


def allgather(tensor, name=None, process_set=None):
    """The ranks' tensors concatenated along the first dimension, in rank order."""
    del name
    _unsupported(process_set=process_set)
    return _core.dist_allgather(_tensor(tensor))


def broadcast(tensor, root_rank, name=None, process_set=None):
    """root_rank's tensor, on every rank."""
    del name
    _unsupported(process_set=process_set)
    return _core.dist_broadcast(_tensor(tensor), int(root_rank))


def broadcast_variables(variables, root_rank=0, process_set=None):
    """Assigns root_rank's value of each variable to it on every rank (the same initial weights)."""
    _unsupported(process_set=process_set)
    for v in variables:
        if not isinstance(v, Variable):
            raise TypeError("broadcast_variables takes kiln.Variable objects, got %r" % (type(v).__name__,))
        v.assign(broadcast(v, root_rank))


class DistributedGradientTape:
    """Wraps a GradientTape: gradient() averages each gradient over the ranks (one fused
    allreduce per dtype and buffer), as Horovod's DistributedGradientTape."""

    def __init__(self, gradtape, device_dense="", device_sparse="", compression=None, sparse_as_dense=False,
                 op=Average, gradient_predivide_factor=1.0, num_groups=0, groups=None, process_set=None):
        del device_dense, device_sparse, sparse_as_dense
        _unsupported(compression=compression, process_set=process_set)
        if num_groups or groups:
            raise NotImplementedError("DistributedGradientTape: num_groups and groups are not supported (kiln fuses "
                                      "by dtype and FUSION_THRESHOLD_BYTES)")
        self._tape = gradtape
        self._op = _op(op, None)
        self._predivide = float(gradient_predivide_factor)

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients="none"):
        grads = self._tape.gradient(target, sources, output_gradients=output_gradients,
                                    unconnected_gradients=unconnected_gradients)
        flat, rebuild = _flatten(grads)
        present = [i for i, g in enumerate(flat) if g is not None]
        if present:
            pre = 1.0 / self._predivide if self._predivide != 1.0 else 1.0
            post = self._predivide if self._predivide != 1.0 else 1.0
            reduced = grouped_allreduce([flat[i] for i in present], op=self._op, prescale_factor=pre,
                                        postscale_factor=post)
            for i, r in zip(present, reduced):
                flat[i] = r
        return rebuild(flat)

    def __getattr__(self, name):  # watch, reset, stop_recording, ...: the wrapped tape's
        return getattr(self._tape, name)


def _flatten(structure):
    if isinstance(structure, (list, tuple)):
        parts = [_flatten(s) for s in structure]
        flat = [x for p, _ in parts for x in p]
        sizes = [len(p) for p, _ in parts]

        def rebuild(values):
            out, at = [], 0
            for (_, rb), n in zip(parts, sizes):
                out.append(rb(values[at:at + n]))
                at += n
            return type(structure)(out)
        return flat, rebuild
    if isinstance(structure, dict):
        keys = sorted(structure)
        flat, rb = _flatten([structure[k] for k in keys])
        return flat, lambda values: dict(zip(keys, rb(values)))
    return [structure], lambda values: values[0]


def _unsupported(**options):
    for name, value in options.items():
        if value is not None:
            raise NotImplementedError("kiln.distribute: %s is not supported" % name)
