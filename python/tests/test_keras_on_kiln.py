"""Keras 3 on kiln (kiln.keras, and `import keras` under kiln.as_tensorflow), unmodified, against
the same program on TensorFlow. Keras programs run in fresh interpreters (this process has the
real TensorFlow imported, and Keras would bind to it)."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("keras")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), TF_CPP_MIN_LOG_LEVEL="3",
           KERAS_BACKEND="tensorflow")


def _both(tmp_path, text):
    """(kiln's stdout, TensorFlow's stdout) of one program."""
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(text))
    outs = []
    for prefix in (["-m", "kiln.as_tensorflow"], []):
        p = subprocess.run([sys.executable] + prefix + [str(script)], env=ENV, capture_output=True, text=True,
                           timeout=600, cwd=str(tmp_path))
        assert p.returncode == 0, (prefix, p.stderr[-4000:])
        outs.append(p.stdout)
    return outs


SEED_001 = """
import tensorflow as tf
x = tf.constant([[1.0, 2.0, 3.0]])

class MyModel(tf.keras.Model):
    def __init__(self, keep_probability=0.2):
        super(MyModel, self).__init__()
        self.dense1 = tf.keras.layers.Dense(4)
        self.dense2 = tf.keras.layers.Dense(5)
        self.keep_probability = keep_probability

    @tf.function
    def call(self, inputs, training=True):
        y = self.dense2(self.dense1(inputs))
        if training:
            return tf.nn.dropout(y, self.keep_probability)
        else:
            return y

model = MyModel()
a = model(x, training=True)   # executes a graph, with dropout
b = model(x, training=False)  # executes a graph, without dropout
print(isinstance(a, tf.Tensor), a.shape, a.dtype.name, b.shape, b.dtype.name)
print(len(model.trainable_variables), [tuple(v.shape) for v in model.trainable_variables])
print(bool(tf.reduce_all(model(x, training=False) == b)))
print(str(b).startswith("tf.Tensor([["), str(b).endswith("shape=(1, 5), dtype=float32)"))
"""


def test_seed_001_keras_model_runs_unchanged(tmp_path):
    ours, theirs = _both(tmp_path, SEED_001)
    assert ours == theirs


FIT = """
import json
import numpy as np
import tensorflow as tf
import keras

rng = np.random.default_rng(0)
x = rng.normal(size=(96, 6)).astype("float32")
y = (x @ np.arange(6, dtype="float32")[:, None] > 0).astype("float32")
init = keras.initializers.Constant(0.05)
model = tf.keras.Sequential([
    tf.keras.layers.Input((6,)),
    tf.keras.layers.Dense(8, activation="relu", kernel_initializer=keras.initializers.RandomNormal(seed=1)),
    tf.keras.layers.Dense(1, activation="sigmoid", kernel_initializer=init),
])
model.compile(optimizer=tf.keras.optimizers.OPTIMIZER, loss="binary_crossentropy", metrics=["accuracy"])
history = model.fit(x, y, epochs=3, batch_size=32, shuffle=False, verbose=0)
evaluation = model.evaluate(x, y, verbose=0)
prediction = model.predict(x[:4], verbose=0)
print(json.dumps({"loss": history.history["loss"], "accuracy": history.history["accuracy"],
                  "evaluate": evaluation, "predict": prediction.tolist(),
                  "weights": [w.tolist() for w in model.get_weights()]}))
"""


@pytest.mark.parametrize("optimizer", ["SGD(0.1)", "Adam(0.01)", "AdamW(0.01)", "RMSprop(0.01)"])
def test_sequential_fit_evaluate_predict_match_tensorflow(tmp_path, optimizer):
    ours, theirs = _both(tmp_path, FIT.replace("OPTIMIZER", optimizer))
    ours, theirs = json.loads(ours.splitlines()[-1]), json.loads(theirs.splitlines()[-1])
    for key in ("loss", "evaluate", "predict"):
        np.testing.assert_allclose(np.array(ours[key]), np.array(theirs[key]), rtol=2e-4, atol=2e-5, err_msg=key)
    assert ours["accuracy"] == theirs["accuracy"]
    for a, b in zip(ours["weights"], theirs["weights"]):
        np.testing.assert_allclose(np.array(a), np.array(b), rtol=2e-4, atol=2e-5)


def test_kiln_keras_is_keras_on_kiln():
    """`import kiln as tf; tf.keras` without as_tensorflow: Keras runs on kiln, reprs stay kiln's."""
    code = ("import kiln as tf, sys; keras = tf.keras; m = keras.Sequential([keras.layers.Dense(2)]); "
            "print(m(tf.ones([1, 3])).shape, isinstance(m(tf.ones([1, 3])), tf.Tensor), repr(tf.constant(1))[:13], "
            "sys.modules['tensorflow'] is tf)")
    p = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.strip() == "(1, 2) True <kiln.Tensor: True"


