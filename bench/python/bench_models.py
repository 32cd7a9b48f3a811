"""Real models, served: Keras applications, a Transformer encoder and an LSTM classifier,
exported by TensorFlow (`model.export`, random weights: no model hub is reachable, and the
weights' values do not change the work), run by kiln
(`kiln.saved_model.load(dir).signatures["serving_default"]`), TensorFlow (the same directory)
and ONNX Runtime (the same model converted by tf2onnx, when it is installed: `make bench-peers`
installs python/requirements-bench.txt). Milliseconds per call, best of --reps, at each batch
size and thread count; kiln's and ONNX Runtime's outputs are checked against TensorFlow's
first.

    .venv/bin/python bench/python/bench_models.py [--models ResNet50,TransformerEncoder]
        [--batches 1,32] [--threads 1,2] [--reps 3] [--json out.json]

Each framework's threads are set for the whole process, so every (framework, threads) cell
runs in a process of its own."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

APPLICATIONS = ["ResNet50", "MobileNetV2", "EfficientNetB0", "DenseNet121", "InceptionV3"]
# Sequence models over token ids: (tokens per example, vocabulary size).
SEQUENCES = {"TransformerEncoder": (128, 10000), "LSTMClassifier": (100, 10000)}
MODELS = APPLICATIONS + list(SEQUENCES)

# Keras code for the sequence models. The encoder: two blocks of 4-head self-attention (key
# size 64) and a GELU feed-forward layer (256 -> 1024 -> 256), post-norm as in "Attention is all
# you need", over a 256-wide embedding, pooled into a 2-way softmax. The classifier: a 128-wide
# embedding, one LSTM(128), a sigmoid unit (the Keras text-classification example's shape).
_SEQUENCE_CODE = {
    "TransformerEncoder": """
x = layers.Embedding(%(vocab)d, 256)(inp)
for _ in range(2):
    a = layers.MultiHeadAttention(num_heads=4, key_dim=64)(x, x)
    x = layers.LayerNormalization(epsilon=1e-6)(x + a)
    f = layers.Dense(1024, activation="gelu")(x)
    x = layers.LayerNormalization(epsilon=1e-6)(x + layers.Dense(256)(f))
out = layers.Dense(2, activation="softmax")(layers.GlobalAveragePooling1D()(x))
""",
    "LSTMClassifier": """
x = layers.Embedding(%(vocab)d, 128)(inp)
out = layers.Dense(1, activation="sigmoid")(layers.LSTM(128)(x))
""",
}


def _input(name):
    """The model's input without the batch dim, and its dtype."""
    if name in SEQUENCES:
        return (SEQUENCES[name][0],), "int32"
    return ((299, 299, 3) if name == "InceptionV3" else (224, 224, 3)), "float32"


def _export(name, root):
    path = os.path.join(root, name)
    if not os.path.exists(path):
        if name in SEQUENCES:
            seq, vocab = SEQUENCES[name]
            code = ("import keras\nfrom keras import layers\nkeras.utils.set_random_seed(0)\n"
                    "inp = keras.Input((%d,), dtype='int32')\n%s\nkeras.Model(inp, out).export(%r, verbose=False)"
                    % (seq, _SEQUENCE_CODE[name] % {"vocab": vocab}, path))
        else:
            code = ("import keras; m = keras.applications.%s(weights=None, input_shape=%r); "
                    "m.export(%r, verbose=False)" % (name, _input(name)[0], path))
        subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    return path


