"""tf.distribute.MirroredStrategy over the logical CPUs of one process (TensorFlow's virtual
devices, tf.config.set_logical_device_configuration), as the random-numbers and distributed
guides use it: `strategy.scope()`, `strategy.run(fn)` giving PerReplica values, `reduce`,
variables mirrored per replica, and tf.random.Generator streams per replica.

The replicas run one after another on the calling thread, each in its replica context (its
variables' local copies, its replica id). A `kiln.function` called in a replica context runs
its Python function directly (TensorFlow traces it once per replica). Cross-replica
communication inside a replica function (`ReplicaContext.all_reduce`, `merge_call`) needs the
replicas to run together and raises NotImplementedError."""
import contextlib
import enum
import threading

from . import _nest

_local = threading.local()  # .scopes: strategies entered (innermost last); .replica: ReplicaContext
# How many replica functions run now, on any thread: a kiln.function call looks for its
# thread's replica context only when some run (its hot path pays one list read otherwise).
running = [0]
_running_lock = threading.Lock()


class ReduceOp(enum.Enum):
    """How per-replica values combine (tf.distribute.ReduceOp)."""
    SUM = "SUM"
    MEAN = "MEAN"

    @staticmethod
    def from_variable_aggregation(aggregation):
        text = getattr(aggregation, "name", str(aggregation)).upper()
        if text in ("SUM", "MEAN"):
            return ReduceOp[text]
        raise ValueError("Could not convert from `tf.VariableAggregation` %s to`tf.distribute.ReduceOp` type"
                         % (aggregation,))


def current_replica():
    """The ReplicaContext this thread runs a replica function in, or None."""
    return getattr(_local, "replica", None)


def _scopes():
    s = getattr(_local, "scopes", None)
    if s is None:
        s = _local.scopes = []
    return s


def scope_strategy():
    """The MirroredStrategy whose scope this thread is in (innermost), or None."""
    s = _scopes()
    return s[-1] if s else None


class DistributedValues:
    """One value per replica (`.values`), printed as TensorFlow prints them."""
    _kind = "DistributedValues"

    def __init__(self, values):
        self._values = tuple(values)

    @property
    def values(self):
        return self._values

    def _text(self, show):
        return "%s:{\n%s\n}" % (self._kind, ",\n".join("  %d: %s" % (i, show(v)) for i, v in enumerate(self._values)))

    def __str__(self):
        return self._text(str)

    def __repr__(self):
        return self._text(repr)


class PerReplica(DistributedValues):
    _kind = "PerReplica"


class ReplicaContext:
    """A replica function's view of its strategy (tf.distribute.ReplicaContext)."""

    def __init__(self, strategy, replica_id):
        self._strategy = strategy
        self._replica_id = replica_id

    @property
    def strategy(self):
        return self._strategy

    @property
    def num_replicas_in_sync(self):
        return self._strategy.num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self):
        from ._convert import convert_to_tensor
        import numpy as np

        return convert_to_tensor(np.int32(self._replica_id))

    @property
    def devices(self):
        return (self._strategy.extended.worker_devices[self._replica_id],)

    def all_reduce(self, reduce_op, value, options=None):
        raise NotImplementedError("kiln's MirroredStrategy runs replicas one after another: ReplicaContext.all_reduce "
                                  "inside a replica function is not supported; return the values from "
                                  "strategy.run and combine them with strategy.reduce")

    def merge_call(self, merge_fn, args=(), kwargs=None):
        raise NotImplementedError("kiln's MirroredStrategy runs replicas one after another: merge_call inside a "
                                  "replica function is not supported")


class _DefaultReplicaContext(ReplicaContext):
    """Outside any strategy: one replica, id 0 (TensorFlow's default replica context)."""

    def __init__(self):
        super().__init__(_DEFAULT_STRATEGY, 0)

    @property
    def replica_id_in_sync_group(self):
        return 0  # a Python int here, as TensorFlow's

    def all_reduce(self, reduce_op, value, options=None):
        """One replica: every reduction of the value is the value (TensorFlow's default context)."""
        del reduce_op, options
        return value

    def merge_call(self, merge_fn, args=(), kwargs=None):
        return merge_fn(self._strategy, *args, **(kwargs or {}))


