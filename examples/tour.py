"""A tour of kiln from Python: TensorFlow's eager API, `import kiln as tf`.

Run it with `make demo` (after the C++ tour) or `.venv/bin/python examples/tour.py`."""
import sys
import tempfile

import numpy as np

import kiln as tf


def section(title):
    print("\n== " + title)


section("Tensors: tf.constant infers dtypes as TensorFlow does")
x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
print(repr(x))
print(tf.constant(3), tf.constant([True, False]), tf.constant(2**40).dtype, sep="\n")
print("shape", x.shape, "dtype", x.dtype, "ndim", x.ndim, "len", len(x))

section("numpy is a friend: no copies either way")
a = np.arange(1_000_000, dtype=np.float32)
t = tf.constant(a)  # shares a's memory
back = t.numpy()  # a read-only view of the tensor's memory
print("constant shares the array:", np.shares_memory(a, t.numpy()), "| numpy() shares the tensor:",
      np.shares_memory(back, a), "| writable:", back.flags.writeable)
print("np.asarray(x) ->", np.asarray(x).tolist(), "| DLPack:", np.from_dlpack(x).sum())

section("Operators and Python numbers (they take the tensor's dtype)")
print(x + 1, x * 2.5, x @ tf.transpose(x), -x, x ** 2, sep="\n")
i = tf.constant([7, -7])
print("int // and % as Python's:", (i // 2).numpy(), (i % 3).numpy(), "| int / int:", (i / 2).dtype)
print("comparisons:", (x > 2).numpy().tolist(), "| logical:", (tf.constant(True) & (x[0, 0] < 2)).numpy())

section("Indexing through StridedSlice")
m = tf.reshape(tf.range(12), [3, 4])
print(m[1], m[:, 1:3], m[::-1, -1], m[..., tf.newaxis].shape, m[1, 2].numpy(), sep="\n")

section("Ops under TensorFlow's names")
print(tf.reduce_sum(x), tf.reduce_mean(x, axis=0), tf.reduce_max(x, axis=1, keepdims=True), sep="\n")
print(tf.concat([x, x], axis=0).shape, tf.stack([x, x]).shape, tf.gather(m, [2, 0]).numpy().tolist())
print(tf.nn.softmax(x), tf.math.log(x), tf.nn.relu(x - 2.5), sep="\n")
print(tf.where(x > 2, x, tf.zeros_like(x)), tf.cast(x, tf.int32), tf.eye(2), sep="\n")
logits = tf.constant([[2.0, 1.0, 0.1]])
print("cross entropy:", tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([0]), logits=logits))

section("Every op by name: tf.raw_ops, generated from kiln's op registry")
print(tf.raw_ops.Einsum(inputs=[x, x], equation="ij,kj->ik"))
print(tf.raw_ops.Split(axis=1, value=m, num_split=2)[1].numpy().tolist(), tf.pad(x, [[1, 0], [0, 1]]).shape,
      tf.image.resize(tf.ones([4, 4, 1]), [2, 2]).shape)
print(tf.nn.gelu(x))
print("uint8 images:", tf.cast(tf.constant(np.array([0, 128, 255], np.uint8)), tf.float32) / 255.0)

section("Random numbers: tf.random with global and op seeds")
tf.random.set_seed(42)
print(tf.random.uniform([3]), tf.random.normal([2, 2], seed=1), sep="\n")

section("tf.print, to stderr by default")
tf.print("tf.print:", x, output_stream=sys.stdout)

section("Errors: TensorFlow's classes, kiln's messages")
try:
    tf.constant([1, 2]) + tf.constant([1.0, 2.0])
except tf.errors.InvalidArgumentError as e:
    print("InvalidArgumentError:", e)
try:
    tf.constant([1, 2]) * 1.5
except TypeError as e:
    print("TypeError:", e)
try:
    tf.lite
except AttributeError as e:
    print("AttributeError:", e)

section("kiln.function: trace once per input signature, then run the graph")


@tf.function
def scaled_sum(x, scale):
    print("  tracing scaled_sum for", x.shape, "scale", scale)  # Python: runs while tracing only
    return tf.reduce_sum(x) * scale


scaled_sum(tf.constant([1.0, 2.0]), 2)
scaled_sum(tf.constant([3.0, 4.0]), 2)  # same signature: no trace
scaled_sum(tf.constant([1.0, 2.0, 3.0]), 2)  # a new shape: a new trace
scaled_sum(tf.constant([1.0, 2.0]), 3)  # a new Python value: a new trace
print("traces:", scaled_sum.experimental_get_tracing_count())
print("why each trace happened:", scaled_sum.experimental_trace_log())
print(scaled_sum.pretty_printed_concrete_signatures().splitlines()[:5])

section("AutoGraph: Python control flow on tensors becomes graph control flow")


@tf.function
def collatz_steps(n):
    steps = tf.constant(0)
    while n > 1:  # a while_loop in the graph
        if n % 2 == 0:  # a cond in the graph
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


print("collatz_steps(27) =", collatz_steps(tf.constant(27)).numpy())
print(tf.autograph.to_code(collatz_steps.python_function).splitlines()[0])
cf = collatz_steps.get_concrete_function(tf.TensorSpec([], tf.int32))
print("ops in its graph:", sorted({op.type for op in cf.graph.get_operations()}))

section("A training loop: GradientTape inside a function, variables updated in place")
rng = np.random.default_rng(0)
features = rng.standard_normal((64, 3)).astype(np.float32)
targets = features @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3
w = tf.Variable(tf.zeros([3, 1]), name="w")
b = tf.Variable(0.0, name="b")


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(x @ w + b - y))
    dw, db = tape.gradient(loss, [w, b])
    w.assign_sub(0.1 * dw)
    b.assign_sub(0.1 * db)
    return loss


