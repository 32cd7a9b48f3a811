"""kiln.experimental."""
from . import dlpack


def __getattr__(name):
    if name == "Optional":  # kiln.data imports kiln.experimental: found late to avoid the cycle
        from ..data._dataset import Optional
        return Optional
    raise AttributeError("module 'kiln.experimental' has no attribute '%s'" % name)

__all__ = ["Optional", "dlpack", "ExtensionType", "BatchableExtensionType"]

_EXTENSION_TYPE_MESSAGE = (
    "%s: tf.experimental.ExtensionType is not implemented in kiln (user-defined composite tensors need "
    "composite arguments and results in kiln.function, which kiln does not have yet). Use a namedtuple, a "
    "dict or a dataclass of tensors instead.")


class ExtensionType:
    """tf.experimental.ExtensionType: not implemented. Defining a subclass raises
    NotImplementedError saying so, rather than making a class that half works."""

    def __init_subclass__(cls, **kwargs):
        if cls.__module__ == __name__:  # kiln's own BatchableExtensionType
            return
        raise NotImplementedError(_EXTENSION_TYPE_MESSAGE % cls.__name__)


class BatchableExtensionType(ExtensionType):
    """tf.experimental.BatchableExtensionType: not implemented (see ExtensionType)."""
