"""Keras model families as users build them (applications with random weights, recurrent and
attention text models, preprocessing layers), for the export-and-serve tests and the
bench/python/model_families.py table. Each takes the keras module and returns a model."""
import numpy as np


def _text(keras, middle):
    layers = keras.layers
    return keras.Sequential([keras.Input((20,), dtype="int32"), layers.Embedding(100, 16), middle,
                             layers.Dense(2)])


def _transformer_encoder(keras):
    layers = keras.layers
    inputs = keras.Input((10, 16))
    x = layers.LayerNormalization()(layers.MultiHeadAttention(2, 8)(inputs, inputs) + inputs)
    ffn = layers.Dense(16)(layers.Dense(32, activation="gelu")(x))
    x = layers.LayerNormalization()(ffn + x)
    return keras.Model(inputs, layers.GlobalAveragePooling1D()(x))


def _upsampling(keras):
    layers = keras.layers
    return keras.Sequential([keras.Input((8, 8, 3)), layers.Conv2DTranspose(4, 3, strides=2, padding="same"),
                             layers.UpSampling2D(interpolation="bilinear"),
                             layers.Resizing(10, 10, interpolation="bicubic"), layers.UpSampling2D(),
                             layers.Flatten(), layers.Dense(2)])


def _normalized(keras):
    layers = keras.layers
    norm = layers.Normalization(mean=[1.0, 2.0, 3.0, 4.0], variance=[1.0, 2.0, 3.0, 4.0])
    return keras.Sequential([keras.Input((4,)), norm, layers.Dense(8, activation="swish"), layers.Dense(2)])


def _uint8_images(keras):
    layers = keras.layers
    return keras.Sequential([keras.Input((8, 8, 3), dtype="uint8"), layers.Rescaling(1 / 255.0),
                             layers.Conv2D(4, 3, activation="relu"), layers.Flatten(), layers.Dense(2)])


def _mixed_precision(policy):
    """A small CNN whose layers compute in a 16-bit float (Keras's mixed precision: float32
    variables cast to the compute dtype), with a float32 softmax as Keras recommends."""
    def make(keras):
        layers = keras.layers
        return keras.Sequential([
            keras.Input((16, 16, 3)), layers.Conv2D(8, 3, activation="relu", dtype=policy),
            layers.BatchNormalization(dtype=policy), layers.MaxPooling2D(dtype=policy), layers.Flatten(dtype=policy),
            layers.Dense(16, activation="gelu", dtype=policy), layers.LayerNormalization(dtype=policy),
            layers.Dense(10, dtype=policy), layers.Activation("softmax", dtype="float32")])
    return make


def _app(name, size=32, **kwargs):
    def make(keras):
        return getattr(keras.applications, name)(input_shape=(size, size, 3), weights=None, classes=10, **kwargs)
    return make


FAMILIES = {
    "MobileNetV2": _app("MobileNetV2"),
    "MobileNetV3Small": _app("MobileNetV3Small", include_preprocessing=False),
    "EfficientNetB0": _app("EfficientNetB0"),
    "ResNet50": _app("ResNet50"),
    "DenseNet121": _app("DenseNet121"),
    "InceptionV3": _app("InceptionV3", 75),
    "Xception": _app("Xception", 71),
    "ConvNeXtTiny": _app("ConvNeXtTiny"),
    "NASNetMobile": _app("NASNetMobile"),
    "VGG16": _app("VGG16"),
    "Conv1D text": lambda keras: _text(keras, keras.Sequential([keras.layers.Conv1D(8, 3, activation="relu"),
                                                                 keras.layers.GlobalMaxPooling1D()])),
    "LSTM text": lambda keras: _text(keras, keras.layers.LSTM(8)),
    "GRU text": lambda keras: _text(keras, keras.layers.GRU(8)),
    "BiLSTM text": lambda keras: _text(keras, keras.layers.Bidirectional(keras.layers.LSTM(8))),
    "Transformer encoder": _transformer_encoder,
    "Conv2DTranspose + resizing": _upsampling,
    "Normalization + swish": _normalized,
    "uint8 images": _uint8_images,
    "mixed float16 CNN": _mixed_precision("mixed_float16"),
    "mixed bfloat16 CNN": _mixed_precision("mixed_bfloat16"),
}


def example_input(model, batch, seed=0):
    rng = np.random.default_rng(seed)
    spec = model.inputs[0]
    shape = (batch,) + tuple(spec.shape[1:])
    if "uint8" in str(spec.dtype):
        return rng.integers(0, 256, shape).astype(np.uint8)
    if "int" in str(spec.dtype):
        return rng.integers(0, 100, shape).astype(np.int32)
    return rng.standard_normal(shape).astype(np.float32)


def compare(tf, theirs, mine, model, batch):
    """(max abs error, max error relative to the largest output) of kiln against TensorFlow."""
    x = example_input(model, batch)
    (name,) = mine.signatures["serving_default"].structured_input_signature[1]
    want = theirs.signatures["serving_default"](**{name: tf.constant(x)})
    got = mine.signatures["serving_default"](**{name: x})
    worst_abs, worst_rel = 0.0, 0.0
    assert sorted(want) == sorted(got)
    for key in want:
        w, g = want[key].numpy(), got[key].numpy()
        assert w.shape == g.shape and w.dtype == g.dtype, (key, w.shape, g.shape, w.dtype, g.dtype)
        if w.size:
            err = float(np.max(np.abs(w.astype(np.float64) - g)))
            worst_abs = max(worst_abs, err)
            worst_rel = max(worst_rel, err / max(float(np.max(np.abs(w))), 1e-30))
    return worst_abs, worst_rel


def kiln_empty_batch(mine, model):
    """kiln's outputs for a batch of 0: their shapes (each with a leading 0)."""
    x = example_input(model, 0)
    (name,) = mine.signatures["serving_default"].structured_input_signature[1]
    got = mine.signatures["serving_default"](**{name: x})
    return {key: tuple(v.shape) for key, v in got.items()}
