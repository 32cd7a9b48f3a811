# The guide: eagerly every op runs (and fails); a graph runs only what its outputs need.
def unused_return_eager(x):
    tf.gather(x, [1])  # unused
    return x


try:
    print(unused_return_eager(tf.constant([0.0])))
except tf.errors.InvalidArgumentError as e:
    print(type(e).__name__)


@tf.function
def unused_return_graph(x):
    tf.gather(x, [1])  # unused
    return x


print(unused_return_graph(tf.constant([0.0])))