def _to_onnx(name, saved, root):
    path = os.path.join(root, name + ".onnx")
    if not os.path.exists(path):
        r = subprocess.run([sys.executable, "-m", "tf2onnx.convert", "--saved-model", saved, "--output", path,
                            "--opset", "17"], capture_output=True, text=True,
                           env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
        if r.returncode != 0:
            print("  %s: tf2onnx failed: %s" % (name, (r.stderr.strip().splitlines() or ["?"])[-1]))
            return None
        _erfc_as_erf(path)
    return path


def _erfc_as_erf(path):
    """tf2onnx writes TensorFlow's Erfc (Keras's exact GELU is 0.5*x*erfc(-x/sqrt(2))) as an ONNX
    Erfc node, an op ONNX does not have, so ONNX Runtime refuses the model. Each becomes
    1 - Erf(x), ONNX's own ops: the same function (its rounding differs where erfc is tiny;
    the outputs are compared with TensorFlow's below)."""
    import onnx
    from onnx import helper
    model = onnx.load(path)
    nodes, one = [], None
    for node in model.graph.node:
        if node.op_type != "Erfc":
            nodes.append(node)
            continue
        if one is None:
            one = node.name + "/one"
            model.graph.initializer.append(helper.make_tensor(one, onnx.TensorProto.FLOAT, [], [1.0]))
        erf = node.output[0] + "/erf"
        nodes.append(helper.make_node("Erf", [node.input[0]], [erf], name=node.name + "/Erf"))
        nodes.append(helper.make_node("Sub", [one, erf], [node.output[0]], name=node.name + "/OneMinus"))
    if one is not None:
        del model.graph.node[:]
        model.graph.node.extend(nodes)
        onnx.save(model, path)


# One cell, run in a child process: prints the best time in ms and a checksum of the output.
_CELL = r"""
import os, sys, time
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
fw, path, batch, threads, reps = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
shape, dtype, vocab = (batch,) + tuple(map(int, sys.argv[6].split("x"))), sys.argv[7], int(sys.argv[8])
rng = np.random.default_rng(0)
x = rng.integers(0, vocab, shape).astype(dtype) if vocab else rng.standard_normal(shape).astype(dtype)
if fw == "kiln":
    import kiln as m
    m.config.threading.set_intra_op_parallelism_threads(threads)
elif fw == "tensorflow":
    import tensorflow as m
    m.config.threading.set_intra_op_parallelism_threads(threads)
    m.config.threading.set_inter_op_parallelism_threads(1)
if fw in ("kiln", "tensorflow"):
    f = m.saved_model.load(path).signatures["serving_default"]
    key = next(iter(f.structured_input_signature[1]))
    t = m.constant(x)
    run = lambda: next(iter(f(**{key: t}).values())).numpy()
else:
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    name = s.get_inputs()[0].name
    run = lambda: s.run(None, {name: x})[0]
y = run()
best = float("inf")
for _ in range(reps):
    t0 = time.perf_counter()
    run()
    best = min(best, time.perf_counter() - t0)
np.save(sys.argv[9], y)
print("%.3f" % (best * 1e3))
"""


def _cell(fw, name, path, batch, threads, reps, out):
    shape, dtype = _input(name)
    vocab = SEQUENCES[name][1] if name in SEQUENCES else 0
    r = subprocess.run([sys.executable, "-c", _CELL, fw, path, str(batch), str(threads), str(reps),
                        "x".join(map(str, shape)), dtype, str(vocab), out], capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "failed"
    return float(r.stdout.strip().splitlines()[-1]), None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "kiln_bench_models"))
    ap.add_argument("--json")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    try:
        import tf2onnx  # noqa: F401
        have_onnx = True
    except ImportError:
        have_onnx = False
        print("(tf2onnx not installed: no ONNX Runtime column)")
    rows = []
    print("%-16s %5s %7s %12s %12s %12s %10s %10s" % ("model", "batch", "threads", "kiln ms", "TF ms", "ORT ms",
                                                         "kiln/TF", "kiln/ORT"))
    for name in args.models.split(","):
        saved = _export(name, args.dir)
        onnx_path = _to_onnx(name, saved, args.dir) if have_onnx else None
        for batch in map(int, args.batches.split(",")):
            for threads in map(int, args.threads.split(",")):
                cells, outs = {}, {}
                for fw, path in (("kiln", saved), ("tensorflow", saved), ("onnxruntime", onnx_path)):
                    if path is None:
                        continue
                    out = os.path.join(args.dir, "%s_%s_%d.npy" % (name, fw, batch))
                    cells[fw], err = _cell(fw, name, path, batch, threads, args.reps, out)
                    if err:
                        print("  %s %s: %s" % (name, fw, err))
                    else:
                        outs[fw] = np.load(out)
                if "kiln" in outs and "tensorflow" in outs:
                    diff = float(np.max(np.abs(outs["kiln"] - outs["tensorflow"])))
                    assert diff < 1e-3, (name, batch, "kiln differs from TensorFlow by", diff)
                if "onnxruntime" in outs and "tensorflow" in outs:
                    diff = float(np.max(np.abs(outs["onnxruntime"] - outs["tensorflow"])))
                    if diff >= 1e-3:  # a peer's conversion error is reported, not kiln's failure
                        print("  %s: ONNX Runtime differs from TensorFlow by %g" % (name, diff))
                k, t, o = cells.get("kiln"), cells.get("tensorflow"), cells.get("onnxruntime")
                ratio = lambda a, b: ("%.2f" % (a / b)) if a and b else "-"  # noqa: E731
                print("%-16s %5d %7d %12s %12s %12s %10s %10s" % (
                    name, batch, threads, "%.2f" % k if k else "-", "%.2f" % t if t else "-",
                    "%.2f" % o if o else "-", ratio(k, t), ratio(k, o)))
                sys.stdout.flush()
                rows.append({"model": name, "batch": batch, "threads": threads, "kiln_ms": k, "tensorflow_ms": t,
                             "onnxruntime_ms": o})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
