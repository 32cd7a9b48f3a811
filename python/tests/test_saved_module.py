"""A tf.Module saved without signatures and loaded back as an object, as TensorFlow's guides
do it (saved_model, intro_to_modules, basics): kiln saves and both TensorFlow and kiln load;
TensorFlow saves and kiln loads. The loaded object's functions, variables and sub-objects are
compared with TensorFlow's in the same test."""
import numpy as np
import pytest

import kiln

RNG = np.random.default_rng(11)


def _custom_module(m):
    class CustomModule(m.Module):
        def __init__(self):
            super().__init__()
            self.v = m.Variable(1.)

        @m.function
        def __call__(self, x):
            return x * self.v

        @m.function(input_signature=[m.TensorSpec([], m.float32)])
        def mutate(self, new_v):
            self.v.assign(new_v)

    return CustomModule()


def _sequential(m):
    class Dense(m.Module):
        def __init__(self, in_features, out_features, name=None):
            super().__init__(name=name)
            self.w = m.Variable(RNG.standard_normal((in_features, out_features)).astype(np.float32), name="w")
            self.b = m.Variable(np.zeros(out_features, np.float32), name="b")

        def __call__(self, x):
            return m.nn.relu(m.matmul(x, self.w) + self.b)

    class Sequential(m.Module):
        def __init__(self, name=None):
            super().__init__(name=name)
            self.dense_1 = Dense(3, 3)
            self.dense_2 = Dense(3, 2)
            self.extra = [Dense(2, 2), Dense(2, 1)]

        @m.function
        def __call__(self, x):
            y = self.dense_2(self.dense_1(x))
            return self.extra[1](self.extra[0](y))

        @m.function
        def both(self, x, scale=2.0, training=False):
            y = self.dense_1(x) * scale
            return {"out": y if training else -y, "pair": (y, m.reduce_sum(y))}

    return Sequential()


@pytest.mark.parametrize("saver", ["kiln", "tf"])
def test_the_saved_model_guides_module(tf, tmp_path, saver):
    m = kiln if saver == "kiln" else tf
    module = _custom_module(m)
    module(m.constant(0.))
    path = str(tmp_path / "module")
    m.saved_model.save(module, path)
    for lib in (tf, kiln):
        imported = lib.saved_model.load(path)
        assert len(imported.signatures) == 0  # mutate returns nothing: not a default signature
        assert imported(lib.constant(3.)).numpy() == 3
        imported.mutate(lib.constant(2.))
        assert imported(lib.constant(3.)).numpy() == 6
        assert imported(3.).numpy() == 6  # a Python number fits the float32 trace
        assert imported.v.numpy() == 2.0
        # A call that no trace fits is TensorFlow's ValueError.
        with pytest.raises(ValueError, match="Could not find matching concrete function"):
            imported(lib.constant([1., 2.]))


@pytest.mark.parametrize("saver", ["kiln", "tf"])
def test_nested_modules_lists_and_structured_outputs(tf, tmp_path, saver):
    m = kiln if saver == "kiln" else tf
    model = _sequential(m)
    x1 = RNG.standard_normal((1, 3)).astype(np.float32)
    x2 = RNG.standard_normal((2, 2, 3)).astype(np.float32)
    want = [model(m.constant(x1)).numpy(), model(m.constant(x2)).numpy()]
    both = model.both(m.constant(x1))
    both_trained = model.both(m.constant(x1), 3.0, training=True)
    path = str(tmp_path / "model")
    m.saved_model.save(model, path)
    for lib in (tf, kiln):
        loaded = lib.saved_model.load(path)
        assert not isinstance(loaded, type(model))
        np.testing.assert_allclose(loaded(lib.constant(x1)).numpy(), want[0], rtol=1e-6)
        np.testing.assert_allclose(loaded(x2).numpy(), want[1], rtol=1e-6)  # a numpy argument
        got = loaded.both(lib.constant(x1))
        assert sorted(got) == ["out", "pair"] and isinstance(got["pair"], tuple)
        np.testing.assert_allclose(got["out"].numpy(), both["out"].numpy(), rtol=1e-6)
        np.testing.assert_allclose(got["pair"][1].numpy(), both["pair"][1].numpy(), rtol=1e-6)
        got = loaded.both(lib.constant(x1), 3.0, training=True)
        np.testing.assert_allclose(got["out"].numpy(), both_trained["out"].numpy(), rtol=1e-6)
        with pytest.raises(ValueError, match="Could not find matching concrete function"):
            loaded.both(lib.constant(x1), 5.0)  # a Python value it was not traced with
        # Sub-objects, lists of them and their variables are attributes.
        np.testing.assert_array_equal(loaded.dense_1.w.numpy(), model.dense_1.w.numpy())
        np.testing.assert_array_equal(loaded.extra[1].w.numpy(), model.extra[1].w.numpy())
        assert loaded.dense_2.b.name == model.dense_2.b.name


