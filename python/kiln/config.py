"""kiln.config: run_functions_eagerly (tf.config.run_functions_eagerly), threading
(tf.config.threading), and run_limits (kiln's own: limits on calls, for servers)."""
import collections

from . import _core
from . import _threading as threading

__all__ = ["run_functions_eagerly", "functions_run_eagerly", "threading", "run_limits", "list_physical_devices",
           "list_logical_devices", "get_visible_devices", "set_visible_devices", "experimental",
           "PhysicalDevice", "LogicalDevice"]

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])
_CPU = PhysicalDevice(name="/physical_device:CPU:0", device_type="CPU")


def list_physical_devices(device_type=None):
    """kiln's devices: the CPU (one device, as TensorFlow lists a machine's CPUs)."""
    return [_CPU] if device_type in (None, "CPU") else []


def list_logical_devices(device_type=None):
    return [LogicalDevice(name="/device:CPU:0", device_type="CPU")] if device_type in (None, "CPU") else []


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