def _device_name(spec, logical):
    text = str(spec).strip()
    kind_index = text.split("device:")[-1] if "device:" in text else text.lstrip("/")
    parts = kind_index.split(":")
    if len(parts) != 2 or not parts[1].isdigit():
        raise ValueError("Device %r is not a valid device name (want 'CPU:0', '/device:CPU:1', ...)" % (spec,))
    kind, index = parts[0].upper(), int(parts[1])
    names = ["/device:%s:%d" % (kind, i) for i in range(logical)] if kind == "CPU" else []
    if "/device:%s:%d" % (kind, index) not in names:
        raise ValueError("Device %r does not exist: kiln has %d logical CPU devices (see "
                         "kiln.config.set_logical_device_configuration)" % (spec, logical))
    return "/job:localhost/replica:0/task:0/device:%s:%d" % (kind, index)


class Strategy:
    """The base of tf.distribute's strategies (for isinstance checks; kiln's strategies are
    MirroredStrategy and the default one)."""


class DistributedDataset:
    """A dataset split across replicas (tf.distribute.DistributedDataset). The default strategy
    hands out the dataset itself, as TensorFlow's does."""


class DistributedIterator:
    """An iterator over a DistributedDataset (tf.distribute.DistributedIterator)."""


class _Extended:
    def __init__(self, strategy, devices):
        self._strategy = strategy
        self.worker_devices = devices
        self.parameter_devices = devices

    def update(self, var, fn, args=(), kwargs=None, group=True):
        """fn(component, *args) on each replica's copy of `var`; the first result."""
        kwargs = kwargs or {}
        results = [fn(v, *args, **kwargs) for v in getattr(var, "_components", (var,))]
        return results[0]

    def _in_multi_worker_mode(self):
        return False

    def colocate_vars_with(self, colocate_with_variable):
        """Variables made in the block live where `colocate_with_variable` does: kiln's variables
        all live in host memory, so there is nothing to arrange."""
        return contextlib.nullcontext()

    def _use_merge_call(self):
        return False


class MirroredStrategy(Strategy):
    """Synchronous replicas on this process's logical devices (tf.distribute.MirroredStrategy)."""

    def __init__(self, devices=None, cross_device_ops=None):
        del cross_device_ops  # one process, one memory: nothing to choose
        from . import config

        logical = len(config.list_logical_devices("CPU"))
        if devices is None:
            devices = ["/device:CPU:0"]  # TensorFlow's choice without GPUs
        if isinstance(devices, str) or not len(devices):
            raise ValueError("`devices` must be a non-empty list of device names")
        names = tuple(_device_name(d, logical) for d in devices)
        if len(set(names)) != len(names):
            raise ValueError("No duplicates allowed in `devices` argument: %s" % (list(devices),))
        self.extended = _Extended(self, names)

    @property
    def num_replicas_in_sync(self):
        return len(self.extended.worker_devices)

    @contextlib.contextmanager
    def scope(self):
        """Variables created inside are mirrored (one copy per replica)."""
        if current_replica() is not None and current_replica().strategy is not self:
            raise RuntimeError("Mixing different tf.distribute.Strategy objects: cannot enter a strategy's scope in "
                               "another's replica context")
        _scopes().append(self)
        try:
            yield self
        finally:
            _scopes().pop()

    def run(self, fn, args=(), kwargs=None, options=None):
        """fn(*args, **kwargs) once per replica, each in its replica context; PerReplica results
        (a PerReplica argument gives each replica its own value)."""
        kwargs = kwargs or {}
        if current_replica() is not None:
            raise RuntimeError("strategy.run cannot be called inside a replica function")
        results = []
        with self.scope():
            for i in range(self.num_replicas_in_sync):
                local_args = _nest.map_structure(args, lambda v: _local_value(v, i))
                local_kwargs = _nest.map_structure(kwargs, lambda v: _local_value(v, i))
                previous, _local.replica = current_replica(), ReplicaContext(self, i)
                with _running_lock:
                    running[0] += 1
                try:
                    results.append(fn(*local_args, **local_kwargs))
                finally:
                    _local.replica = previous
                    with _running_lock:
                        running[0] -= 1
        if len(results) == 1 or all(r is None for r in results):
            return results[0]
        from . import nest

        return nest.map_structure(lambda *leaves: PerReplica(leaves), *results)

    def reduce(self, reduce_op, value, axis=None):
        """The replicas' values combined: summed or averaged (over `axis` too, when given)."""
        from . import _ops
        from ._convert import convert_to_tensor

        op = reduce_op if isinstance(reduce_op, ReduceOp) else ReduceOp[str(reduce_op).upper()]
        values = [convert_to_tensor(v) for v in self.experimental_local_results(value)]
        if not isinstance(value, DistributedValues):
            values = values * self.num_replicas_in_sync  # a value every replica has
        if axis is not None:
            total = _ops.add_n([_ops.reduce_sum(v, axis=axis) for v in values])
            if op is ReduceOp.SUM:
                return total
            count = sum(int(v.shape[axis]) for v in values)
            return total / _ops.cast(count, total.dtype)
        total = _ops.add_n(values) if len(values) > 1 else values[0]
        return total if op is ReduceOp.SUM else total / _ops.cast(len(values), total.dtype)

    def experimental_local_results(self, value):
        if isinstance(value, DistributedValues):
            return value.values
        components = getattr(value, "_components", None)
        return tuple(components) if components is not None else (value,)

    def gather(self, value, axis):
        from . import _ops

        return _ops.concat(list(self.experimental_local_results(value)), axis=axis)

    def experimental_distribute_dataset(self, dataset, options=None):
        raise NotImplementedError("MirroredStrategy.experimental_distribute_dataset needs tf.data, which kiln does "
                                  "not have yet")

    distribute_datasets_from_function = experimental_distribute_dataset


