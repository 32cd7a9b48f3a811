"""Keras's own test files on TensorFlow and on kiln: the acceptance table of issue #31.

    PYTHONPATH=python .venv/bin/python bench/python/keras_tests.py [--out DIR] [--timeout S] [--reuse] [FILE_OR_GROUP...]

Runs each selected test file of the installed keras wheel (keras/src/**/*_test.py, never
edited) twice in this environment, with KERAS_BACKEND=tensorflow: under TensorFlow
(`python -m pytest`) and under kiln (`python -m kiln.as_tensorflow -m pytest`). Prints, per
file, the tests that pass on TensorFlow and how many of those pass on kiln, the total ratio
(the issue's goal: >= 90%), and the most common first lines of kiln's failures. Results per
run are kept in DIR (default /tmp/keras-tests) as JUnit XML; TensorFlow's are reused when
present (delete DIR to rerun them); --reuse also takes kiln's earlier results from DIR (the
table without running anything that already ran).
"""
import collections
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import importlib.util

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Found, not imported: importing keras would pick a backend and load TensorFlow here.
KERAS_SRC = os.path.join(os.path.dirname(importlib.util.find_spec("keras").origin), "src")
KERAS_VERSION = subprocess.run([sys.executable, "-c", "import importlib.metadata as m; print(m.version('keras'))"],
                               capture_output=True, text=True).stdout.strip()

# The broad set the issue names: ops, layers, models, trainers, optimizers, losses, saving.
GROUPS = {
    "ops": ["ops/core_test.py", "ops/math_test.py", "ops/nn_test.py", "ops/numpy_test.py", "ops/image_test.py",
            "ops/linalg_test.py"],
    "layers": ["layers/core/dense_test.py", "layers/core/embedding_test.py", "layers/core/einsum_dense_test.py",
               "layers/core/input_layer_test.py", "layers/core/lambda_layer_test.py", "layers/core/masking_test.py",
               "layers/activations/activation_test.py", "layers/activations/relu_test.py",
               "layers/activations/softmax_test.py", "layers/convolutional/conv_test.py",
               "layers/pooling/max_pooling_test.py", "layers/pooling/average_pooling_test.py",
               "layers/pooling/global_max_pooling_test.py", "layers/pooling/global_average_pooling_test.py",
               "layers/normalization/batch_normalization_test.py",
               "layers/normalization/layer_normalization_test.py", "layers/regularization/dropout_test.py",
               "layers/merging/merging_test.py", "layers/reshaping/flatten_test.py", "layers/reshaping/reshape_test.py",
               "layers/reshaping/permute_test.py", "layers/rnn/lstm_test.py", "layers/rnn/gru_test.py",
               "layers/rnn/simple_rnn_test.py", "layers/attention/multi_head_attention_test.py"],
    "models": ["models/sequential_test.py", "models/functional_test.py", "models/model_test.py"],
    "trainers": ["trainers/trainer_test.py"],
    "optimizers": ["optimizers/sgd_test.py", "optimizers/adam_test.py", "optimizers/adamw_test.py",
                   "optimizers/rmsprop_test.py", "optimizers/optimizer_test.py"],
    "losses": ["losses/losses_test.py"],
    "metrics": ["metrics/accuracy_metrics_test.py", "metrics/regression_metrics_test.py",
                "metrics/reduction_metrics_test.py"],
    "callbacks": ["callbacks/early_stopping_test.py", "callbacks/model_checkpoint_test.py",
                  "callbacks/progbar_logger_test.py"],
    "saving": ["saving/saving_api_test.py", "saving/saving_lib_test.py"],
    "export": ["export/saved_model_test.py", "export/tfsm_layer_test.py"],
}


def _select(args):
    files = []
    for a in args or list(GROUPS):
        files += GROUPS.get(a, [a])
    return [f for f in files if os.path.exists(os.path.join(KERAS_SRC, f))]


def _run(kind, files, out, timeout, reuse=False):
    """JUnit XML of one pytest run over `files` on `kind` ("tensorflow" or "kiln"); TensorFlow's
    (and with `reuse`, kiln's) earlier result when DIR has one."""
    xml = os.path.join(out, "%s-%s.xml" % (kind, "_".join(f.replace("/", ".")[:-3] for f in files)[:150]))
    if (kind == "tensorflow" or reuse) and os.path.exists(xml):
        return xml
    env = dict(os.environ, KERAS_BACKEND="tensorflow", PYTHONPATH=os.path.join(ROOT, "python"),
               TF_CPP_MIN_LOG_LEVEL="3")
    prefix = [sys.executable, "-m", "pytest"] if kind == "tensorflow" else [
        sys.executable, "-m", "kiln.as_tensorflow", "-m", "pytest"]
    cmd = prefix + ["-q", "-p", "no:cacheprovider", "--junitxml=" + xml] + [os.path.join(KERAS_SRC, f) for f in files]
    try:
        subprocess.run(cmd, env=env, cwd=out, timeout=timeout, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        print("  (%s run of %s timed out after %d s)" % (kind, ", ".join(files), timeout), file=sys.stderr)
    return xml


def _results(xml):
    """{(file, test): (passed, first line of the failure)}."""
    out = {}
    if not os.path.exists(xml):
        return out
    for case in ET.parse(xml).getroot().iter("testcase"):
        key = (case.get("classname", "").split(".")[-2] if "." in case.get("classname", "") else "",
               case.get("classname", "") + "::" + case.get("name", ""))
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        skipped = case.find("skipped") is not None
        message = "" if bad is None else (bad.get("message") or bad.text or "").strip().splitlines()[0][:160]
        out[key] = ("skipped" if skipped else "passed" if bad is None else "failed", message)
    return out


def main(argv):
    out, timeout, args, reuse = "/tmp/keras-tests", 1800, [], False
    it = iter(argv)
    for a in it:
        if a == "--out":
            out = next(it)
        elif a == "--timeout":
            timeout = int(next(it))
        elif a == "--reuse":
            reuse = True
        else:
            args.append(a)
    os.makedirs(out, exist_ok=True)
    files = _select(args)
    print("keras %s: %d test files, KERAS_BACKEND=tensorflow" % (KERAS_VERSION, len(files)))
    print("%-58s %8s %8s %6s" % ("file", "tf pass", "kiln", "ratio"))
    total_tf = total_kiln = 0
    causes = collections.Counter()
    for f in files:
        tf_res = _results(_run("tensorflow", [f], out, timeout))
        kiln_res = _results(_run("kiln", [f], out, timeout, reuse))
        tf_pass = [k for k, (state, _) in tf_res.items() if state == "passed"]
        kiln_pass = [k for k in tf_pass if kiln_res.get(k, ("missing", ""))[0] == "passed"]
        for k in tf_pass:
            state, message = kiln_res.get(k, ("missing", "not run (the kiln run stopped early)"))
            if state != "passed":
                causes[message or state] += 1
        total_tf += len(tf_pass)
        total_kiln += len(kiln_pass)
        print("%-58s %8d %8d %5.0f%%" % (f, len(tf_pass), len(kiln_pass), 100.0 * len(kiln_pass) / max(1, len(tf_pass))))
        sys.stdout.flush()
    print("%-58s %8d %8d %5.1f%%" % ("total", total_tf, total_kiln, 100.0 * total_kiln / max(1, total_tf)))
    print("\nmost common failures on kiln (of tests that pass on TensorFlow):")
    for message, n in causes.most_common(40):
        print("  %4d  %s" % (n, message))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
