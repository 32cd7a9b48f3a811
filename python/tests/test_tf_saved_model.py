"""kiln serves SavedModels that TensorFlow wrote. Each model is made by TensorFlow in the
test (never a committed binary), loaded by both, and called with the same inputs: the outputs
must agree (bit for bit where the same arithmetic runs; float products and sums may round
differently, so those compare within a few ulps)."""
import os
import subprocess

import numpy as np
import pytest

import kiln

import keras_models

RNG = np.random.default_rng(3)


def _tf_module_mlp(tf):
    class MLP(tf.Module):
        def __init__(self):
            self.w1 = tf.Variable(RNG.standard_normal((3, 8)).astype(np.float32), name="w1")
            self.b1 = tf.Variable(RNG.standard_normal(8).astype(np.float32), name="b1")
            self.w2 = tf.Variable(RNG.standard_normal((8, 2)).astype(np.float32), name="w2")

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
        def __call__(self, x):
            return tf.matmul(tf.nn.relu(tf.matmul(x, self.w1) + self.b1), self.w2)

    return MLP()


def _both(tf, tmp_path, module, signatures=None):
    path = str(tmp_path / "model")
    tf.saved_model.save(module, path, signatures=signatures)
    return tf.saved_model.load(path), kiln.saved_model.load(path), path


def _close(a, b, ulps=4):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.dtype.kind == "f":
        np.testing.assert_array_max_ulp(a, b, maxulp=ulps)
    else:
        np.testing.assert_array_equal(a, b)


def test_a_module_with_variables(tf, tmp_path):
    theirs, mine, _ = _both(tf, tmp_path, _tf_module_mlp(tf))
    assert list(mine.signatures) == list(theirs.signatures) == ["serving_default"]
    for batch in (1, 5):
        x = RNG.standard_normal((batch, 3)).astype(np.float32)
        want = theirs.signatures["serving_default"](x=tf.constant(x))
        got = mine.signatures["serving_default"](x=x)
        assert sorted(got) == sorted(want) == ["output_0"]
        _close(got["output_0"].numpy(), want["output_0"].numpy())
    # The variables come back with their values, at their attributes.
    for name in ("w1", "b1", "w2"):
        np.testing.assert_array_equal(getattr(mine, name).numpy(), getattr(theirs, name).numpy())
    assert len(mine.variables) == 3
    spec = mine.signatures["serving_default"].structured_input_signature[1]["x"]
    assert spec.shape.as_list() == [None, 3] and spec.dtype == kiln.float32


def test_control_flow_and_several_outputs(tf, tmp_path):
    class Flow(tf.Module):
        def __init__(self):
            self.scale = tf.Variable(2.0)

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="x"),
                                      tf.TensorSpec([], tf.int32, name="n")])
        def __call__(self, x, n):
            y = tf.cond(tf.reduce_sum(x) > 0, lambda: x * self.scale, lambda: -x)
            _, y = tf.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * 0.5 + 1.0), [tf.constant(0), y])
            return {"y": y, "count": n * 2}

    theirs, mine, _ = _both(tf, tmp_path, Flow())
    for x, n in [([1.0, -2.0, 3.0], 3), ([-1.0, -2.0], 0), ([4.0], 7)]:
        want = theirs.signatures["serving_default"](x=tf.constant(x), n=tf.constant(n))
        got = mine.signatures["serving_default"](x=np.array(x, np.float32), n=n)
        assert sorted(got) == sorted(want) == ["count", "y"]
        for key in want:
            _close(got[key].numpy(), want[key].numpy(), ulps=0)


def test_a_while_loop_that_uses_and_updates_variables(tf, tmp_path):
    class Loop(tf.Module):
        def __init__(self):
            self.rate = tf.Variable(0.75)
            self.calls = tf.Variable(0, dtype=tf.int64)

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="x"),
                                      tf.TensorSpec([], tf.int32, name="n")])
        def __call__(self, x, n):
            def body(i, y):
                self.calls.assign_add(1)
                return i + 1, y * self.rate + x

            _, y = tf.while_loop(lambda i, y: i < n, body, [tf.constant(0), x])
            return y

    theirs, mine, _ = _both(tf, tmp_path, Loop())
    for x, n in [([1.0, -2.0], 3), ([0.5], 0), ([4.0, 1.0, 2.0], 5)]:
        want = theirs.signatures["serving_default"](x=tf.constant(x), n=tf.constant(n))["output_0"]
        got = mine.signatures["serving_default"](x=np.array(x, np.float32), n=n)["output_0"]
        _close(got.numpy(), want.numpy(), ulps=0)
    assert mine.calls.numpy() == theirs.calls.numpy() == 8  # both counted their own loops


