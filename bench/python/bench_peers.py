"""kiln against its peers from Python, the same workloads side by side in one run.

    make bench-peers     (or: .venv/bin/python bench/python/bench_peers.py [--quick] [--json FILE])

Peers: kiln (eager and kiln.function), TensorFlow (eager, tf.function, tf.function with
jit_compile=True), JAX (jax.jit) and ONNX Runtime (the same graphs as ONNX models, see
peers_onnx.py) when installed, and LibTorch 1.13 from Debian (C++, eager and TorchScript:
bench/torch/torch_peer.cc, built when libtorch-dev is installed). Each cell is the best of
several timed repeats, in microseconds per call; the last column gives kiln's best over the
best peer (below 1: kiln is faster). Not a test: nothing here asserts a speed."""
import argparse
import itertools
import json
import os
import subprocess
import sys
import time
import timeit

import numpy as np

import peers_onnx

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# Before each cell: the previous framework's pool threads stop spinning (TensorFlow's and
# oneDNN's spin for a while after their work), so that no framework is timed while another
# one's idle threads still hold the cores. Every peer gets the same pause.
SETTLE_SECONDS = 0.3


def best_us(fn, number, repeat):
    fn()
    time.sleep(SETTLE_SECONDS)
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


class Peer:
    """One framework's way to run a workload: eagerly and/or compiled."""

    def __init__(self, name, module, compile_fn, to_array, block=lambda r: r):
        self.name, self.m, self.compile, self.to_array, self.block = name, module, compile_fn, to_array, block


def peers(threads=0):
    """threads > 0: every framework is told to use that many threads for one op (kiln and
    TensorFlow through their threading config, JAX through XLA_FLAGS before it loads, ONNX
    Runtime through its session options)."""
    if threads > 0:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=%s"
                                   % ("true" if threads > 1 else "false")).strip()
        peers_onnx.THREADS = threads
    import kiln

    if threads > 0:
        kiln.config.threading.set_intra_op_parallelism_threads(threads)

    out = [Peer("kiln eager", kiln, None, np.asarray), Peer("kiln.function", kiln, kiln.function, np.asarray)]
    try:
        import tensorflow as tf

        if threads > 0:
            tf.config.threading.set_intra_op_parallelism_threads(threads)

        out += [Peer("TF eager", tf, None, np.asarray), Peer("tf.function", tf, tf.function, np.asarray),
                Peer("tf.function+XLA", tf, lambda f: tf.function(f, jit_compile=True), np.asarray)]
    except ImportError:
        print("(TensorFlow not installed: its columns are skipped)")
    try:
        import jax
        import jax.numpy as jnp

        class JaxOps:
            """The few TF names the workloads use, for JAX."""

            float32, int32 = jnp.float32, jnp.int32
            constant = staticmethod(jnp.asarray)
            matmul = staticmethod(jnp.matmul)
            tanh = staticmethod(jnp.tanh)
            eye = staticmethod(lambda n, dtype: jnp.eye(n, dtype=dtype))
            reduce_mean = staticmethod(jnp.mean)
            square = staticmethod(jnp.square)

        out.append(Peer("jax.jit", JaxOps, jax.jit, np.asarray, block=lambda r: jax.block_until_ready(r)))
    except ImportError:
        print("(JAX not installed: its column is skipped)")
    if peers_onnx.available():
        out.append(Peer("onnxruntime", None, None, np.asarray))
    else:
        print("(onnx/onnxruntime not installed: the ONNX Runtime column is skipped)")
    return out


# -- workloads: each returns a zero-argument callable for a peer, or None (not applicable) ------

def power(dtype):
    x_np = (np.arange(100).reshape(10, 10) % 3 - 1).astype(dtype)

    def make(p):
        if p.name == "onnxruntime":
            return peers_onnx.power(dtype, x_np)
        m = p.m
        x = m.constant(x_np)
        dt = m.int32 if dtype == "int32" else m.float32

        def power_fn(x):
            result = m.eye(10, dtype=dt)
            for _ in range(100):
                result = m.matmul(x, result)
            return result

        f = p.compile(power_fn) if p.compile else power_fn
        return lambda: p.block(f(x))

    return make


