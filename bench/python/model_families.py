"""Keras model families exported by TensorFlow (`model.export`, random weights) and served by
kiln: does each load, and how far are kiln's outputs from TensorFlow's, at a batch of 0 and
of 64? Prints a markdown table. The pytest suite runs a few of these families
(python/tests/test_model_families.py); this runs them all.

    PYTHONPATH=python .venv/bin/python bench/python/model_families.py [family ...]
"""
import os
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "tests"))

import numpy as np  # noqa: E402

import model_families  # noqa: E402


def main():
    import keras
    import tensorflow as tf

    import kiln
    names = sys.argv[1:] or list(model_families.FAMILIES)
    print("| family | loads | max abs error (batch 64) | max rel error | batch 0 | export s | kiln load s |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            path = os.path.join(tmp, name.replace(" ", "_").replace("/", "_"))
            t0 = time.time()
            model = model_families.FAMILIES[name](keras)
            model.export(path, verbose=False)
            t1 = time.time()
            try:
                mine = kiln.saved_model.load(path)
            except Exception as e:  # noqa: BLE001: the table reports why
                print("| %s | no: %s | | | | %.1f | |" % (name, str(e).split("\n")[0][:120], t1 - t0))
                continue
            t2 = time.time()
            theirs = tf.saved_model.load(path)
            errors = model_families.compare(tf, theirs, mine, model, batch=64)
            try:  # TensorFlow's own CPU kernels (oneDNN convolutions) may fail on an empty batch
                model_families.compare(tf, theirs, mine, model, batch=0)
                empty = "ok, as TensorFlow"
            except Exception:  # noqa: BLE001
                shapes = model_families.kiln_empty_batch(mine, model)
                empty = "kiln ok %s; TensorFlow fails" % sorted(shapes.values())
            print("| %s | yes | %.3g | %.3g | %s | %.1f | %.1f |" % (name, errors[0], errors[1], empty, t1 - t0,
                                                                 t2 - t1))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
