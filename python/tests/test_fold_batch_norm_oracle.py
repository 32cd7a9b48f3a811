"""KILN_FOLD_BATCH_NORM=1 (off by default): a convolution's BatchNormalization folded into
oneDNN's filter and bias, its Relu6 or Relu a post-op. TensorFlow is the oracle: a traced
Conv2D / DepthwiseConv2dNative followed by BatchNormalization's multiply and add and an
activation, as Keras computes them at inference, run in a process with the fold on and one
with it off; both within float32 roundings of TensorFlow's values, and the folded one not
bit for bit the unfolded one (so the fold ran)."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kiln

pytestmark = pytest.mark.skipif(not kiln.sysconfig.get_build_info()["convolution_library"].startswith("onednn"),
                                reason="convolutions are folded only on oneDNN")

_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import kiln as tf
    with np.load(sys.argv[1]) as f:
        a = {k: f[k] for k in f.files}
    w, dw, scale, shift = (tf.Variable(tf.constant(a[k])) for k in ("w", "dw", "scale", "shift"))
    @tf.function
    def block(x):
        y = tf.nn.relu6(tf.nn.conv2d(x, w, 1, "SAME") * scale + shift)
        return tf.nn.relu(tf.nn.depthwise_conv2d(y, dw, [1, 1, 1, 1], "SAME") * scale + shift)
    np.save(sys.argv[2], block(tf.constant(a["x"])).numpy())
""")


def _inputs(rng):
    return {"x": rng.standard_normal((1, 56, 56, 32)).astype("float32"),
            "w": (rng.standard_normal((1, 1, 32, 192)) * 0.2).astype("float32"),
            "dw": (rng.standard_normal((3, 3, 192, 1)) * 0.3).astype("float32"),
            "scale": rng.uniform(0.5, 1.5, 192).astype("float32"),
            "shift": (rng.standard_normal(192) * 0.1).astype("float32")}


def _run(tmp_path, inputs, fold):
    src, out = tmp_path / "in.npz", tmp_path / ("out%d.npy" % fold)
    np.savez(src, **inputs)
    env = dict(os.environ, KILN_FOLD_BATCH_NORM=str(fold))
    subprocess.run([sys.executable, "-c", _SCRIPT, str(src), str(out)], env=env, check=True, timeout=300)
    return np.load(out)


def test_folded_block_is_close_to_tensorflow(tf, tmp_path):
    a = _inputs(np.random.default_rng(3))
    y = tf.nn.relu6(tf.nn.conv2d(a["x"], a["w"], 1, "SAME") * a["scale"] + a["shift"])
    want = tf.nn.relu(tf.nn.depthwise_conv2d(y, a["dw"], [1, 1, 1, 1], "SAME") * a["scale"] + a["shift"]).numpy()
    unfolded, folded = _run(tmp_path, a, 0), _run(tmp_path, a, 1)
    np.testing.assert_allclose(unfolded, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(folded, want, rtol=1e-5, atol=1e-5)
    assert (folded != unfolded).any()