def test_kiln_keras_refuses_next_to_the_real_tensorflow():
    code = "import tensorflow, kiln; kiln.keras"
    p = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True, timeout=300)
    assert p.returncode != 0 and "ImportError: kiln.keras: Keras would run on the real TensorFlow" in p.stderr


def test_func_graph_placeholders_infer_shapes():
    """tf.__internal__.FuncGraph + tf.compat.v1.placeholder: ops build a graph instead of running."""
    import kiln

    with kiln.__internal__.FuncGraph("scratch").as_default():
        x = kiln.compat.v1.placeholder(kiln.float32, [None, 3])
        y = kiln.matmul(x, kiln.ones([3, 5])) + 1.0
        assert not kiln.executing_eagerly()
        assert y.shape.as_list() == [None, 5] and y.dtype == kiln.float32
        s = kiln.compat.v1.sparse_placeholder(kiln.float32, [4, 2])
        assert s.dense_shape.numpy().tolist() == [4, 2] if not s.dense_shape.is_symbolic else True
    assert kiln.executing_eagerly()
    with pytest.raises(Exception):  # the graph is gone: its tensors cannot be used
        kiln.add(y, 1.0)
    with pytest.raises(RuntimeError, match="eager execution"):
        kiln.compat.v1.placeholder(kiln.float32, [2])


def test_func_graphs_nest_and_must_end_in_order():
    import kiln

    outer, inner = kiln.__internal__.FuncGraph("outer"), kiln.__internal__.FuncGraph("inner")
    with outer.as_default():
        a = kiln.compat.v1.placeholder(kiln.int32, [2])
        with inner.as_default():
            b = kiln.compat.v1.placeholder(kiln.int32, None)
            assert (b + 1).shape.rank is None
        assert (a * 2).shape.as_list() == [2]
    assert kiln.executing_eagerly()


def test_tensors_take_attributes_as_tensorflow_tensors_do():
    import kiln

    t = kiln.constant([1.0])
    t._keras_mask = kiln.constant([True])
    assert t._keras_mask.numpy().tolist() == [True]


def test_variable_synchronization_and_aggregation(tf):
    import kiln

    v = kiln.Variable(1.0, synchronization=kiln.VariableSynchronization.ON_READ,
                      aggregation=kiln.VariableAggregation.SUM)
    w = tf.Variable(1.0, synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.SUM)
    assert v.trainable == w.trainable is False
    assert v.synchronization.name == w.synchronization.name and v.aggregation.name == w.aggregation.name
    assert [e.value for e in kiln.VariableAggregation] == [e.value for e in tf.VariableAggregation]
    assert [e.value for e in kiln.VariableSynchronization] == [e.value for e in tf.VariableSynchronization]
    for m in (kiln, tf):
        assert m.Variable(1.0, trainable=True, synchronization=m.VariableSynchronization.ON_READ).trainable
    kiln_error, tf_error = None, None
    with pytest.raises(ValueError) as kiln_error:
        kiln.Variable(1.0, aggregation="sum")
    with pytest.raises(ValueError) as tf_error:
        tf.Variable(1.0, aggregation="sum")
    assert str(kiln_error.value) == str(tf_error.value)


def test_optional_comes_out_of_a_function():
    import kiln

    @kiln.function
    def f(x):
        return kiln.experimental.Optional.from_value({"y": x * 2})

    opt = f(kiln.constant(3))
    assert bool(opt.has_value()) and opt.get_value()["y"].numpy() == 6

    @kiln.function
    def none():
        return kiln.experimental.Optional.empty(kiln.TensorSpec([], kiln.int32))

    assert not bool(none().has_value())
    with pytest.raises(kiln.errors.InvalidArgumentError):
        none().get_value()


