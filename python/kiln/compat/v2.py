"""kiln.compat.v2 (tf.compat.v2): TensorFlow 2's API, which is kiln's."""


def __getattr__(name):
    import kiln
    return getattr(kiln, name)
