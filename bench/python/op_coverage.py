"""How much of TensorFlow's op registry kiln has: TensorFlow's registered ops by category (the
generated module that wraps each, gen_math_ops -> math), how many kiln registers, and, for the
ops both have, the dtypes TensorFlow registers that kiln has no kernel for.

    PYTHONPATH=python .venv/bin/python bench/python/op_coverage.py
"""
import collections
import importlib
import os
import pkgutil

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def _snake(name):
    import kiln.raw_ops
    return kiln.raw_ops._snake(name)


def tf_ops_by_category():
    import tensorflow as tf
    import tensorflow.python.ops as ops_pkg
    registered = {name for name in dir(tf.raw_ops) if not name.startswith("_")}  # every op TensorFlow registers
    category = {}
    for info in pkgutil.iter_modules(ops_pkg.__path__):
        if not info.name.startswith("gen_") or not info.name.endswith("_ops"):
            continue
        try:
            module = importlib.import_module("tensorflow.python.ops." + info.name)
        except Exception:  # noqa: BLE001: some generated modules need optional parts
            continue
        names = set(dir(module))
        for op in registered:
            if op not in category and (_snake(op) in names or op in names):
                category[op] = info.name[len("gen_"):-len("_ops")]
    for op in registered:
        category.setdefault(op, "other (internal or not wrapped)")
    return category


def main():
    import numpy as np
    from tensorflow.core.framework import types_pb2
    from tensorflow.python.framework import op_def_registry

    import kiln
    catalog = {op["name"]: op for op in kiln._core._op_catalog()}
    category = tf_ops_by_category()
    totals, have = collections.Counter(category.values()), collections.Counter()
    for op, cat in category.items():
        if op in catalog:
            have[cat] += 1
    print("| category | TensorFlow ops | kiln has |")
    print("|---|---|---|")
    for cat, n in sorted(totals.items(), key=lambda kv: -kv[1]):
        print("| %s | %d | %d |" % (cat, n, have[cat]))
    print("| **all** | **%d** | **%d** (+%d kiln-only) |" % (
        sum(totals.values()), sum(have.values()), sum(1 for op in catalog if op not in category)))
    kiln_dtypes = {d.name for d in kiln._dtypes.BY_ENUM}  # numbers, string and variant
    gaps = collections.Counter()
    for name, op in catalog.items():
        op_def = op_def_registry.get(name)
        if op_def is None or not op["dtypes"]:
            continue
        first = next((a.type_attr for a in op_def.input_arg if a.type_attr), None)
        attr = next((a for a in op_def.attr if a.name == first), None)
        if attr is None or not attr.HasField("allowed_values"):
            continue
        for t in attr.allowed_values.list.type:
            tf_name = types_pb2.DataType.Name(t)[3:].lower()
            np_name = {"float": "float32", "double": "float64", "half": "float16"}.get(tf_name, tf_name)
            if np_name not in op["dtypes"]:
                gaps["kiln has the dtype" if np_name in kiln_dtypes else "kiln lacks the dtype"] += 1
    print()
    print("Dtype gaps over the ops both have (TensorFlow registers the op for the dtype, kiln has no kernel): "
          "%d where kiln has the dtype, %d where kiln lacks the dtype altogether." % (
              gaps["kiln has the dtype"], gaps["kiln lacks the dtype"]))
    print("kiln dtypes: %s" % ", ".join(sorted(kiln_dtypes)))
    del np


if __name__ == "__main__":
    main()