def scalar_add(p):
    if p.compile or p.m is None:
        return None
    a, b = p.m.constant(np.float32(1.5)), p.m.constant(np.float32(2.5))
    return lambda: p.block(a + b)


def matmul_10(p):
    if p.compile or p.m is None:
        return None
    x = p.m.constant(np.ones((10, 10), np.float32))
    return lambda: p.block(p.m.matmul(x, x))


def cached_call(p):
    if p.name == "onnxruntime":
        return peers_onnx.add_one(np.array(1.0, np.float32))
    if not p.compile:
        return None
    f = p.compile(lambda x: x + 1)
    x = p.m.constant(np.float32(1.0))
    return lambda: p.block(f(x))


def chain_1m(p):
    if p.name == "onnxruntime":
        return peers_onnx.chain(np.linspace(-3, 3, 1_000_000, dtype=np.float32))
    x = p.m.constant(np.linspace(-3, 3, 1_000_000, dtype=np.float32))

    def chain(x):
        return p.m.tanh(x * 0.5 + 1) * x - x / 3

    f = p.compile(chain) if p.compile else chain
    return lambda: p.block(f(x))


def mlp_step(p):
    """One SGD step of a 784-256-10 MLP on a batch of 64 (forward, gradients, update)."""
    if not p.compile or p.m is None:
        return None
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 784)).astype(np.float32)
    y = rng.standard_normal((64, 10)).astype(np.float32)
    w1 = (rng.standard_normal((784, 256)) * 0.05).astype(np.float32)
    w2 = (rng.standard_normal((256, 10)) * 0.05).astype(np.float32)
    if p.name == "jax.jit":
        import jax
        import jax.numpy as jnp

        def loss(params, x, y):
            h = jnp.tanh(x @ params[0])
            return jnp.mean(jnp.square(h @ params[1] - y))

        @jax.jit
        def step(params, x, y):
            g = jax.grad(loss)(params, x, y)
            return [w - 0.01 * gw for w, gw in zip(params, g)]

        state = [[jnp.asarray(w1), jnp.asarray(w2)]]
        xs, ys = jnp.asarray(x), jnp.asarray(y)

        def run():
            state[0] = step(state[0], xs, ys)
            jax.block_until_ready(state[0])

        return run
    m = p.m
    v1, v2 = m.Variable(w1), m.Variable(w2)
    xs, ys = m.constant(x), m.constant(y)

    def step(x, y):
        with m.GradientTape() as tape:
            h = m.tanh(m.matmul(x, v1))
            loss = m.reduce_mean(m.square(m.matmul(h, v2) - y))
        g1, g2 = tape.gradient(loss, [v1, v2])
        v1.assign_sub(0.01 * g1)
        v2.assign_sub(0.01 * g2)
        return loss

    f = p.compile(step)
    return lambda: p.block(f(xs, ys))


def trace_1000_ops(p):
    """Tracing (and, for kiln, optimizing and compiling) a fresh 1000-op function: µs per op."""
    if not p.compile or p.name in ("jax.jit", "onnxruntime"):
        return None
    m = p.m

    def body(x):
        for _ in range(250):
            x = m.tanh(x * 0.5 + 1.0) - x
        return x

    x = m.constant(np.ones(8, np.float32))

    def run():
        f = p.compile(body)
        if hasattr(f, "get_concrete_function"):
            f.get_concrete_function(x)
        else:
            f(x)

    return run


LSTM_STEPS, LSTM_BATCH, LSTM_INPUT, LSTM_UNITS = 300, 8, 32, 64


