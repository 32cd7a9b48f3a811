"""Input pipelines: kiln.data against tf.data, in one run, on this machine.

    .venv/bin/python bench/python/bench_data.py [--quick]

Rows (elements per second through the whole pipeline, best of several passes, after a warm
pass; ratio = kiln / TensorFlow, above 1 is kiln faster):
- slices-map-batch: from_tensor_slices(100k x 64 float32) -> map(x*2+1, AUTOTUNE) -> batch(256) -> prefetch
- tfrecord-parse: TFRecordDataset (Examples: 64 floats and an int64 label, written once by
  TensorFlow) -> map(parse_single_example, AUTOTUNE) -> batch(256)
- image-like: uint8 32x32x3 images -> map(to float, random flip, random crop 28x28, AUTOTUNE)
  -> batch(128): decode-free augmentation
- generator-batch: from_generator(Python ints) -> batch(64): the GIL-bound source
And a training loop (one MLP step per batch, the step a traced function) over the batched
dataset against the same loop over batches already in memory (the overhead of the pipeline),
and the epoch as one traced function whose `for` over the dataset is a graph loop."""
import argparse
import os
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def rate(make, elements, repeat):
    """Elements per second of a full pass over make() (best of `repeat`, after a warm pass)."""
    best = None
    for i in range(repeat + 1):
        ds = make()
        start = time.perf_counter()
        for _ in ds:
            pass
        took = time.perf_counter() - start
        if i and (best is None or took < best):
            best = took
    return elements / best


def write_records(path, n):
    """n Examples (64 floats, an int64 label), written by TensorFlow."""
    import tensorflow as tf
    rng = np.random.RandomState(2)
    with tf.io.TFRecordWriter(path) as w:
        for i in range(n):
            ex = tf.train.Example(features=tf.train.Features(feature={
                "x": tf.train.Feature(float_list=tf.train.FloatList(value=rng.rand(64).tolist())),
                "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 10]))}))
            w.write(ex.SerializeToString())


def pipelines(m, n, records):
    data = np.random.RandomState(0).rand(n, 64).astype(np.float32)
    images = np.random.RandomState(3).randint(0, 256, (n // 10, 32, 32, 3)).astype(np.uint8)
    features = {"x": m.io.FixedLenFeature([64], m.float32), "y": m.io.FixedLenFeature([], m.int64)}

    def slices():
        return (m.data.Dataset.from_tensor_slices(data).map(lambda x: x * 2 + 1, num_parallel_calls=m.data.AUTOTUNE)
                .batch(256).prefetch(m.data.AUTOTUNE))

    def generator():
        return m.data.Dataset.from_generator(lambda: iter(range(n // 10)), output_types=m.int64).batch(64)

    def tfrecord():
        return (m.data.TFRecordDataset(records).map(lambda s: m.io.parse_single_example(s, features),
                                                    num_parallel_calls=m.data.AUTOTUNE).batch(256))

    def augment(x):
        x = m.image.random_flip_left_right(m.cast(x, m.float32) / 255.0)
        return m.image.random_crop(x, [28, 28, 3])

    def image():
        return (m.data.Dataset.from_tensor_slices(images).map(augment, num_parallel_calls=m.data.AUTOTUNE)
                .batch(128).prefetch(m.data.AUTOTUNE))

    return {"slices-map-batch": (slices, n), "tfrecord-parse": (tfrecord, n // 5), "image-like": (image, n // 10),
            "generator-batch": (generator, n // 10)}


def training(m, n, repeat):
    """Seconds per step of an MLP step over a batched dataset and over in-memory batches."""
    rng = np.random.RandomState(1)
    x = rng.rand(n, 64).astype(np.float32)
    y = rng.rand(n, 1).astype(np.float32)
    w1 = m.Variable(rng.rand(64, 128).astype(np.float32) * 0.1)
    w2 = m.Variable(rng.rand(128, 1).astype(np.float32) * 0.1)

    @m.function
    def step(xb, yb):
        with m.GradientTape() as tape:
            loss = m.reduce_mean((m.matmul(m.nn.relu(m.matmul(xb, w1)), w2) - yb) ** 2)
        g1, g2 = tape.gradient(loss, [w1, w2])
        w1.assign_sub(0.01 * g1)
        w2.assign_sub(0.01 * g2)
        return loss

    ds = m.data.Dataset.from_tensor_slices((x, y)).batch(128, drop_remainder=True).prefetch(m.data.AUTOTUNE)
    batches = [(m.constant(x[i:i + 128]), m.constant(y[i:i + 128])) for i in range(0, n - 127, 128)]
    for xb, yb in batches[:2]:
        step(xb, yb)

    def over_dataset():
        for xb, yb in ds:
            step(xb, yb)

    @m.function
    def epoch():  # the whole loop over the dataset as one graph (AutoGraph: a While loop)
        loss = m.constant(0.0)
        for xb, yb in ds:
            loss = step(xb, yb)
        return loss

    def over_memory():
        for xb, yb in batches:
            step(xb, yb)

    out = {}
    for name, loop in (("dataset", over_dataset), ("memory", over_memory), ("traced epoch", epoch)):
        loop()
        best = min(_timed(loop) for _ in range(repeat))
        out[name] = best / len(batches) * 1e6
    return out


def _timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n = 20000 if args.quick else 100000
    repeat = 2 if args.quick else 5
    import kiln
    import tensorflow as tf

    import tempfile
    records = os.path.join(tempfile.mkdtemp(), "bench.tfrecord")
    write_records(records, n // 5)
    print("CPU: %s, %d cores" % (_cpu(), len(os.sched_getaffinity(0))))
    print("%-18s %14s %14s %8s" % ("pipeline", "kiln elem/s", "tf elem/s", "ratio"))
    ours, theirs = pipelines(kiln, n, records), pipelines(tf, n, records)
    for name in ours:
        make_k, count = ours[name]
        make_t, _ = theirs[name]
        k, t = rate(make_k, count, repeat), rate(make_t, count, repeat)
        print("%-18s %14.0f %14.0f %7.2fx" % (name, k, t, k / t))
    for m in (kiln, tf):
        r = training(m, n // 2, repeat)
        print("%s MLP step: over dataset %.1f us, over in-memory batches %.1f us (dataset/memory %.2f); "
              "the epoch traced as one function over the dataset %.1f us per step (/memory %.2f)"
              % (m.__name__, r["dataset"], r["memory"], r["dataset"] / r["memory"], r["traced epoch"],
                 r["traced epoch"] / r["memory"]))


def _cpu():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


if __name__ == "__main__":
    main()
