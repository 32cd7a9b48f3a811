# A custom training loop: GradientTape inside a Function, variables updated in place.
import numpy as np
rng = np.random.default_rng(0)
X = rng.standard_normal((64, 3)).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
w = tf.Variable(tf.zeros([3, 1]))
b = tf.Variable(0.0)

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    dw, db = tape.gradient(loss, [w, b])
    w.assign_sub(0.1 * dw)
    b.assign_sub(0.1 * db)
    return loss

for step in range(100):
    loss = train_step(X, Y)
print("loss %.5f" % float(loss), np.round(w.numpy().ravel(), 3), round(float(b), 3))
print(train_step.experimental_get_tracing_count())
x = tf.constant(3.0)
with tf.GradientTape() as t:
    t.watch(x)
    y = x * x
print(t.gradient(y, x))
with tf.GradientTape(persistent=True) as t:
    t.watch(x)
    y = x * x
    z = y * y
print(t.gradient(z, x), t.gradient(y, x), t.gradient(y, [x, {"a": x}]))
v = tf.Variable(2.0)
u = tf.Variable(5.0)
with tf.GradientTape() as t:
    y = v * v
print(t.gradient(y, [v, u]))
