"""kiln.keras: Keras 3 (the `keras` package, TensorFlow's tf.keras) running on kiln.

Keras's TensorFlow backend is written against `import tensorflow`; kiln answers that import
(kiln.install_as_tensorflow's hook, reprs left as they are) and Keras runs unmodified. This needs
the keras package (`pip install kiln[keras]`), a process where the real TensorFlow is not
imported, and Keras on its TensorFlow backend (KERAS_BACKEND unset or "tensorflow")."""
import os
import sys


def load():
    """Keras's tf.keras namespace (keras._tf_keras.keras), imported over kiln."""
    from ._tensorflow_alias import install
    try:
        install(reprs_say_tf=False)
    except RuntimeError as e:
        raise ImportError("kiln.keras: Keras would run on the real TensorFlow, which this process has imported. "
                          "Use kiln.keras in a process that does not import tensorflow. (%s)" % e) from None
    backend = os.environ.get("KERAS_BACKEND")
    if "keras" not in sys.modules:
        os.environ["KERAS_BACKEND"] = "tensorflow"  # Keras reads it once, at import
    try:
        import keras
    except ModuleNotFoundError as e:
        if e.name != "keras":
            raise
        raise ImportError("kiln.keras needs the keras package: pip install 'kiln[keras]'") from None
    finally:
        if backend is None:
            os.environ.pop("KERAS_BACKEND", None)
        else:
            os.environ["KERAS_BACKEND"] = backend
    if keras.backend.backend() != "tensorflow":
        raise ImportError("kiln.keras: Keras is already running on its %r backend in this process; kiln needs "
                          "KERAS_BACKEND=tensorflow (set it before anything imports keras)" % keras.backend.backend())
    from keras._tf_keras import keras as tf_keras
    return tf_keras
