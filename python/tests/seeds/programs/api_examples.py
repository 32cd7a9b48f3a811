# The tf.function API page: f and g agree; captured tensors; control flow; input signatures.
def f(x, y):
    return tf.reduce_mean(tf.multiply(x ** 2, 3) + y)


g = tf.function(f)
x = tf.constant([[2.0, 3.0]])
y = tf.constant([[3.0, -2.0]])
assert f(x, y).numpy() == g(x, y).numpy()
print(g(x, y))


@tf.function
def h():
    return f(x, y)


assert (h().numpy() == f(x, y).numpy()).all()


@tf.function
def g(x):
    if tf.reduce_sum(x) > 0:
        return x * x
    else:
        return -x // 2


print(g(tf.constant([1, 2])), g(tf.constant([-3, -4])), g(tf.constant([1.5, -2.5])))


@tf.function
def f(x):
    return tf.add(x, 1.)


scalar = tf.constant(1.0)
vector = tf.constant([1.0, 1.0])
matrix = tf.constant([[3.0]])
print(f(scalar), f(vector), f(matrix))
print(f.experimental_get_tracing_count())


@tf.function(input_signature=[tf.TensorSpec(shape=None, dtype=tf.float32)])
def f(x):
    return tf.add(x, 1.)


print(f(scalar), f(vector), f(matrix))
print(f.experimental_get_tracing_count())
try:
    f(tf.constant([1, 2]))
except Exception as e:  # noqa: BLE001
    print("int32 argument:", type(e).__name__)
