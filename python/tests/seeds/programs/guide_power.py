# The guide: a Python loop over a Python int unrolls; one trace per distinct int.
x = tf.constant(np.arange(100).reshape(10, 10) % 3 - 1, dtype=tf.int32)


def power(x, y):
    result = tf.eye(10, dtype=tf.dtypes.int32)
    for _ in range(y):
        result = tf.matmul(x, result)
    return result


power_as_graph = tf.function(power)
eager = power(x, 5)
graph = power_as_graph(x, 5)
print((eager.numpy() == graph.numpy()).all(), graph.numpy()[0])
power_as_graph(x, 5)
power_as_graph(x, 6)
print(power_as_graph.experimental_get_tracing_count())
