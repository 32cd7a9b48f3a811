"""kiln.config: run_functions_eagerly (tf.config.run_functions_eagerly), threading
(tf.config.threading), and run_limits (kiln's own: limits on calls, for servers)."""
import collections

from . import _core
from . import _threading as threading

__all__ = ["run_functions_eagerly", "functions_run_eagerly", "threading", "run_limits", "list_physical_devices",
           "list_logical_devices", "get_visible_devices", "set_visible_devices", "experimental",
           "PhysicalDevice", "LogicalDevice", "LogicalDeviceConfiguration",
           "set_logical_device_configuration", "get_logical_device_configuration"]

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])
_CPU = PhysicalDevice(name="/physical_device:CPU:0", device_type="CPU")


def list_physical_devices(device_type=None):
    """kiln's devices: the CPU (one device, as TensorFlow lists a machine's CPUs)."""
    return [_CPU] if device_type in (None, "CPU") else []


LogicalDeviceConfiguration = collections.namedtuple("LogicalDeviceConfiguration",
                                                    ["memory_limit", "experimental_priority",
                                                     "experimental_device_ordinal"], defaults=[None, None, 0])
_logical_cpus = [1]  # how many logical devices the CPU is split into (virtual devices)


def list_logical_devices(device_type=None):
    if device_type not in (None, "CPU"):
        return []
    return [LogicalDevice(name="/device:CPU:%d" % i, device_type="CPU") for i in range(_logical_cpus[0])]


def set_logical_device_configuration(device, logical_devices):
    """Splits the CPU into len(logical_devices) logical devices (a MirroredStrategy's replicas
    on one machine). They share kiln's threads: the split names devices, it adds no cores."""
    if getattr(device, "device_type", None) != "CPU":
        raise ValueError("kiln has only the CPU: cannot configure %r" % (device,))
    if logical_devices is None:
        _logical_cpus[0] = 1
        return
    if not isinstance(logical_devices, (list, tuple)) or not logical_devices:
        raise ValueError("logical_devices must be a non-empty list of LogicalDeviceConfiguration")
    for c in logical_devices:
        if not isinstance(c, LogicalDeviceConfiguration):
            raise TypeError("logical_devices must hold LogicalDeviceConfiguration objects, got %r" % (c,))
    _logical_cpus[0] = len(logical_devices)


def get_logical_device_configuration(device):
    if _logical_cpus[0] == 1:
        return None
    return [LogicalDeviceConfiguration() for _ in range(_logical_cpus[0])]


def get_visible_devices(device_type=None):
    return list_physical_devices(device_type)


def set_visible_devices(devices, device_type=None):
    """Accepted: the CPU must stay visible, and other devices kiln does not have."""
    devices = devices if isinstance(devices, (list, tuple)) else [devices]
    if device_type in (None, "CPU") and _CPU not in devices:
        raise ValueError("kiln runs on the CPU: it cannot be hidden")


class experimental:  # noqa: N801 (tf.config.experimental, a namespace)
    """Memory settings for GPUs, accepted and ignored: kiln has only the CPU."""

    @staticmethod
    def set_memory_growth(device, enable):
        pass

    @staticmethod
    def get_memory_growth(device):
        return False

    @staticmethod
    def list_physical_devices(device_type=None):
        return list_physical_devices(device_type)

    VirtualDeviceConfiguration = LogicalDeviceConfiguration

    @staticmethod
    def set_virtual_device_configuration(device, logical_devices):
        set_logical_device_configuration(device, logical_devices)

    @staticmethod
    def get_virtual_device_configuration(device):
        return get_logical_device_configuration(device)

    @staticmethod
    def enable_op_determinism():
        """kiln's ops are deterministic already."""

    @staticmethod
    def get_device_details(device):
        return {}


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
