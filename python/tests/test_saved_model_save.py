"""kiln.saved_model.save writes SavedModels that TensorFlow loads. Each model is saved by kiln in
the test, loaded by TensorFlow (tf.saved_model.load) and by kiln, and called with the same
inputs as the kiln function that was saved: TensorFlow's kernels run the graph kiln traced, so
the outputs agree bit for bit for integer and elementwise float graphs, and within a few ulps
where float products are summed in another order (MatMul)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import kiln

RNG = np.random.default_rng(11)


def _close(a, b, ulps=0):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.dtype.kind == "f" and ulps:
        np.testing.assert_array_max_ulp(a, b, maxulp=ulps)
    else:
        np.testing.assert_array_equal(a, b)


def _save_and_load(tf, tmp_path, obj, signatures=None):
    path = str(tmp_path / "model")
    kiln.saved_model.save(obj, path, signatures=signatures)
    return tf.saved_model.load(path), kiln.saved_model.load(path), path


def test_pure_functions_with_several_signatures_and_dtypes(tf, tmp_path):
    @kiln.function(input_signature=[kiln.TensorSpec([None], kiln.float32, name="x")])
    def scale(x):
        return x * 3.0 - 1.0

    @kiln.function(input_signature=[kiln.TensorSpec([2, 3], kiln.int32, name="a"),
                                    kiln.TensorSpec([3], kiln.int32, name="b")])
    def mix(a, b):
        return a * b + a // 2, kiln.reduce_sum(a, axis=1)

    @kiln.function(input_signature=[kiln.TensorSpec([2], kiln.float32, name="x")])
    def named(x):
        return {"total": kiln.reduce_sum(x), "twice": x * 2.0}

    theirs, mine, _ = _save_and_load(tf, tmp_path, None, {"serving_default": scale, "mix": mix, "named": named})
    assert sorted(theirs.signatures) == sorted(mine.signatures) == ["mix", "named", "serving_default"]
    # A dict's outputs are named by its keys, as TensorFlow names them.
    x2 = np.array([1.5, -4.0], np.float32)
    got, mine_got = theirs.signatures["named"](x=tf.constant(x2)), mine.signatures["named"](x=x2)
    assert sorted(got) == sorted(mine_got) == ["total", "twice"]
    for key in ("total", "twice"):
        _close(got[key].numpy(), named(kiln.constant(x2))[key].numpy())
        _close(mine_got[key].numpy(), got[key].numpy())
    x = RNG.standard_normal(7).astype(np.float32)
    want = scale(kiln.constant(x)).numpy()
    _close(theirs.signatures["serving_default"](x=tf.constant(x))["output_0"].numpy(), want)
    _close(mine.signatures["serving_default"](x=x)["output_0"].numpy(), want)
    a = RNG.integers(-9, 9, (2, 3)).astype(np.int32)
    b = RNG.integers(-9, 9, 3).astype(np.int32)
    want = [t.numpy() for t in mix(kiln.constant(a), kiln.constant(b))]
    got = theirs.signatures["mix"](a=tf.constant(a), b=tf.constant(b))
    assert sorted(got) == ["output_0", "output_1"]
    _close(got["output_0"].numpy(), want[0])
    _close(got["output_1"].numpy(), want[1])
    spec = theirs.signatures["mix"].structured_input_signature[1]
    assert sorted(spec) == ["a", "b"] and spec["a"].shape.as_list() == [2, 3] and spec["a"].dtype == tf.int32


def _trained_mlp():
    class MLP(kiln.Module):
        def __init__(self):
            super().__init__()
            self.w1 = kiln.Variable(RNG.standard_normal((4, 16)).astype(np.float32) * 0.5, name="hidden/kernel")
            self.b1 = kiln.Variable(np.zeros(16, np.float32), name="hidden/bias")
            self.w2 = kiln.Variable(RNG.standard_normal((16, 3)).astype(np.float32) * 0.5, name="out/kernel")

        @kiln.function(input_signature=[kiln.TensorSpec([None, 4], kiln.float32, name="x")])
        def __call__(self, x):
            return kiln.matmul(kiln.nn.relu(kiln.matmul(x, self.w1) + self.b1), self.w2)

    model = MLP()
    x = RNG.standard_normal((32, 4)).astype(np.float32)
    y = RNG.integers(0, 3, 32).astype(np.int32)
    variables = [model.w1, model.b1, model.w2]
    for _ in range(5):
        with kiln.GradientTape() as tape:
            loss = kiln.reduce_mean(kiln.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=model(x)))
        for v, g in zip(variables, tape.gradient(loss, variables)):
            v.assign_sub(0.05 * g)
    return model


def test_a_trained_mlp_with_variables(tf, tmp_path):
    model = _trained_mlp()
    theirs, mine, _ = _save_and_load(tf, tmp_path, model)
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    want = model(kiln.constant(x)).numpy()
    _close(theirs.signatures["serving_default"](x=tf.constant(x))["output_0"].numpy(), want, ulps=4)
    _close(mine.signatures["serving_default"](x=x)["output_0"].numpy(), want)
    # The variables restore with their values and names, at their attributes' paths, as
    # TensorFlow saves a tf.Module's.
    for loaded in (theirs, mine):
        np.testing.assert_array_equal(loaded.w1.numpy(), model.w1.numpy())
        np.testing.assert_array_equal(loaded.w2.numpy(), model.w2.numpy())
        assert loaded.b1.name == "hidden/bias:0"
    assert sorted(v.name for v in mine.variables) == ["hidden/bias:0", "hidden/kernel:0", "out/kernel:0"]


def test_control_flow_bodies_are_library_functions(tf, tmp_path):
    @kiln.function(input_signature=[kiln.TensorSpec([], kiln.float32, name="x"),
                                    kiln.TensorSpec([], kiln.int32, name="n")])
    def flow(x, n):
        y = kiln.cond(x > 0, lambda: x * 2.0, lambda: -x)
        _, acc = kiln.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * 1.5 + y), (0, y))
        return acc

    theirs, mine, _ = _save_and_load(tf, tmp_path, flow)
    for x, n in [(1.5, 0), (1.5, 4), (-2.0, 3)]:
        want = flow(kiln.constant(np.float32(x)), kiln.constant(np.int32(n))).numpy()
        got = theirs.signatures["serving_default"](x=tf.constant(np.float32(x)), n=tf.constant(np.int32(n)))
        _close(got["output_0"].numpy(), want)
        _close(mine.signatures["serving_default"](x=np.float32(x), n=np.int32(n))["output_0"].numpy(), want)


def test_saved_model_cli_describes_it(tf, tmp_path):
    _, _, path = _save_and_load(tf, tmp_path, _trained_mlp())
    cli = os.path.join(os.path.dirname(sys.executable), "saved_model_cli")
    if not os.path.exists(cli):
        pytest.skip("saved_model_cli is not installed beside this Python")
    out = subprocess.run([cli, "show", "--dir", path, "--all"], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert out.returncode == 0, out.stderr
    assert "signature_def['serving_default']" in out.stdout
    assert "inputs['x'] tensor_info:" in out.stdout and "shape: (-1, 4)" in out.stdout
    assert "outputs['output_0'] tensor_info:" in out.stdout


def test_tensorflow_1_loaders_restore_the_variables(tf, tmp_path):
    # A Session loader (what TF Serving and `saved_model_cli run` use) restores variables by
    # running the saver_def's restore call, not through the object graph.
    model = _trained_mlp()
    _, _, path = _save_and_load(tf, tmp_path, model)
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    want = model(kiln.constant(x)).numpy()
    prefix = str(tmp_path / "resaved" / "ckpt")
    with tf.Graph().as_default(), tf.compat.v1.Session() as sess:
        meta = tf.compat.v1.saved_model.loader.load(sess, ["serve"], path)
        sig = meta.signature_def["serving_default"]
        got = sess.run(sig.outputs["output_0"].name, {sig.inputs["x"].name: x})
        _close(got, want, ulps=16)  # TensorFlow's sums in its kernels' order (oneDNN's or Eigen's)
        # The saver_def also saves: a TensorFlow 2 checkpoint with the object graph.
        tf.compat.v1.train.Saver(saver_def=meta.saver_def).save(sess, prefix, write_meta_graph=False)
    reader = tf.train.load_checkpoint(prefix)
    np.testing.assert_array_equal(reader.get_tensor("w1/.ATTRIBUTES/VARIABLE_VALUE"), model.w1.numpy())
    np.testing.assert_array_equal(kiln.train.load_variable(prefix, "w2/.ATTRIBUTES/VARIABLE_VALUE"),
                                  model.w2.numpy())
    assert "_CHECKPOINTABLE_OBJECT_GRAPH" in dict(tf.train.list_variables(prefix))
    cli = os.path.join(os.path.dirname(sys.executable), "saved_model_cli")
    if not os.path.exists(cli):
        pytest.skip("saved_model_cli is not installed beside this Python")
    np.save(str(tmp_path / "x.npy"), x)
    out = subprocess.run([cli, "run", "--dir", path, "--tag_set", "serve", "--signature_def", "serving_default",
                          "--inputs", "x=" + str(tmp_path / "x.npy"), "--outdir", str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=300, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert out.returncode == 0, out.stderr
    _close(np.load(str(tmp_path / "out" / "output_0.npy")), want, ulps=16)


def test_bad_arguments(tmp_path):
    @kiln.function
    def no_signature(x):
        return x + 1.0

    with pytest.raises(ValueError, match="without an input_signature"):
        kiln.saved_model.save(None, str(tmp_path / "a"), signatures=no_signature)
    with pytest.raises(ValueError, match="Expected a TensorFlow function"):
        kiln.saved_model.save(None, str(tmp_path / "b"), signatures={"s": 3})
    with pytest.raises(ValueError, match="Expected an object of type `Trackable`"):
        kiln.saved_model.save(object(), str(tmp_path / "c"))


def test_variables_inside_branches_and_loops(tf, tmp_path):
    class Recurrent(kiln.Module):
        def __init__(self):
            super().__init__()
            self.w = kiln.Variable(RNG.standard_normal((3, 3)).astype(np.float32) * 0.5, name="cell/w")
            self.scale = kiln.Variable(np.float32(1.5), name="scale")
            self.steps = kiln.Variable(np.int32(0), name="steps")

        @kiln.function(input_signature=[kiln.TensorSpec([1, 3], kiln.float32, name="h"),
                                        kiln.TensorSpec([], kiln.int32, name="n")])
        def __call__(self, h, n):
            def body(i, h):
                self.steps.assign_add(1)  # a variable written inside the loop
                return i + 1, kiln.tanh(kiln.matmul(h, self.w))

            _, h = kiln.while_loop(lambda i, h: i < n, body, (0, h))
            return kiln.cond(kiln.reduce_sum(h) > 0, lambda: h * self.scale, lambda: h - self.scale)

    model = Recurrent()
    h = RNG.standard_normal((1, 3)).astype(np.float32)
    want = model(kiln.constant(h), kiln.constant(np.int32(4))).numpy()
    model.steps.assign(0)
    theirs, mine, _ = _save_and_load(tf, tmp_path, model)
    got = theirs.signatures["serving_default"](h=tf.constant(h), n=tf.constant(np.int32(4)))["output_0"].numpy()
    _close(got, want, ulps=8)  # tanh and the 3-term sums are TensorFlow's
    assert int(theirs.steps.numpy()) == 4  # the loop's writes reached TensorFlow's variable
    _close(mine.signatures["serving_default"](h=h, n=np.int32(4))["output_0"].numpy(), want)
    _close(mine.signatures["serving_default"](h=h, n=np.int32(2))["output_0"].numpy(),
           model(kiln.constant(h), kiln.constant(np.int32(2))).numpy())
    assert int(mine.steps.numpy()) == 6  # the loaded model's own copy counts its steps


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_sixteen_bit_floats_save_as_tensorflow_reads_them(tf, tmp_path, dtype):
    """A mixed-precision module (16-bit variable, constant and compute, float32 in and out):
    TensorFlow loads kiln's SavedModel and checkpoint and computes what kiln computed."""
    kd = getattr(kiln, dtype)

    class Scaled(kiln.Module):
        def __init__(self):
            super().__init__()
            self.w = kiln.Variable(kiln.cast(kiln.constant([[0.5, -1.25], [2.0, 0.1]]), kd), name="w")

        @kiln.function(input_signature=[kiln.TensorSpec([None, 2], kiln.float32, name="x")])
        def __call__(self, x):
            h = kiln.matmul(kiln.cast(x, kd), self.w) + kiln.constant(1.5, kd)
            return kiln.cast(kiln.nn.relu(h), kiln.float32)

    m = Scaled()
    x = RNG.standard_normal((5, 2)).astype(np.float32)
    want = m(kiln.constant(x)).numpy()
    theirs, mine, path = _save_and_load(tf, tmp_path, m)
    # TensorFlow's bfloat16 product rounds once, as kiln's, on AVX-512 machines, and after each
    # step (a few bfloat16 ulps away) on AVX2-only ones; kiln's own load must be exact.
    theirs_out = theirs.signatures["serving_default"](x=tf.constant(x))["output_0"].numpy()
    if dtype == "bfloat16":
        np.testing.assert_allclose(theirs_out, want, rtol=2**-6, atol=2**-6)
    else:
        _close(theirs_out, want)
    _close(mine.signatures["serving_default"](x=x)["output_0"].numpy(), want)
    reader = tf.train.load_checkpoint(os.path.join(path, "variables", "variables"))
    stored = {k: v for k, v in reader.get_variable_to_dtype_map().items() if "VARIABLE_VALUE" in k}
    assert list(stored.values()) == [getattr(tf, dtype)], stored
