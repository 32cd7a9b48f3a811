"""DLPack exchange (tf.experimental.dlpack): no copies either way."""
from .. import _core


def from_dlpack(dlcapsule):
    """A tensor over the memory of a DLPack producer (an object with __dlpack__, or a capsule)."""
    return _core.Tensor._from_array(dlcapsule)


def to_dlpack(tf_tensor):
    """A DLPack capsule over the tensor's memory (the tensor stays alive while it is used)."""
    return tf_tensor.__dlpack__()