def test_the_basics_guides_integer_module(tf, tmp_path):
    class MyModule(kiln.Module):
        def __init__(self, value):
            self.weight = kiln.Variable(value)

        @kiln.function
        def multiply(self, x):
            return x * self.weight

    mod = MyModule(3)
    mod.multiply(kiln.constant([1, 2, 3]))
    path = str(tmp_path / "saved")
    kiln.saved_model.save(mod, path)
    for lib in (tf, kiln):
        reloaded = lib.saved_model.load(path)
        got = reloaded.multiply(lib.constant([1, 2, 3]))
        assert got.dtype == lib.int32 and got.numpy().tolist() == [3, 6, 9]


def test_a_function_with_an_input_signature_is_traced_for_it(tf, tmp_path):
    class Scaler(kiln.Module):
        def __init__(self):
            self.k = kiln.Variable(np.float32(4.0))

        @kiln.function(input_signature=[kiln.TensorSpec([None], kiln.float32)])
        def __call__(self, x):
            return x * self.k

    path = str(tmp_path / "scaler")
    kiln.saved_model.save(Scaler(), path)  # never called: traced for its signature
    x = np.array([1., 2., 5.], np.float32)
    for lib in (tf, kiln):
        loaded = lib.saved_model.load(path)
        assert list(loaded.signatures) == ["serving_default"]
        assert loaded(lib.constant(x)).numpy().tolist() == [4., 8., 20.]
        assert loaded.signatures["serving_default"](x=lib.constant(x))["output_0"].numpy().tolist() == [4., 8., 20.]


def _lazy_mlp(m):
    """core/mlp_core's export: layers make their variables (random initial values) on their
    first call, inside a nested function, and the model is saved before it was ever called."""
    class Dense(m.Module):
        def __init__(self, out_dim):
            self.out_dim, self.built = out_dim, False

        def __call__(self, x):
            if not self.built:
                self.w = m.Variable(m.random.uniform((x.shape[1], self.out_dim), -1.0, 1.0, seed=22))
                self.b = m.Variable(m.zeros((self.out_dim,)))
                self.built = True
            return m.nn.relu(m.matmul(x, self.w) + self.b)

    class MLP(m.Module):
        def __init__(self, layers):
            self.layers = layers

        @m.function
        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    class Export(m.Module):
        def __init__(self, model):
            self.model = model

        @m.function(input_signature=[m.TensorSpec([None, 6], m.uint8)])
        def __call__(self, x):
            return m.argmax(self.model(m.cast(x, m.float32) / 255), axis=1)

    return Export(MLP([Dense(5), Dense(3)]))


def test_variables_made_in_a_nested_function_at_save_are_saved(tf, tmp_path):
    x = RNG.integers(0, 256, (4, 6)).astype(np.uint8)
    shapes = {}
    for lib in (tf, kiln):
        path = str(tmp_path / lib.__name__)
        export = _lazy_mlp(lib)
        lib.saved_model.save(export, path)  # the first trace makes the variables, and runs their initializers
        shapes[lib] = [v.shape.as_list() for v in export.model.layers[0].trainable_variables]
        want = export(lib.constant(x)).numpy()
        loaded = lib.saved_model.load(path)
        assert loaded(lib.constant(x)).numpy().tolist() == want.tolist()
    assert shapes[kiln] == shapes[tf] == [[5], [6, 5]]  # by attribute name: b, w


def test_bad_objects_and_calls(tf, tmp_path):
    module = _custom_module(kiln)
    module(kiln.constant(0.))
    path = str(tmp_path / "module")
    kiln.saved_model.save(module, path)
    loaded = kiln.saved_model.load(path)
    with pytest.raises(TypeError, match="unexpected keyword argument 'y'"):
        loaded(kiln.constant(1.), y=2)
    with pytest.raises(TypeError, match="missing required argument: 'x'"):
        loaded()
    with pytest.raises(ValueError, match="Could not find matching concrete function"):
        loaded(kiln.constant(1, kiln.int32))  # dtype, as TensorFlow

    class Holder(kiln.Module):
        @kiln.function
        def f(self, x, obj):
            return x

    h = Holder()
    h.f(kiln.constant(1.), object())
    with pytest.raises(ValueError, match="cannot save a function traced with a object argument"):
        kiln.saved_model.save(h, str(tmp_path / "bad"))


def test_save_and_load_options_are_accepted(tf, tmp_path):
    module = _custom_module(kiln)
    module(kiln.constant(1.))
    path = str(tmp_path / "m")
    kiln.saved_model.save(module, path, options=kiln.saved_model.SaveOptions(save_debug_info=True))
    loaded = kiln.saved_model.load(path, options=kiln.saved_model.LoadOptions(allow_partial_checkpoint=True))
    assert loaded(kiln.constant(2.)).numpy() == 2.0
    assert tf.saved_model.load(path)(tf.constant(2.)).numpy() == 2.0
