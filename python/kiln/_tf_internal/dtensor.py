"""tensorflow.experimental.dtensor: kiln has no DTensor; the module imports and every use raises."""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedError("kiln does not implement DTensor (tf.experimental.dtensor.%s)" % name)
