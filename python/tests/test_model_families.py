"""Keras model families exported by TensorFlow and served by kiln: each loads, and its outputs
match TensorFlow's for a batch of 64 and hold a batch of 0. A subset that covers the ops each
family brought (depthwise and grouped convolutions, padding, captured constants, gelu's erf,
einsum attention, transposed convolutions, resizing, the TensorList loops of recurrent layers,
float16 and bfloat16 compute);
bench/python/model_families.py runs all families and prints the table."""
import pytest

import kiln
import model_families

keras = pytest.importorskip("keras")

FAMILIES = ["MobileNetV2", "EfficientNetB0", "ConvNeXtTiny", "Transformer encoder", "Conv2DTranspose + resizing",
            "Normalization + swish", "Conv1D text", "uint8 images", "LSTM text", "GRU text", "mixed float16 CNN", "mixed bfloat16 CNN"]
# Families that compute in a 16-bit float: both sides round each op's result to it, but not
# at the same points (kiln accumulates a convolution or matmul in float32 and rounds once), so
# outputs agree to a few units of that float's precision (float16 2^-10, bfloat16 2^-7).
TOLERANCE = {"mixed float16 CNN": 4 * 2.0**-10, "mixed bfloat16 CNN": 4 * 2.0**-7}


@pytest.mark.parametrize("name", FAMILIES)
def test_family_loads_and_matches_tensorflow(tf, tmp_path, name):
    model = model_families.FAMILIES[name](keras)
    path = str(tmp_path / "model")
    model.export(path, verbose=False)
    mine, theirs = kiln.saved_model.load(path), tf.saved_model.load(path)
    worst_abs, worst_rel = model_families.compare(tf, theirs, mine, model, batch=64)
    assert worst_rel < TOLERANCE.get(name, 1e-4), (worst_abs, worst_rel)
    shapes = model_families.kiln_empty_batch(mine, model)
    assert shapes and all(s[0] == 0 for s in shapes.values()), shapes