def test_several_signatures_int_and_float(tf, tmp_path):
    class Calc(tf.Module):
        def __init__(self):
            self.offset = tf.Variable(np.array([1, 2, 3], np.int64))

        @tf.function(input_signature=[tf.TensorSpec([3], tf.int64, name="a")])
        def shift(self, a):
            return {"shifted": a + self.offset, "doubled": a * 2}

        @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float64, name="m")])
        def gram(self, m):
            return tf.matmul(m, m, transpose_b=True)

    calc = Calc()
    theirs, mine, _ = _both(tf, tmp_path, calc, signatures={"shift": calc.shift, "gram": calc.gram})
    assert sorted(mine.signatures) == sorted(theirs.signatures) == ["gram", "shift"]
    a = np.array([5, -6, 2**40], np.int64)
    want, got = theirs.signatures["shift"](a=tf.constant(a)), mine.signatures["shift"](a=a)
    for key in want:
        _close(got[key].numpy(), want[key].numpy(), ulps=0)
    m = RNG.standard_normal((4, 3))
    _close(mine.signatures["gram"](m=m)["output_0"].numpy(), theirs.signatures["gram"](m=tf.constant(m))["output_0"].numpy())


def test_calls_that_do_not_fit_raise_tensorflows_classes(tf, tmp_path):
    theirs, mine, _ = _both(tf, tmp_path, _tf_module_mlp(tf))
    mine_sig, their_sig = mine.signatures["serving_default"], theirs.signatures["serving_default"]
    for call in (lambda s, m: s(), lambda s, m: s(x=m.constant([[1.0, 2.0, 3.0]]), y=1)):
        with pytest.raises(TypeError):
            call(their_sig, tf)
        with pytest.raises(TypeError):
            call(mine_sig, kiln)
    with pytest.raises(tf.errors.InvalidArgumentError):
        their_sig(x=tf.constant([[1, 2, 3]]))
    with pytest.raises(kiln.errors.InvalidArgumentError):
        mine_sig(x=kiln.constant([[1, 2, 3]]))


