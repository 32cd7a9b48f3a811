"""kiln's op registry against TensorFlow's: every op kiln shares with TensorFlow declares its
attrs with TensorFlow's names, attr types and defaults (the loader fills attrs that
TensorFlow's SavedModels strip with these defaults, so a wrong one would change a model)."""
import pytest

from kiln import _core

tf = pytest.importorskip("tensorflow")
from tensorflow.core.framework import types_pb2  # noqa: E402
from tensorflow.python.framework import op_def_registry  # noqa: E402


def tf_default_text(attr):
    """TensorFlow's default, in the text form kiln's registry uses."""
    if not attr.HasField("default_value"):
        return None
    v = attr.default_value
    kind = v.WhichOneof("value")
    if kind == "i":
        return str(v.i)
    if kind == "b":
        return "true" if v.b else "false"
    if kind == "f":
        return "%.9g" % v.f
    if kind == "type":
        return types_pb2.DataType.Name(v.type)
    if kind == "s":
        return '"%s"' % v.s.decode()
    if kind == "shape":
        return "<unknown>" if v.shape.unknown_rank else "[" + ", ".join(str(d.size) for d in v.shape.dim) + "]"
    if kind == "list":
        return "[" + ", ".join(str(i) for i in v.list.i) + "]"
    return "?" + str(kind)


def kiln_ops():
    return [op for op in _core._registered_ops() if not op[4]]  # internal ops are never saved


def test_kiln_only_ops_say_so():
    # An op TensorFlow lacks must be kiln's own (Kiln*), never a misspelt TensorFlow name.
    missing = [name for name, *_ in kiln_ops() if op_def_registry.get(name) is None]
    assert missing and all(name.startswith("Kiln") for name in missing), missing


@pytest.mark.parametrize("name,attrs", [(op[0], op[1]) for op in kiln_ops()
                                        if op_def_registry.get(op[0]) is not None])
def test_attrs_match_tensorflow(name, attrs):
    tf_attrs = {a.name: a for a in op_def_registry.get(name).attr}
    for attr, kind, default in attrs:
        assert attr in tf_attrs, "%s: kiln attr %r is not TensorFlow's (%s)" % (name, attr, sorted(tf_attrs))
        assert kind == tf_attrs[attr].type, "%s.%s: kiln %s, TensorFlow %s" % (name, attr, kind, tf_attrs[attr].type)
        assert default == tf_default_text(tf_attrs[attr]), "%s.%s default: kiln %s, TensorFlow %s" % (
            name, attr, default, tf_default_text(tf_attrs[attr]))


def test_registry_describes_tfjs_and_state():
    ops = {op[0]: op for op in _core._registered_ops()}
    assert ops["AddV2"][3] and not ops["AddV2"][2]  # TF.js has it; pure
    assert ops["RandomUniform"][2]  # stateful
    assert ops["KilnFusedConv2D"][4]  # internal
