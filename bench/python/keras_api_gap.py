"""Which TensorFlow names Keras uses on its TensorFlow backend, and which of them kiln lacks.

    PYTHONPATH=python .venv/bin/python bench/python/keras_api_gap.py [--all] [--missing]

Reads the installed keras package's sources (tests excluded): every `tf.a.b.c` chain in files that
`import tensorflow as tf`, resolved attribute by attribute against kiln. --all scans all of keras/src
(default: keras/src/backend/tensorflow only). Prints the counts and, with --missing, each missing
name with how often Keras uses it.
"""
import collections
import os
import re
import sys

import keras  # noqa: F401 (only to find its sources; the backend it picks does not matter here)

import kiln

_CHAIN = re.compile(r"(?<![\w.])tf\.([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)")


def _uses(root):
    counts = collections.Counter()
    for folder, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".py") or name.endswith("_test.py"):
                continue
            text = open(os.path.join(folder, name), encoding="utf-8").read()
            if "import tensorflow as tf" not in text:
                continue
            for m in _CHAIN.finditer(text):
                counts[m.group(1)] += 1
    return counts


def _resolve(chain):
    """The longest prefix of `chain` kiln has, and whether it has all of it."""
    obj = kiln
    parts = chain.split(".")
    for i, part in enumerate(parts):
        try:
            obj = getattr(obj, part)
        except Exception:  # noqa: BLE001 (any failure means kiln lacks it)
            return ".".join(parts[:i + 1]), False
        if not isinstance(obj, type(kiln)) and not isinstance(obj, type):
            return ".".join(parts[:i + 1]), True  # a function or value: methods beyond it are not names
    return chain, True


def main(argv):
    src = os.path.join(os.path.dirname(keras.__file__), "src")
    root = src if "--all" in argv else os.path.join(src, "backend", "tensorflow")
    names = collections.Counter()
    for chain, n in _uses(root).items():
        name, _ = _resolve(chain)
        names[name] += n
    missing = {name: n for name, n in names.items() if not _resolve(name)[1]}
    print("keras %s, %s: %d distinct tf names, kiln has %d, lacks %d"
          % (keras.__version__, os.path.relpath(root, src), len(names), len(names) - len(missing), len(missing)))
    if "--missing" in argv:
        for name, n in sorted(missing.items(), key=lambda kv: (-kv[1], kv[0])):
            print("  %4d  tf.%s" % (n, name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
