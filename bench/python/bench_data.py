"""Input pipelines: kiln.data against tf.data, in one run, on this machine.

    .venv/bin/python bench/python/bench_data.py [--quick]

Rows (elements per second through the whole pipeline, best of several passes, after a warm
pass; ratio = kiln / TensorFlow, above 1 is kiln faster):
- slices-map-batch: from_tensor_slices(100k x 64 float32) -> map(x*2+1, AUTOTUNE) -> batch(256) -> prefetch
- generator-batch: from_generator(Python ints) -> batch(64): the GIL-bound source
And a training loop (one MLP step per batch, the step a traced function) over the batched
dataset against the same loop over batches already in memory: the overhead of the pipeline."""
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


def pipelines(m, n):
    data = np.random.RandomState(0).rand(n, 64).astype(np.float32)

    def slices():
        return (m.data.Dataset.from_tensor_slices(data).map(lambda x: x * 2 + 1, num_parallel_calls=m.data.AUTOTUNE)
                .batch(256).prefetch(m.data.AUTOTUNE))

    def generator():
        return m.data.Dataset.from_generator(lambda: iter(range(n // 10)), output_types=m.int64).batch(64)

    return {"slices-map-batch": (slices, n), "generator-batch": (generator, n // 10)}


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

    def over_memory():
        for xb, yb in batches:
            step(xb, yb)

    out = {}
    for name, loop in (("dataset", over_dataset), ("memory", over_memory)):
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

    print("CPU: %s, %d cores" % (_cpu(), len(os.sched_getaffinity(0))))
    print("%-18s %14s %14s %8s" % ("pipeline", "kiln elem/s", "tf elem/s", "ratio"))
    ours, theirs = pipelines(kiln, n), pipelines(tf, n)
    for name in ours:
        make_k, count = ours[name]
        make_t, _ = theirs[name]
        k, t = rate(make_k, count, repeat), rate(make_t, count, repeat)
        print("%-18s %14.0f %14.0f %7.2fx" % (name, k, t, k / t))
    for m in (kiln, tf):
        r = training(m, n // 2, repeat)
        print("%s MLP step: over dataset %.1f us, over in-memory batches %.1f us (dataset/memory %.2f)"
              % (m.__name__, r["dataset"], r["memory"], r["dataset"] / r["memory"]))


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
