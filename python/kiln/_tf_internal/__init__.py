"""The few TensorFlow-internal modules that libraries written for TensorFlow import (Keras above
all), provided by kiln under their TensorFlow names once kiln.install_as_tensorflow() has run.
Each module here holds only the names those libraries use; the table maps TensorFlow's module
name to the kiln module."""

MODULES = {
    "tensorflow.python.trackable.data_structures": "kiln._tf_internal.data_structures",
    "tensorflow.python.eager.context": "kiln._tf_internal.eager_context",
    "tensorflow.compiler.tf2xla.python.xla": "kiln._tf_internal.xla",
    "tensorflow.python.ops.math_ops": "kiln._tf_internal.math_ops",
    "tensorflow.python.ops.linalg.sparse": "kiln._tf_internal.linalg_sparse",
    "tensorflow.python.framework.config": "kiln._tf_internal.framework_config",
    "tensorflow.python.framework.tensor_util": "kiln._tf_internal.tensor_util",
    "tensorflow.experimental.dtensor": "kiln._tf_internal.dtensor",
}
