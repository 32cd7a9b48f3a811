# tf.Module: variables found through attributes, lists and dicts; a Function as a method.
class Dense(tf.Module):
    def __init__(self, n_in, n_out, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(tf.ones([n_in, n_out]), name="w")
        self.b = tf.Variable(tf.zeros([n_out]), name="b")

    @tf.function
    def __call__(self, x):
        return tf.nn.relu(tf.matmul(x, self.w) + self.b)


class MLP(tf.Module):
    def __init__(self):
        super().__init__()
        self.layers = [Dense(2, 3), Dense(3, 1)]
        self.extra = {"scale": tf.Variable(2.0, trainable=False, name="scale")}

    @tf.function
    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x * self.extra["scale"]


m = MLP()
print(m.name, [v.name for v in m.variables], len(m.trainable_variables), len(m.submodules))
print(m(tf.constant([[1.0, 2.0]])))
