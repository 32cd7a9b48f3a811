# The tf.function API page: variables are captured; methods trace per instance.
c = tf.Variable(0)


@tf.function
def f(x):
    c.assign_add(1)
    return x + tf.cast(c, tf.float32)


assert int(c) == 0
assert f(1.0) == 2.0
assert int(c) == 1
assert f(1.0) == 3.0
assert int(c) == 2
print(int(c), f.experimental_get_tracing_count())


class Dense(object):
    def __init__(self, seed):
        self.W = tf.Variable(tf.constant(np.random.default_rng(seed).standard_normal((10, 10)), tf.float32))
        self.b = tf.Variable(tf.zeros(10))

    @tf.function
    def compute(self, x):
        return tf.matmul(x, self.W) + self.b


d1 = Dense(1)
d2 = Dense(2)
x = tf.ones((10, 10))
assert not (d1.compute(x).numpy() == d2.compute(x).numpy()).all()
print(d1.compute(x).numpy()[0, :3].round(3), d1.compute.experimental_get_tracing_count())