for step in range(100):
    loss = train_step(features, targets)
print("loss %.6f, w %s, b %.3f, traces %d" % (float(loss), w.numpy().ravel().round(3), float(b),
                                              train_step.experimental_get_tracing_count()))

section("tf.data: an input pipeline run by C++ threads, iterated inside a function")
ds = (tf.data.Dataset.from_tensor_slices((features, targets)).shuffle(64, seed=1)
      .map(lambda x, y: (x * 1.0, y), num_parallel_calls=tf.data.AUTOTUNE).batch(16).prefetch(tf.data.AUTOTUNE))
print(ds)


@tf.function
def train_epoch():
    total = tf.constant(0.0)
    for x, y in ds:  # AutoGraph: one While loop over the dataset in the graph
        total += train_step(x, y)
    return total / 4


print("mean loss over one epoch, as one graph: %.6f" % float(train_epoch()))

# Dataset.save writes TensorFlow's saved-dataset directory: TensorFlow's Dataset.load reads it.
with tempfile.TemporaryDirectory() as saved:
    tf.data.Dataset.from_tensor_slices({"x": features[:4], "y": targets[:4]}).save(saved)
    loaded = tf.data.Dataset.load(saved)
    print(loaded.element_spec, "->", [float(e["y"][0]) for e in loaded])

section("Keras on kiln: tf.keras is Keras 3 over kiln (with the keras package installed)")

try:
    keras = tf.keras  # Keras's TensorFlow backend, answered by kiln: no TensorFlow needed
except ImportError as e:
    print("skipped:", e)
else:
    model = keras.Sequential([keras.layers.Input((3,)), keras.layers.Dense(8, activation="relu"),
                              keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    history = model.fit(features, targets, epochs=3, batch_size=4, verbose=0)
    # The train step (forward, gradients, Adam) is one kiln.function, traced once for all epochs.
    print("fit: 3 epochs, loss %.4f -> %.4f" % (history.history["loss"][0], history.history["loss"][-1]))
    print("predict:", [round(float(v), 3) for v in model.predict(features[:2], verbose=0).ravel()])
print("an unchanged TensorFlow script: python -m kiln.as_tensorflow train.py")

section("Limits for a server (kiln's own): a deadline stops a loop that never ends")


@tf.function
def spin(x):
    i = tf.constant(0)
    while i >= 0:  # never false
        i += 1
    return x + tf.cast(i, tf.float32)


with tf.config.run_limits(timeout=0.05):
    try:
        spin(tf.constant(1.0))
    except tf.errors.DeadlineExceededError as e:
        print(type(e).__name__ + ":", str(e).splitlines()[0])
print("Ctrl-C stops such a call too, with KeyboardInterrupt")