class _DefaultStrategy(Strategy):
    """What tf.distribute.get_strategy() gives outside any scope: one replica, no mirroring."""
    num_replicas_in_sync = 1

    def __init__(self):
        self.extended = _Extended(self, ("/job:localhost/replica:0/task:0/device:CPU:0",))

    def experimental_distribute_dataset(self, dataset, options=None):
        return dataset

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        return dataset_fn(InputContext())

    @contextlib.contextmanager
    def scope(self):
        yield self

    def run(self, fn, args=(), kwargs=None, options=None):
        return fn(*args, **(kwargs or {}))

    def reduce(self, reduce_op, value, axis=None):
        from . import _ops

        if axis is None:
            return value
        op = reduce_op if isinstance(reduce_op, ReduceOp) else ReduceOp[str(reduce_op).upper()]
        return _ops.reduce_sum(value, axis=axis) if op is ReduceOp.SUM else _ops.reduce_mean(value, axis=axis)

    def experimental_local_results(self, value):
        return (value,)


_DEFAULT_STRATEGY = _DefaultStrategy()


class InputContext:
    """What a dataset function learns about its input pipeline (tf.distribute.InputContext)."""

    def __init__(self, num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=1):
        self.num_input_pipelines = num_input_pipelines
        self.input_pipeline_id = input_pipeline_id
        self.num_replicas_in_sync = num_replicas_in_sync

    def get_per_replica_batch_size(self, global_batch_size):
        if global_batch_size % self.num_replicas_in_sync:
            raise ValueError("The `global_batch_size` %r is not divisible by `num_replicas_in_sync` %r "
                             % (global_batch_size, self.num_replicas_in_sync))
        return global_batch_size // self.num_replicas_in_sync


def _unavailable_strategy(name, why):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("kiln does not implement tf.distribute.%s: %s" % (name, why))
    return type(name, (Strategy,), {"__init__": __init__, "__doc__": "Not in kiln: " + why})


# Names programs test against (isinstance); kiln's multi-process training is kiln.distribute over MPI.
MultiWorkerMirroredStrategy = _unavailable_strategy(
    "MultiWorkerMirroredStrategy", "use kiln.distribute's MPI data parallelism (mpirun) instead")
TPUStrategy = _unavailable_strategy("TPUStrategy", "kiln runs on CPUs")
ParameterServerStrategy = _unavailable_strategy("ParameterServerStrategy", "kiln has no parameter servers")


def _local_value(v, i):
    return v.values[i] if isinstance(v, DistributedValues) else v


def get_strategy():
    replica = current_replica()
    if replica is not None:
        return replica.strategy
    return scope_strategy() or _DEFAULT_STRATEGY


def has_strategy():
    return get_strategy() is not _DEFAULT_STRATEGY


def in_cross_replica_context():
    return current_replica() is None and scope_strategy() is not None


def get_replica_context():
    """The replica context (a replica function's, or the default one outside any strategy);
    None in a strategy's scope outside `run` (its cross-replica context)."""
    replica = current_replica()
    if replica is not None:
        return replica
    return None if scope_strategy() is not None else _DefaultReplicaContext()


def get_cross_replica_context():
    return scope_strategy() if current_replica() is None else None


def replica_index(strategy):
    """Which copy of a variable mirrored by `strategy` this thread uses: the replica's in its
    replica context, else the first."""
    replica = current_replica()
    return replica._replica_id if replica is not None and replica.strategy is strategy else 0
