"""tensorflow.python.trackable.data_structures: the list and dict wrappers TensorFlow puts around
containers assigned to tracked attributes. Keras registers them as tree nodes; in kiln they are a
list and a dict that are also Trackable."""
from .._tracking import Trackable


class ListWrapper(list, Trackable):
    """A list that is tracked as one object (tf's ListWrapper)."""

    def _trackable_children(self, save_type="checkpoint", **kwargs):
        return {str(i): v for i, v in enumerate(self) if isinstance(v, Trackable)}


class _DictWrapper(dict, Trackable):
    """A dict that is tracked as one object (tf's _DictWrapper)."""

    def _trackable_children(self, save_type="checkpoint", **kwargs):
        return {str(k): v for k, v in self.items() if isinstance(v, Trackable)}
