# The guide: one graph per input signature; matching signatures reuse them.
@tf.function
def my_relu(x):
    return tf.maximum(0., x)


print(my_relu(tf.constant(5.5)))
print(my_relu([1, -1]))
print(my_relu(tf.constant([3., -3.])))
print(my_relu(tf.constant(-2.5)))
print(my_relu(tf.constant([-1., 1.])))
print(my_relu.experimental_get_tracing_count())
print(my_relu.pretty_printed_concrete_signatures())