def _lstm_data():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((LSTM_BATCH, LSTM_INPUT)).astype(np.float32)
    w = (rng.standard_normal((LSTM_INPUT + LSTM_UNITS, 4 * LSTM_UNITS)) * 0.1).astype(np.float32)
    return x, w


def _lstm_fn(p, salt=0):
    """The recurrent loop as each framework writes it: an LSTM-like cell (one matmul over
    [x, h], four gates) for 300 steps in the framework's own loop construct. A salt changes
    the weights so that no framework can answer a trace from a cache of compiled programs."""
    x_np, w_np = _lstm_data()
    w_np = w_np + np.float32(salt * 1e-6)
    u = LSTM_UNITS
    if p.name == "jax.jit":
        import jax
        import jax.numpy as jnp

        w = jnp.asarray(w_np)

        def run_jax(x):
            def cell(_, hc):
                h, c = hc
                z = jnp.concatenate([x, h], 1) @ w
                i, f, o, g = z[:, :u], z[:, u:2 * u], z[:, 2 * u:3 * u], z[:, 3 * u:]
                c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
                return jax.nn.sigmoid(o) * jnp.tanh(c), c

            zeros = jnp.zeros((LSTM_BATCH, u), jnp.float32)
            return jax.lax.fori_loop(0, LSTM_STEPS, cell, (zeros, zeros))[0]

        return run_jax, jnp.asarray(x_np)
    m = p.m
    w = m.constant(w_np)
    sigmoid = m.sigmoid if hasattr(m, "sigmoid") else m.math.sigmoid

    def run(x):
        def cell(i, h, c):
            z = m.matmul(m.concat([x, h], 1), w)
            ig, fg, og, g = z[:, :u], z[:, u:2 * u], z[:, 2 * u:3 * u], z[:, 3 * u:]
            c = sigmoid(fg) * c + sigmoid(ig) * m.tanh(g)
            return i + 1, sigmoid(og) * m.tanh(c), c

        zeros = m.zeros([LSTM_BATCH, u])
        return m.while_loop(lambda i, h, c: i < LSTM_STEPS, cell, [m.constant(0), zeros, zeros])[1]

    return run, m.constant(x_np)


def lstm_loop(p):
    if p.name == "onnxruntime":
        x, w = _lstm_data()
        return peers_onnx.lstm_loop(x, w, LSTM_STEPS)
    if not p.compile:
        return None
    fn, x = _lstm_fn(p)
    f = p.compile(fn)
    return lambda: p.block(f(x))


def lstm_trace(p):
    """Trace, optimize and compile the recurrent loop from scratch (ms), first call included."""
    if not p.compile or p.m is None:
        return None
    salts = itertools.count(1)

    def run():
        fn, x = _lstm_fn(p, next(salts))
        p.block(p.compile(fn)(x))

    return run


_KERAS_MODELS = {}


def _keras_model_dir(kind):
    """A Keras model exported by TensorFlow (model.export), once per run: "mlp" (784-256-10,
    relu, softmax) or "cnn" (28x28x1: conv 32 3x3 relu, max pool, conv 64 3x3 relu, max pool,
    dense 10 softmax)."""
    if kind not in _KERAS_MODELS:
        import tempfile

        import keras

        layers = keras.layers
        if kind == "mlp":
            model = keras.Sequential([keras.Input((784,)), layers.Dense(256, activation="relu"),
                                      layers.Dense(10, activation="softmax")])
        else:
            model = keras.Sequential([keras.Input((28, 28, 1)), layers.Conv2D(32, 3, activation="relu"),
                                      layers.MaxPooling2D(2), layers.Conv2D(64, 3, activation="relu"),
                                      layers.MaxPooling2D(2), layers.Flatten(), layers.Dense(10, activation="softmax")])
        path = os.path.join(tempfile.mkdtemp(prefix="kiln_bench_"), "keras_" + kind)
        model.export(path, verbose=False)
        _KERAS_MODELS[kind] = path
    return _KERAS_MODELS[kind]