def test_optional_is_a_loop_variable_as_keras_steps_per_execution_uses_it():
    """Keras's multi-step train function: a while_loop whose variables are Optionals, the
    element spec of the empty one set while the body is traced."""
    import kiln

    @kiln.function
    def steps(it, n):
        empty = kiln.experimental.Optional.empty(None)

        def body(i, out, nxt):
            def has_next():
                made = kiln.experimental.Optional.from_value(nxt.get_value() * 10)
                empty._element_spec = made.element_spec
                return made

            def no_next():
                out._element_spec = empty._element_spec
                return out

            out = kiln.cond(kiln.logical_and(i < n, nxt.has_value()), has_next, no_next)
            return i + 1, out, it.get_next_as_optional()

        _, final, _ = kiln.while_loop(lambda i, o, x: kiln.logical_and(i < n, x.has_value()), body,
                                      [kiln.constant(0), empty, it.get_next_as_optional()])
        final._element_spec = empty.element_spec
        return final

    # Each call pulls one element past its last step (this body has no guard for that, as
    # Keras's has): elements 0-2, then 3-4 and the end, then only the end.
    it = iter(kiln.data.Dataset.range(5))
    assert steps(it, 2).get_value().numpy() == 10
    assert steps(it, 2).get_value().numpy() == 40
    assert not bool(steps(it, 2).has_value())
    assert steps.experimental_get_tracing_count() == 1
    empty = kiln.experimental.Optional.empty(kiln.TensorSpec([], kiln.int32))
    assert not bool(empty.has_value())
    with pytest.raises(kiln.errors.InvalidArgumentError):
        empty.get_value()


def test_indexed_slices_convert_summing_repeated_rows(tf):
    import kiln

    for m in (kiln, tf):
        s = m.IndexedSlices(m.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), m.constant([0, 2, 0]),
                            m.constant([3, 2]))
        assert m.convert_to_tensor(s).numpy().tolist() == [[6.0, 8.0], [0.0, 0.0], [3.0, 4.0]]


def test_sparse_maximum_minimum(tf):
    import kiln

    def make(m, idx, vals):
        return m.sparse.SparseTensor(idx, m.constant(vals), [2, 3])

    for op in ("maximum", "minimum"):
        results = []
        for m in (kiln, tf):
            a = make(m, [[0, 0], [1, 2]], [-1.0, 4.0])
            b = make(m, [[0, 0], [0, 1]], [2.0, -3.0])
            r = getattr(m.sparse, op)(a, b)
            results.append((r.indices.numpy().tolist(), r.values.numpy().tolist(), r.dense_shape.numpy().tolist()))
        assert results[0] == results[1], (op, results)


@pytest.mark.parametrize("check", ["with_rank(3)", "with_rank_at_least(3)", "with_rank_at_most(1)", "assert_has_rank(3)",
                                   "assert_is_compatible_with([3, 1])", "assert_is_fully_defined()", "with_rank(2)"])
def test_tensor_shape_rank_checks_as_tensorflow(tf, check):
    import kiln

    outcomes = []
    for m in (kiln, tf):
        try:
            outcomes.append(("value", str(eval("s." + check, {"s": m.TensorShape([2, None])}))))
        except ValueError as e:
            outcomes.append(("ValueError", str(e)))
    assert outcomes[0] == outcomes[1]
    assert str(kiln.TensorShape(None).with_rank(2)) == str(tf.TensorShape(None).with_rank(2))


@pytest.mark.parametrize("axis,keepdims,sparse_out", [(None, False, False), (0, False, False), (1, True, False),
                                                      (1, False, True)])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_sparse_reduce_max_ignores_implicit_zeros(tf, axis, keepdims, sparse_out, dtype):
    import kiln

    results = []
    for m in (kiln, tf):
        x = m.sparse.SparseTensor([[0, 0], [0, 2]], m.constant([-7, -2], dtype), [2, 3])
        r = m.sparse.reduce_max(x, axis, keepdims=keepdims, output_is_sparse=sparse_out)
        results.append([r.indices.numpy().tolist(), r.values.numpy().tolist()] if sparse_out else r.numpy().tolist())
    assert results[0] == results[1]


def test_one_trace_serves_every_iterator_of_a_structure():
    """An iterator argument is keyed by its element structure (TensorFlow's IteratorSpec): a new
    iterator each epoch, as Keras's fit passes, does not trace again; another structure does."""
    import kiln

    ds = kiln.data.Dataset.range(5).map(lambda x: x * 2)

    @kiln.function
    def step(it):
        return it.get_next() + 1

    for _ in range(3):
        it = iter(ds)
        assert [int(step(it)) for _ in range(3)] == [1, 3, 5]
    assert step.experimental_get_tracing_count() == 1
    floats = iter(kiln.data.Dataset.range(5).map(lambda x: kiln.cast(x, kiln.float32)))
    assert float(step(floats)) == 1.0 and step.experimental_get_tracing_count() == 2
    it = iter(ds)
    for _ in range(5):
        step(it)
    with pytest.raises(kiln.errors.OutOfRangeError):
        step(it)
    assert "IteratorSpec(TensorSpec(shape=(), dtype=kiln.int64" in step.pretty_printed_concrete_signatures()


