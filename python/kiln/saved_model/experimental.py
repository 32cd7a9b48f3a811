"""kiln.saved_model.experimental (tf.saved_model.experimental): the base class of resources a
SavedModel tracks besides variables.

kiln has no such resources of its own yet (its lookup tables are not saved); the class exists so
that libraries which look for them (Keras's export walks a model for TrackableResources to save
its lookup tables) find none, and so that a subclass says clearly what kiln cannot save."""
from .._tracking import Trackable

__all__ = ["TrackableResource"]


class TrackableResource(Trackable):
    """A resource that a SavedModel would recreate on load: a subclass implements
    _create_resource (returns the resource's handle tensor) and may implement _initialize."""

    def __init__(self, device=""):
        self._resource_device = device
        self._resource_handle_value = None

    def _create_resource(self):
        raise NotImplementedError("%s must implement _create_resource()" % type(self).__name__)

    def _initialize(self):
        pass

    @property
    def resource_handle(self):
        if self._resource_handle_value is None:
            self._resource_handle_value = self._create_resource()
        return self._resource_handle_value
