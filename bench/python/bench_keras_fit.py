"""Keras `fit` time per epoch: Keras on kiln vs Keras on TensorFlow vs Keras on JAX, in one run.

    PYTHONPATH=python .venv/bin/python bench/python/bench_keras_fit.py [--examples N] [--epochs E] [--models mlp,cnn]

Issue #31's benchmark: an MLP and a CNN on 28x28x1 inputs, 60,000 synthetic examples (the
same for every backend, from a fixed seed), batch 128, Adam, sparse categorical cross-entropy.
Each backend runs in its own process (Keras binds to one backend per process): kiln through
`python -m kiln.as_tensorflow` with KERAS_BACKEND=tensorflow. The first epoch (which traces
and compiles) is reported apart; the epoch time is the median of the later ones. Also prints
the CPU, and each backend's final loss as a sanity check that all three trained alike.
"""
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.abspath(__file__)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def _cpu():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                flags = open("/proc/cpuinfo").read()
                isa = "AVX-512" if " avx512f" in flags else "AVX2" if " avx2" in flags else "baseline"
                return "%s (%s, %d cores)" % (name, isa, os.cpu_count())
    except OSError:
        pass
    return platform.processor()


def _model(keras, kind):
    layers = keras.layers
    if kind == "mlp":
        return keras.Sequential([layers.Input((28, 28, 1)), layers.Flatten(), layers.Dense(256, activation="relu"),
                                 layers.Dense(128, activation="relu"), layers.Dense(10)])
    return keras.Sequential([layers.Input((28, 28, 1)), layers.Conv2D(32, 3, activation="relu"), layers.MaxPooling2D(),
                             layers.Conv2D(64, 3, activation="relu"), layers.MaxPooling2D(), layers.Flatten(),
                             layers.Dense(10)])


def child(backend, kind, examples, epochs):
    import numpy as np
    import keras

    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.random((examples, 28, 28, 1), dtype=np.float32)
    y = rng.integers(0, 10, size=(examples,)).astype(np.int32)
    model = _model(keras, kind)
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))

    class Timer(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.start = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            times.append(time.perf_counter() - self.start)

    times = []
    history = model.fit(x, y, batch_size=128, epochs=epochs, shuffle=False, verbose=0, callbacks=[Timer()])
    print(json.dumps({"backend": backend, "model": kind, "epochs": times, "loss": history.history["loss"][-1]}))


def _run(backend, kind, examples, epochs):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), TF_CPP_MIN_LOG_LEVEL="3",
               KERAS_BACKEND="jax" if backend == "jax" else "tensorflow")
    args = [HERE, "--child", backend, kind, str(examples), str(epochs)]
    cmd = [sys.executable] + (["-m", "kiln.as_tensorflow"] if backend == "kiln" else []) + args
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
    if p.returncode != 0:
        return {"backend": backend, "model": kind, "error": p.stderr.strip().splitlines()[-1][:200]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv):
    if argv[:1] == ["--child"]:
        child(argv[1], argv[2], int(argv[3]), int(argv[4]))
        return 0
    examples, epochs, models = 60000, 3, ["mlp", "cnn"]
    it = iter(argv)
    for a in it:
        if a == "--examples":
            examples = int(next(it))
        elif a == "--epochs":
            epochs = int(next(it))
        elif a == "--models":
            models = next(it).split(",")
    print("Keras fit, %d examples of 28x28x1, batch 128, Adam; CPU: %s" % (examples, _cpu()))
    print("%-5s %-11s %12s %14s %10s %9s" % ("model", "backend", "first epoch", "epoch (median)", "vs kiln", "loss"))
    for kind in models:
        rows = [_run(b, kind, examples, epochs) for b in ("kiln", "tensorflow", "jax")]
        ours = None
        for r in rows:
            if "error" in r:
                print("%-5s %-11s failed: %s" % (kind, r["backend"], r["error"]))
                continue
            later = sorted(r["epochs"][1:]) or r["epochs"]
            median = later[len(later) // 2]
            ours = median if r["backend"] == "kiln" else ours
            ratio = "" if ours is None else "%.2fx" % (median / ours)
            print("%-5s %-11s %11.2fs %13.2fs %10s %9.4f" % (kind, r["backend"], r["epochs"][0], median, ratio, r["loss"]))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
