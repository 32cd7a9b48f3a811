"""tensorflow.compiler.tf2xla.python.xla: the XLA ops libraries call directly, as compositions."""
from .._convert import convert_to_tensor


def dynamic_update_slice(operand, update, indices, name=None):
    """XLA's DynamicUpdateSlice: `update` written into `operand` from `indices` on, each start
    clamped so that the update fits (XLA's rule)."""
    del name
    import kiln as tf
    operand = convert_to_tensor(operand)
    update = convert_to_tensor(update, dtype=operand.dtype)
    starts = tf.cast(convert_to_tensor(indices), tf.int64)
    limit = tf.cast(tf.shape(operand), tf.int64) - tf.cast(tf.shape(update), tf.int64)
    starts = tf.clip_by_value(starts, tf.zeros_like(limit), limit)
    axes = [tf.range(tf.shape(update, out_type=tf.int64)[i]) + starts[i] for i in range(update.shape.rank)]
    grid = tf.stack(tf.meshgrid(*axes, indexing="ij"), axis=-1) if axes else tf.zeros([0], tf.int64)
    return tf.tensor_scatter_nd_update(operand, grid, update)

