"""`kiln export-tfjs` on SavedModels TensorFlow wrote: TensorFlow writes each model during the
test, kiln converts it to a TensorFlow.js graph model, and the real TensorFlow.js (node,
tests/tfjs/node_modules, pure-JS CPU backend) runs it; its outputs must match TensorFlow's own
(tests/tfjs/run_model.js: within 1e-4 relative for float32, exact for integers)."""
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

import keras_models

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
CLI = os.path.join(ROOT, "build", "tools", "kiln")
RUNNER = os.path.join(ROOT, "tests", "tfjs", "run_model.js")
RNG = np.random.default_rng(11)


def _tfjs_or_skip():
    node = shutil.which("node")
    have = node and os.path.isdir(os.path.join(ROOT, "tests", "tfjs", "node_modules", "@tensorflow", "tfjs"))
    if not have:
        if os.environ.get("KILN_REQUIRE_TFJS") == "1":
            pytest.fail("KILN_REQUIRE_TFJS=1 but node or @tensorflow/tfjs is missing (make deps installs both)")
        pytest.skip("needs node and @tensorflow/tfjs (make deps installs both)")
    if not os.path.exists(CLI):
        pytest.skip("the kiln program is not built (make build)")
    return node


def _tensor(a):
    a = np.asarray(a)
    return {"dtype": {"float32": "float32", "int32": "int32", "bool": "bool"}[a.dtype.name],
            "shape": list(a.shape), "values": a.ravel().tolist()}


def _convert_and_run(tf, node, tmp_path, saved, feeds_list):
    """Converts `saved` with kiln, then runs each feed dict in TF.js and compares with TF."""
    out = str(tmp_path / (os.path.basename(saved) + "_tfjs"))
    res = subprocess.run([CLI, "export-tfjs", saved, out], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    loaded = tf.saved_model.load(saved)
    fn = loaded.signatures["serving_default"]
    cases = []
    for i, feeds in enumerate(feeds_list):
        want = fn(**{k: tf.constant(v) for k, v in feeds.items()})
        cases.append({"name": "%s#%d" % (os.path.basename(saved), i), "model": out,
                      "inputs": {k: _tensor(v) for k, v in feeds.items()},
                      "expected": {k: _tensor(v.numpy()) for k, v in want.items()}})
    path = str(tmp_path / "cases.json")
    with open(path, "w") as f:
        json.dump(cases, f)
    run = subprocess.run([node, RUNNER, path], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "%d cases, 0 failures" % len(cases) in run.stdout
    assert run.stdout.count("ok   ") == sum(len(c["expected"]) for c in cases), run.stdout


def test_a_tf_module_with_variables_cond_and_relu6(tf, tmp_path):
    node = _tfjs_or_skip()

    class Module(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(RNG.standard_normal((3, 2)).astype(np.float32))
            self.b = tf.Variable(np.array([0.5, -0.25], np.float32))

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
        def __call__(self, x):
            y = tf.matmul(x, self.w) + self.b
            return tf.cond(tf.reduce_sum(x) > 0, lambda: tf.nn.relu6(y * 4.0), lambda: tf.nn.sigmoid(y))

    saved = str(tmp_path / "module")
    tf.saved_model.save(Module(), saved)
    feeds = [{"x": RNG.standard_normal((b, 3)).astype(np.float32) + s} for b, s in ((1, 2.0), (4, -2.0), (5, 0.0))]
    _convert_and_run(tf, node, tmp_path, saved, feeds)


def test_keras_mlp_and_cnn_exports(tf, tmp_path):
    node = _tfjs_or_skip()
    keras = pytest.importorskip("keras")
    mlp = keras_models.small_mlp(keras)
    cnn = keras_models.small_cnn(keras, activation="relu6")
    for name, model, shape in (("mlp", mlp, (8,)), ("cnn", cnn, (12, 12, 3))):
        saved = str(tmp_path / name)
        model.export(saved, verbose=False)
        (arg,) = tf.saved_model.load(saved).signatures["serving_default"].structured_input_signature[1]
        feeds = [{arg: RNG.standard_normal((b,) + shape).astype(np.float32)} for b in (1, 3)]
        _convert_and_run(tf, node, tmp_path, saved, feeds)


def test_fused_batch_norm_from_a_tf_graph(tf, tmp_path):
    node = _tfjs_or_skip()

    class Normalized(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 2, 2, 3], tf.float32, name="x")])
        def __call__(self, x):
            c = tf.constant([0.5, 1.0, 2.0])
            return tf.raw_ops.FusedBatchNormV3(x=x, scale=c, offset=c - 1.0, mean=c * 0.1, variance=c,
                                               is_training=False)[0]

    saved = str(tmp_path / "normalized")
    tf.saved_model.save(Normalized(), saved)
    _convert_and_run(tf, node, tmp_path, saved, [{"x": RNG.standard_normal((2, 2, 2, 3)).astype(np.float32)}])