def serve_keras(kind, batch):
    """Serving the SavedModel's serving_default signature: kiln.saved_model.load against
    TensorFlow's own tf.saved_model.load, on the same directory."""

    def make(p):
        if p.name not in ("kiln.function", "tf.function"):
            return None
        try:
            path = _keras_model_dir(kind)
        except ImportError:
            return None
        sig = p.m.saved_model.load(path).signatures["serving_default"]
        (name,) = sig.structured_input_signature[1]
        shape = (batch, 784) if kind == "mlp" else (batch, 28, 28, 1)
        x = p.m.constant(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
        return lambda: p.block(sig(**{name: x}))

    return make


WORKLOADS = [
    ("power(x,100) int32 10x10", power("int32"), 20),
    ("power(x,100) f32 10x10", power("float32"), 20),
    ("eager scalar a + b", scalar_add, 2000),
    ("eager matmul 10x10 f32", matmul_10, 2000),
    ("cached call f(x)=x+1", cached_call, 2000),
    ("chain on 1M f32", chain_1m, 20),
    ("MLP 64x784-256-10 step", mlp_step, 20),
    ("trace 1000 ops (per op)", trace_1000_ops, 1),
    ("LSTM loop 300 steps", lstm_loop, 5),
    ("LSTM loop: trace+1st call", lstm_trace, 1),
    ("serve Keras MLP batch 1", serve_keras("mlp", 1), 200),
    ("serve Keras MLP batch 64", serve_keras("mlp", 64), 50),
    ("serve Keras CNN batch 1", serve_keras("cnn", 1), 100),
    ("serve Keras CNN batch 64", serve_keras("cnn", 64), 10),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: few repeats")
    parser.add_argument("--json", help="also write the table to this file")
    parser.add_argument("--only", help="run only the workloads whose name contains one of these comma-separated texts")
    parser.add_argument("--threads", type=int, default=0,
                        help="threads per op for every framework (default: each one's own default)")
    parser.add_argument("--torch-peer", default=os.path.join(REPO, "build", "bench", "torch_peer"),
                        help="the LibTorch peer program (built when libtorch-dev is installed)")
    parser.add_argument("--kiln-bench", default=os.path.join(REPO, "build", "bench", "kiln_bench"),
                        help="kiln's C++ benchmark program, for the kiln C++ column")
    args = parser.parse_args()
    repeat = 2 if args.quick else 5
    ps = peers(args.threads)
    table = {}
    workloads = [w for w in WORKLOADS if not args.only or any(t in w[0] for t in args.only.split(","))]
    for name, make, number in workloads:
        number = max(1, number // 10) if args.quick else number
        for p in ps:
            fn = make(p)
            if fn is None:
                continue
            us = best_us(fn, number, repeat)
            table[name, p.name] = us / 1000.0 if name.startswith("trace") else us
    memory_floor = _memory_floor(repeat)
    names = [p.name for p in ps] + _kiln_cpp_column(args, table, {w[0] for w in workloads})
    names += _torch_columns(args, table, {w[0] for w in workloads})

    print("\nkiln and its peers from Python: us per call (best of %d); python %s, %d cores usable, threads per op: %s"
          % (repeat, sys.version.split()[0], len(os.sched_getaffinity(0)), args.threads or "default"))
    header = ("%-26s" % "workload" + "".join("%16s" % n for n in names)
              + "%16s%16s" % ("py: kiln/peer", "C++: kiln/peer"))
    print(header)
    print("-" * len(header))
    rows = []
    for name, _, _ in workloads:
        cells = dict(zip(names, [table.get((name, n)) for n in names]))
        ratios = {lang: ratio_in(cells, lang) for lang in ("py", "C++")}
        print("%-26s" % name + "".join("%16s" % ("-" if c is None else "%.3f" % c) for c in cells.values())
              + "".join("%16s" % ("-" if r is None else "%.2f" % r) for r in ratios.values()))
        rows.append({"workload": name, "us": cells, "kiln_over_best_peer": ratios})
    print("memory floor for the 1M chain (numpy copy of 4 MB in, 4 MB out): %.1f us" % memory_floor)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "memory_floor_us": memory_floor, "threads": args.threads, "time": time.time()},
                      f, indent=1)


# Rows that kiln's C++ benchmark measures the same way (bench/*.cc; one thread).
KILN_CPP_ROWS = {
    "power(x,100) int32 10x10": "BM_PowerFunction",
    "power(x,100) f32 10x10": "BM_PowerFunctionF32",
    "eager scalar a + b": "BM_EagerAddScalarF32",
    "eager matmul 10x10 f32": "BM_EagerMatMul10x10F32",
    "cached call f(x)=x+1": "BM_FunctionCallCached",
    "trace 1000 ops (per op)": "BM_TraceCost1000Ops",
}


def language(column):
    """Which side of the language line a column is on: kiln from Python is compared with the
    Python peers, kiln from C++ with LibTorch and TorchScript from C++."""
    return "C++" if column.endswith("C++") else "py"


def ratio_in(cells, lang):
    """kiln's best time over the best peer's, among the columns of one language (below 1:
    kiln is faster); None when either side has no number."""
    mine = [t for c, t in cells.items() if t is not None and language(c) == lang and c.startswith("kiln")]
    theirs = [t for c, t in cells.items() if t is not None and language(c) == lang and not c.startswith("kiln")]
    return min(mine) / min(theirs) if mine and theirs else None


def _kiln_cpp_column(args, table, workload_names):
    """kiln from C++ (kiln_bench, Google Benchmark): the rows it has, as one more column."""
    rows = {w: b for w, b in KILN_CPP_ROWS.items() if w in workload_names}
    if not rows or not os.access(args.kiln_bench, os.X_OK):
        return []
    cmd = [args.kiln_bench, "--benchmark_format=json", "--benchmark_min_time=%s" % (0.05 if args.quick else 0.3),
           "--benchmark_filter=^(%s)$" % "|".join(rows.values())]
    try:
        runs = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=600).stdout)
    except (subprocess.SubprocessError, ValueError) as e:
        print("(kiln_bench failed: %s; the kiln C++ column is skipped)" % e)
        return []
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
    by_name = {b["name"]: b for b in runs["benchmarks"]}
    for workload, bench in rows.items():
        b = by_name.get(bench)
        if b is None:
            continue
        us = b["real_time"] * scale[b["time_unit"]]
        table[workload, "kiln C++"] = us / 1000.0 if workload.startswith("trace") else us
    return ["kiln C++"]


def _torch_columns(args, table, workload_names):
    """Runs the LibTorch peer (C++: eager and TorchScript) and adds its cells to the table."""
    if not os.access(args.torch_peer, os.X_OK):
        print("(LibTorch peer not built: apt-get install libtorch-dev, then make build; its columns are skipped)")
        return []
    cmd = [args.torch_peer, "--threads", str(args.threads)] + (["--quick"] if args.quick else [])
    try:
        cells = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=600).stdout)
    except (subprocess.SubprocessError, ValueError) as e:
        print("(LibTorch peer failed: %s; its columns are skipped)" % e)
        return []
    columns = []
    for workload, by_column in cells.items():
        if workload not in workload_names:
            continue
        for column, us in by_column.items():
            column = "LibTorch C++" if column == "LibTorch eager" else "TorchScript C++"
            table[workload, column] = us
            if column not in columns:
                columns.append(column)
    return sorted(columns)


def _memory_floor(repeat):
    a = np.linspace(-3, 3, 1_000_000, dtype=np.float32)
    out = np.empty_like(a)
    return best_us(lambda: np.copyto(out, a), 50, repeat)


if __name__ == "__main__":
    main()