def test_damaged_files_are_errors(tf, tmp_path):
    _, _, path = _both(tf, tmp_path, _tf_module_mlp(tf))
    pb = tmp_path / "model" / "saved_model.pb"
    good = pb.read_bytes()
    pb.write_bytes(good[: len(good) // 2])
    with pytest.raises((kiln.errors.DataLossError, kiln.errors.InvalidArgumentError)):
        kiln.saved_model.load(path)
    pb.write_bytes(good)
    data = next((tmp_path / "model" / "variables").glob("variables.data-*"))
    raw = bytearray(data.read_bytes())
    raw[len(raw) // 2] ^= 0x10
    data.write_bytes(bytes(raw))
    with pytest.raises(kiln.errors.DataLossError):
        kiln.saved_model.load(path)
    (tmp_path / "model" / "variables" / "variables.index").unlink()
    with pytest.raises(kiln.errors.NotFoundError):
        kiln.saved_model.load(path)


def test_a_keras_model_export(tf, tmp_path):
    keras = pytest.importorskip("keras")
    model = keras_models.small_mlp(keras)
    path = str(tmp_path / "keras_mlp")
    model.export(path, verbose=False)
    theirs, mine = tf.saved_model.load(path), kiln.saved_model.load(path)
    assert sorted(mine.signatures) == sorted(theirs.signatures) == ["serve", "serving_default"]
    (name,) = mine.signatures["serving_default"].structured_input_signature[1]
    for batch in (1, 7):
        x = RNG.standard_normal((batch, 8)).astype(np.float32)
        want = theirs.signatures["serving_default"](**{name: tf.constant(x)})["output_0"].numpy()
        got = mine.signatures["serving_default"](**{name: x})["output_0"].numpy()
        _close(got, want, ulps=8)  # matmul, bias, relu, softmax: sums and exp round differently
        np.testing.assert_allclose(model.predict(x, verbose=0), got, rtol=1e-5, atol=1e-7)


def test_ops_kiln_lacks_are_all_named_at_load(tf, tmp_path):
    class Unusual(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="x")])
        def __call__(self, x):
            y = tf.cond(tf.reduce_sum(x) > 0, lambda: tf.math.bessel_i0e(x), lambda: x)
            return tf.math.bessel_i1e(y) + tf.math.igamma(x, x)

    path = str(tmp_path / "unusual")
    tf.saved_model.save(Unusual(), path)
    with pytest.raises(kiln.errors.UnimplementedError) as e:
        kiln.saved_model.load(path)
    text = str(e.value)
    assert "3 op(s) kiln does not have" in text
    for op in ("BesselI0e", "BesselI1e", "Igamma"):
        assert "\n  %s (in " % op in text
    assert "cond_true" in text  # the branch function it appears in
    # `kiln show` describes the model anyway: its signature and what each one lacks.
    cli = os.path.join(os.path.dirname(__file__), "..", "..", "build", "tools", "kiln")
    if not os.path.exists(cli):
        pytest.skip("the kiln program is not built (make build)")
    out = subprocess.run([cli, "show", path], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "kiln cannot serve this SavedModel yet" in out.stdout
    assert "signature 'serving_default': (x: float32 (None,)) -> (output_0: float32 (None,))" in out.stdout
    for op in ("BesselI0e", "BesselI1e", "Igamma"):
        assert "  missing op: %s (in " % op in out.stdout


def test_a_keras_cnn_export(tf, tmp_path):
    keras = pytest.importorskip("keras")
    model = keras_models.small_cnn(keras)
    path = str(tmp_path / "keras_cnn")
    model.export(path, verbose=False)
    theirs, mine = tf.saved_model.load(path), kiln.saved_model.load(path)
    (name,) = mine.signatures["serving_default"].structured_input_signature[1]
    for batch in (1, 4):
        x = RNG.standard_normal((batch, 12, 12, 3)).astype(np.float32)
        want = theirs.signatures["serving_default"](**{name: tf.constant(x)})["output_0"].numpy()
        got = mine.signatures["serving_default"](**{name: x})["output_0"].numpy()
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)  # conv sums round differently


def test_batch_norm_and_relu6_as_a_served_model_runs_them(tf, tmp_path):
    # Keras 3's BatchNormalization layer computes its own moments; FusedBatchNormV3 is what
    # TF-written (and converted TF1) inference graphs hold. is_training=False: the statistics given.
    class Normalized(tf.Module):
        def __init__(self):
            super().__init__()
            self.scale = tf.Variable(RNG.uniform(0.5, 2, 5).astype(np.float32))
            self.offset = tf.Variable(RNG.uniform(-1, 1, 5).astype(np.float32))
            self.mean = tf.Variable(RNG.uniform(-1, 1, 5).astype(np.float32))
            self.variance = tf.Variable(RNG.uniform(0.01, 3, 5).astype(np.float32))

        @tf.function(input_signature=[tf.TensorSpec([None, 4, 3, 5], tf.float32, name="x")])
        def __call__(self, x):
            y, mean, variance, _, _, _ = tf.raw_ops.FusedBatchNormV3(
                x=x, scale=self.scale, offset=self.offset, mean=self.mean, variance=self.variance,
                epsilon=0.001, is_training=False)
            return {"y": tf.nn.relu6(y * 3.0), "mean": mean, "variance": variance}

    path = str(tmp_path / "normalized")
    module = Normalized()
    tf.saved_model.save(module, path)
    model_stats = type("Stats", (), {k: getattr(module, k).numpy().astype(np.float64)
                                     for k in ("scale", "offset", "mean", "variance")})
    theirs, mine = tf.saved_model.load(path), kiln.saved_model.load(path)
    assert "FusedBatchNormV3" in _op_types(tf, path) and "Relu6" in _op_types(tf, path)
    for batch in (1, 6):
        x = (RNG.standard_normal((batch, 4, 3, 5)) * 3).astype(np.float32)
        want = theirs.signatures["serving_default"](x=tf.constant(x))
        got = mine.signatures["serving_default"](x=x)
        assert sorted(got) == sorted(want) == ["mean", "variance", "y"]
        # Within a few ulps of the terms summed (not of y, which can cancel to near zero): TF's
        # oneDNN kernel folds mean into the shift and fuses multiply-adds, kiln rounds each step.
        m = model_stats
        terms = np.abs((x - m.mean) / np.sqrt(m.variance + 0.001) * m.scale) + np.abs(m.offset)
        np.testing.assert_array_less(np.abs(got["y"].numpy() - want["y"].numpy()), 3 * 4 * 2**-23 * terms + 1e-30)
        for k in ("mean", "variance"):
            np.testing.assert_array_equal(got[k].numpy(), want[k].numpy())


def test_batch_norm_in_training_mode_is_refused_at_load(tf, tmp_path):
    class Training(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([2, 2, 2, 3], tf.float32, name="x")])
        def __call__(self, x):
            c = tf.ones([3])
            return tf.raw_ops.FusedBatchNormV3(x=x, scale=c, offset=c, mean=c, variance=c, is_training=True)[0]

    path = str(tmp_path / "training")
    tf.saved_model.save(Training(), path)
    with pytest.raises(kiln.errors.UnimplementedError, match="is_training=true is not supported by kiln"):
        kiln.saved_model.load(path)


def _op_types(tf, path):
    """Every op type in a SavedModel's functions, read with TensorFlow's own protos."""
    from tensorflow.core.protobuf import saved_model_pb2
    sm = saved_model_pb2.SavedModel()
    with open(os.path.join(path, "saved_model.pb"), "rb") as f:
        sm.ParseFromString(f.read())
    return {n.op for fn in sm.meta_graphs[0].graph_def.library.function for n in fn.node_def}
