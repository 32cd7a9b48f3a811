"""Seeds for the loader's fuzz target from SavedModels TensorFlow writes now: a tf.Module MLP,
cond + while_loop with variables, FusedBatchNormV3 + Relu6, and a Keras MLP export. Each seed
is the selector byte 5 and the model's three files (saved_model.pb, variables.index,
variables.data-00000-of-00001), each behind a 4-byte little-endian length
(fuzz/load_fuzzer.cc). Usage: python fuzz/make_tf_seeds.py CORPUS_DIR"""
import os
import struct
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
WHOLE_MODEL = 5
FILES = ["saved_model.pb", "variables/variables.index", "variables/variables.data-00000-of-00001"]


def models(tf, np):
    rng = np.random.default_rng(5)

    class Mlp(tf.Module):
        def __init__(self):
            super().__init__()
            self.w1 = tf.Variable(rng.standard_normal((4, 8)).astype(np.float32))
            self.w2 = tf.Variable(rng.standard_normal((8, 2)).astype(np.float32))

        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x")])
        def __call__(self, x):
            return tf.nn.softmax(tf.matmul(tf.nn.relu(tf.matmul(x, self.w1)), self.w2))

    class Loops(tf.Module):
        def __init__(self):
            super().__init__()
            self.total = tf.Variable(0.0)

        @tf.function(input_signature=[tf.TensorSpec([], tf.int32, name="n"), tf.TensorSpec([3], tf.float32, name="v")])
        def __call__(self, n, v):
            y = tf.cond(n > 2, lambda: v * 2.0, lambda: v - 1.0)
            _, y = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a + self.total), (tf.constant(0), y))
            return {"y": y, "s": tf.reduce_sum(y)}

    class Normalized(tf.Module):
        def __init__(self):
            super().__init__()
            self.stats = [tf.Variable(rng.uniform(0.5, 2, 3).astype(np.float32)) for _ in range(4)]

        @tf.function(input_signature=[tf.TensorSpec([1, 2, 2, 3], tf.float32, name="x")])
        def __call__(self, x):
            s = self.stats
            y = tf.raw_ops.FusedBatchNormV3(x=x, scale=s[0], offset=s[1], mean=s[2], variance=s[3],
                                            is_training=False)[0]
            return tf.nn.relu6(tf.nn.conv2d(y, tf.ones([1, 1, 3, 2]), 1, "SAME"))

    yield "tf_mlp", lambda path: tf.saved_model.save(Mlp(), path)
    yield "tf_loops", lambda path: tf.saved_model.save(Loops(), path)
    yield "tf_batch_norm", lambda path: tf.saved_model.save(Normalized(), path)
    try:
        import keras
    except ImportError:
        return
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="relu"), keras.layers.Dense(2)])
    yield "keras_mlp", lambda path: model.export(path, verbose=False)


def main(corpus):
    import numpy as np
    import tensorflow as tf
    os.makedirs(corpus, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        for name, write in models(tf, np):
            path = os.path.join(work, name)
            write(path)
            seed = bytearray([WHOLE_MODEL])
            for f in FILES:
                with open(os.path.join(path, f), "rb") as fh:
                    data = fh.read()
                seed += struct.pack("<I", len(data)) + data
            with open(os.path.join(corpus, "seed_" + name), "wb") as fh:
                fh.write(seed)
            print("fuzz seed %s: %d bytes" % (name, len(seed)))


if __name__ == "__main__":
    main(sys.argv[1])