@pytest.mark.parametrize("shapes,axes", [(((2, 3), (3, 4)), 1), (((2, 3, 4), (3, 4, 5)), 2), (((2, 3), (4, 5)), 0),
                                         (((2, 3, 4), (4, 3)), [[1, 2], [1, 0]]), (((3,), (3,)), [[0], [0]]),
                                         (((2, 3, 4), (5, 3)), [[-2], [1]])])
def test_tensordot_matches_tensorflow(tf, shapes, axes):
    import kiln

    rng = np.random.default_rng(1)
    a, b = rng.normal(size=shapes[0]).astype("f"), rng.normal(size=shapes[1]).astype("f")
    ours, theirs = kiln.tensordot(a, b, axes), tf.tensordot(a, b, axes)
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)
    traced = kiln.function(lambda x, y: kiln.tensordot(x, y, axes))(a, b)
    np.testing.assert_allclose(traced.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fmt", ["NCHW", "NC..", "NHWC", "N..C"])
def test_bias_add_data_formats(tf, fmt):
    import kiln

    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    bias = np.arange(3 if fmt.startswith("NC") else 5, dtype=np.float32)
    theirs = tf.nn.bias_add(x, bias, data_format=fmt)
    np.testing.assert_array_equal(kiln.nn.bias_add(x, bias, data_format=fmt).numpy(), theirs.numpy())


@pytest.mark.parametrize("rate,noise_shape,seed", [(0.4, None, [1, 2]), (0.5, [4, 1], [3, 4]), (0.0, None, [5, 6])])
def test_stateless_dropout_is_tensorflows_bit_for_bit(tf, rate, noise_shape, seed):
    """Keras's TensorFlow backend drops out with this op: the same seed drops the same units."""
    import kiln

    x = np.arange(1, 25, dtype=np.float32).reshape(4, 6)
    theirs = tf.nn.experimental.stateless_dropout(x, rate, seed=seed, noise_shape=noise_shape).numpy()
    ours = kiln.nn.experimental.stateless_dropout(x, rate, seed=seed, noise_shape=noise_shape).numpy()
    np.testing.assert_array_equal(ours, theirs)
    with pytest.raises(ValueError):
        kiln.nn.experimental.stateless_dropout(x, 1.0, seed=seed)


SAVE = """
import json, sys
import numpy as np
import tensorflow as tf
import keras

path, mode = sys.argv[1], sys.argv[2]
x = np.linspace(-1, 1, 24, dtype="float32").reshape(8, 3)
if mode == "save":
    model = keras.Sequential([keras.layers.Input((3,)), keras.layers.Dense(4, activation="tanh"),
                              keras.layers.Dense(2)])
    model.compile(optimizer="adam", loss="mse")
    model.fit(x, x[:, :2] * 2, epochs=2, batch_size=4, verbose=0)
    model.save(path)
else:
    model = keras.models.load_model(path)
print(json.dumps(model.predict(x, verbose=0).tolist()))
"""


@pytest.mark.parametrize("saver,loader", [("kiln", "tensorflow"), ("tensorflow", "kiln")])
def test_keras_files_move_between_tensorflow_and_kiln(tmp_path, saver, loader):
    """model.save("m.keras") on one library, keras.models.load_model on the other: same predictions."""
    script = tmp_path / "prog.py"
    script.write_text(SAVE)
    path = str(tmp_path / "m.keras")
    outs = []
    for who, mode in ((saver, "save"), (loader, "load")):
        prefix = ["-m", "kiln.as_tensorflow"] if who == "kiln" else []
        p = subprocess.run([sys.executable] + prefix + [str(script), path, mode], env=ENV, capture_output=True,
                           text=True, timeout=600)
        assert p.returncode == 0, (who, mode, p.stderr[-3000:])
        outs.append(json.loads(p.stdout.splitlines()[-1]))
    np.testing.assert_allclose(np.array(outs[0]), np.array(outs[1]), rtol=1e-5, atol=1e-6)


def test_input_signature_binds_star_args_as_tensorflow(tf):
    """Keras's export wraps `def serving_fn(*args)` with an input_signature: the entries past the
    named parameters are *args."""
    import kiln

    for m in (kiln, tf):
        spec = [m.TensorSpec([None], m.float32), m.TensorSpec([], m.float32)]
        f = m.function(lambda *args: args[0] * args[1], input_signature=spec)
        g = m.function(lambda a, *rest: a * rest[0], input_signature=spec)
        x, y = m.constant([1.0, 2.0]), m.constant(3.0)
        assert f(x, y).numpy().tolist() == g(x, y).numpy().tolist() == [3.0, 6.0]
        assert f.get_concrete_function().structured_outputs.shape.as_list() == [None]
        with pytest.raises((TypeError, ValueError)):
            f(x)


EXPORT = """
import json, sys
import numpy as np
import tensorflow as tf
import keras

path = sys.argv[1]
keras.utils.set_random_seed(3)
x = np.linspace(-1, 1, 40, dtype="float32").reshape(8, 5)
inputs = keras.Input((5,), name="features")
h = keras.layers.Dense(6, activation="relu")(inputs)
h = keras.layers.BatchNormalization()(h)
h = keras.layers.Dropout(0.3)(h)
model = keras.Model(inputs, keras.layers.Dense(2)(h))
model.compile(optimizer="adam", loss="mse")
model.fit(x, x[:, :2], epochs=2, batch_size=4, verbose=0)
model.export(path, verbose=False)
print(json.dumps(model.predict(x, verbose=0).tolist()))
"""


def test_model_export_writes_a_saved_model_tensorflow_serves(tmp_path, tf):
    """model.export(dir) under kiln: TensorFlow's loader reads it, its `serve` endpoint and its
    serving_default signature give Keras's predictions, and its signature and variables are
    named as TensorFlow's export of the same model names them."""
    script = tmp_path / "prog.py"
    script.write_text(EXPORT)
    results = {}
    for who in ("kiln", "tensorflow"):
        prefix = ["-m", "kiln.as_tensorflow"] if who == "kiln" else []
        path = str(tmp_path / who)
        p = subprocess.run([sys.executable] + prefix + [str(script), path], env=ENV, capture_output=True,
                           text=True, timeout=600)
        assert p.returncode == 0, (who, p.stderr[-3000:])
        predicted = np.array(json.loads(p.stdout.splitlines()[-1]), dtype=np.float32)
        loaded = tf.saved_model.load(path)
        x = np.linspace(-1, 1, 40, dtype="float32").reshape(8, 5)
        np.testing.assert_allclose(loaded.serve(x).numpy(), predicted, rtol=1e-5, atol=1e-6)
        sig = loaded.signatures["serving_default"]
        (key,) = sig.structured_input_signature[1]
        served = sig(**{key: tf.constant(x)})
        np.testing.assert_allclose(served["output_0"].numpy(), predicted, rtol=1e-5, atol=1e-6)
        results[who] = (sorted(loaded.signatures), key, sorted(v.name for v in loaded.variables),
                        sorted(v.name for v in loaded.trainable_variables))
    assert results["kiln"] == results["tensorflow"]


def test_concrete_function_variables_as_tensorflow(tf):
    """ConcreteFunction.variables / trainable_variables: what the trace reads or writes, its
    control-flow bodies' included, in order of first use."""
    import kiln

    for m in (kiln, tf):
        a, b = m.Variable(1.0, name="a"), m.Variable(2.0, name="b", trainable=False)
        c = m.Variable(3.0, name="c")

        @m.function
        def f(x):
            if x > 0:
                b.assign_add(1.0)
            return a * x

        cf = f.get_concrete_function(m.constant(1.0))
        assert sorted(v.name for v in cf.variables) == ["a:0", "b:0"], m
        assert [v.name for v in cf.trainable_variables] == ["a:0"], m
        assert all(v is a or v is b for v in cf.variables)
        del c


def test_variables_are_named_under_name_scopes(tf):
    import kiln

    names = []
    for m in (kiln, tf):
        got = []
        with m.name_scope("outer") as outer:
            with m.name_scope("inner") as inner:
                got += [m.Variable(1.0, name="w").name, m.Variable(1.0).name, m.get_current_name_scope()]
            with m.name_scope("abs/") as absolute:
                got += [m.Variable(1.0, name="w").name, absolute]
            got += [outer, inner]
        got += [m.Variable(1.0, name="w").name, m.get_current_name_scope()]
        names.append(got)
    assert names[0] == names[1]


def test_module_is_an_auto_trackable_as_in_tensorflow(tf):
    """tf.Module is an AutoTrackable: libraries that accept Trackables accept it, and the
    tracking bookkeeping does not show among its variables or change their order."""
    import kiln

    for m in (kiln, tf):
        class Net(m.Module):
            def __init__(self):
                super().__init__()
                self.z = m.Module()
                self.z.w = m.Variable(1.0)
                self.a = m.Variable(2.0)
                self.layers = [m.Module(), m.Variable(3.0)]

        net = Net()
        assert isinstance(net, m.__internal__.tracking.AutoTrackable)
        assert [float(v.numpy()) for v in net.variables] == [2.0, 3.0, 1.0], m
        assert len(net.submodules) == 2


APPLICATION = """
import json, sys
import numpy as np
import tensorflow as tf
import keras

path, mode, name = sys.argv[1], sys.argv[2], sys.argv[3]
x = np.random.default_rng(0).uniform(0, 255, size=(2, 64, 64, 3)).astype("float32")
if mode == "build":
    keras.utils.set_random_seed(7)
    make = {"MobileNetV2": lambda: keras.applications.MobileNetV2(weights=None, input_shape=(64, 64, 3), alpha=0.35,
                                                                   classes=10),
            "ResNet50": lambda: keras.applications.ResNet50(weights=None, input_shape=(64, 64, 3), classes=10),
            "DenseNet121": lambda: keras.applications.DenseNet121(weights=None, input_shape=(64, 64, 3),
                                                                   classes=10)}[name]
    model = make()
    model.save(path)
else:
    model = keras.models.load_model(path)
print(json.dumps(model.predict(x, verbose=0).tolist()))
"""


@pytest.mark.parametrize("name", ["MobileNetV2", "ResNet50", "DenseNet121"])
def test_keras_applications_build_and_predict_as_on_tensorflow(tmp_path, name):
    """keras.applications models build on kiln (weights=None) and, given TensorFlow's weights
    (the same .keras file), predict what TensorFlow predicts."""
    script = tmp_path / "prog.py"
    script.write_text(APPLICATION)
    outs = {}
    for who, mode, path in (("kiln", "build", "kiln.keras"), ("tensorflow", "build", "tf.keras"),
                            ("kiln", "load", "tf.keras")):
        prefix = ["-m", "kiln.as_tensorflow"] if who == "kiln" else []
        p = subprocess.run([sys.executable] + prefix + [str(script), str(tmp_path / path), mode, name], env=ENV,
                           capture_output=True, text=True, timeout=900)
        assert p.returncode == 0, (who, mode, p.stderr[-3000:])
        outs[who, mode] = np.array(json.loads(p.stdout.splitlines()[-1]))
    assert outs["kiln", "build"].shape == (2, 10)
    np.testing.assert_allclose(outs["kiln", "build"].sum(axis=1), 1.0, rtol=1e-5)  # softmax rows
    np.testing.assert_allclose(outs["kiln", "load"], outs["tensorflow", "build"], rtol=1e-4, atol=1e-5)


MIXED = """
import json, sys
import numpy as np
import tensorflow as tf
import keras

keras.mixed_precision.set_global_policy(sys.argv[1])
keras.utils.set_random_seed(5)
rng = np.random.default_rng(0)
x = rng.normal(size=(64, 8)).astype("float32")
y = (x[:, :1] > 0).astype("float32")
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"),
                          keras.layers.Dense(1, activation="sigmoid", dtype="float32")])
model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
history = model.fit(x, y, epochs=3, batch_size=16, verbose=0)
print(json.dumps({"compute": model.layers[0].compute_dtype, "variable": model.layers[0].variable_dtype,
                  "out": str(model(x[:2]).dtype), "loss": history.history["loss"]}))
"""


@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
def test_mixed_precision_policies_fit_as_on_tensorflow(tmp_path, policy):
    script = tmp_path / "prog.py"
    script.write_text(MIXED)
    outs = []
    for prefix in (["-m", "kiln.as_tensorflow"], []):
        p = subprocess.run([sys.executable] + prefix + [str(script), policy], env=ENV, capture_output=True,
                           text=True, timeout=600)
        assert p.returncode == 0, (prefix, p.stderr[-3000:])
        outs.append(json.loads(p.stdout.splitlines()[-1]))
    ours, theirs = outs
    assert (ours["compute"], ours["variable"], ours["out"]) == (theirs["compute"], theirs["variable"], theirs["out"])
    # Same weights and data; half-precision arithmetic may round differently.
    np.testing.assert_allclose(ours["loss"], theirs["loss"], rtol=2e-2, atol=2e-3)
