"""Crafted SavedModels, one per class of TensorFlow's loader advisories (CVE list in
../shared/research/savedmodel.md): TensorFlow writes a real model during the test, the test
damages one thing with TensorFlow's own protos (or bytes), and kiln must refuse it with a typed
error quickly, or, for parts kiln never runs (the saver functions, the init op), load and serve
it unchanged. `python python/tests/test_crafted_savedmodels.py` prints the table with the time
each refusal took."""
import os
import shutil
import sys
import time

import numpy as np
import pytest

import kiln

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
X = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], np.float32)
BOUND_SECONDS = 5.0  # a refusal that takes longer is a finding (the slowest seen: well under 0.1 s)


def _write_base(tf, path):
    class Model(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")],
                     autograph=False)
        def __call__(self, x):
            y = tf.matmul(x, self.w)
            y = tf.cond(tf.reduce_sum(x) > 0, lambda: y * 2.0, lambda: y - 1.0)
            _, y = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a + 1.0), (tf.constant(0), y))
            return y

    tf.saved_model.save(Model(), path)


# --- editing helpers: TensorFlow's protos ---------------------------------------------------

def _protos():
    from tensorflow.core.protobuf import saved_model_pb2
    return saved_model_pb2


def _edit(path, fn):
    pb = os.path.join(path, "saved_model.pb")
    sm = _protos().SavedModel()
    with open(pb, "rb") as f:
        sm.ParseFromString(f.read())
    fn(sm.meta_graphs[0])
    with open(pb, "wb") as f:
        f.write(sm.SerializeToString())


def _fn(mg, prefix):
    return next(f for f in mg.graph_def.library.function if f.signature.name.startswith(prefix))


def _node(fdef, name):
    return next(n for n in fdef.node_def if n.name == name)


def _edit_node(prefix, name, change):
    return lambda mg: change(_node(_fn(mg, prefix), name))


def _add_node(prefix, build):
    return lambda mg: build(_fn(mg, prefix).node_def.add(), _fn(mg, prefix))


def _call_node(node, target, fdef):
    node.name, node.op = "again", "PartitionedCall"
    node.input.append(fdef.signature.input_arg[0].name)
    node.attr["f"].func.name = target
    node.attr["Tin"].list.type.append(1)
    node.attr["Tout"].list.type.append(1)


def _mutual_recursion(mg):
    t, f = _fn(mg, "cond_true_"), _fn(mg, "cond_false_")
    _call_node(t.node_def.add(), f.signature.name, t)
    _call_node(f.node_def.add(), t.signature.name, f)


def _fill_from_data(mg):
    # Fill's shape comes from a constant: 2^20 x 2^20 x 2^20 floats (CVE-2022-23580's class).
    fdef = _fn(mg, "__inference___call__")
    dims, value, fill, total, add = (fdef.node_def.add() for _ in range(5))
    dims.name, dims.op = "dims", "Const"
    dims.attr["dtype"].type = 3
    t = dims.attr["value"].tensor
    t.dtype = 3
    t.tensor_shape.dim.add().size = 3
    t.int_val.extend([1 << 20] * 3)
    value.name, value.op = "one", "Const"
    value.attr["dtype"].type = 1
    value.attr["value"].tensor.dtype = 1
    value.attr["value"].tensor.float_val.append(1.0)
    fill.name, fill.op = "huge", "Fill"
    fill.input.extend(["dims:output:0", "one:output:0"])
    fill.attr["T"].type = 1
    fill.attr["index_type"].type = 3
    total.name, total.op = "huge_sum", "Sum"
    total.input.extend(["huge:output:0", "Const:output:0"])
    total.attr["T"].type = 1
    total.attr["Tidx"].type = 3
    total.attr["keep_dims"].b = False
    # ...added to the function's result, so that no pass may prune it.
    ident = _node(fdef, "Identity")
    add.name, add.op = "plus_huge", "AddV2"
    add.input.extend([ident.input[0], "huge_sum:output:0"])
    add.attr["T"].type = 1
    ident.input[0] = "plus_huge:z:0"


def _deep_structured_value(path):
    """canonicalized_input_signature nested 100,000 lists deep (TensorFlow's StructuredValue is
    recursive): protobuf's recursion limit must stop the parse, not the stack."""
    from tensorflow.core.protobuf import saved_object_graph_pb2, struct_pb2
    pb = os.path.join(path, "saved_model.pb")
    sm = _protos().SavedModel()
    with open(pb, "rb") as f:
        sm.ParseFromString(f.read())

    def varint(n):
        out = bytearray()
        while True:
            b, n = n & 0x7F, n >> 7
            out.append(b | (0x80 if n else 0))
            if not n:
                return bytes(out)

    def field(number, payload):
        return varint(number << 3 | 2) + varint(len(payload)) + payload

    list_value = struct_pb2.StructuredValue.DESCRIPTOR.fields_by_name["list_value"].number
    values = struct_pb2.ListValue.DESCRIPTOR.fields_by_name["values"].number
    deep = b""
    for _ in range(100000):
        deep = field(list_value, field(values, deep))
    fn_fields = saved_object_graph_pb2.SavedConcreteFunction.DESCRIPTOR.fields_by_name
    graph_fields = saved_object_graph_pb2.SavedObjectGraph.DESCRIPTOR.fields_by_name
    meta_fields = _protos().SavedModel.DESCRIPTOR.fields_by_name
    from tensorflow.core.protobuf import meta_graph_pb2
    object_graph = meta_graph_pb2.MetaGraphDef.DESCRIPTOR.fields_by_name["object_graph_def"].number
    key = next(iter(sm.meta_graphs[0].object_graph_def.concrete_functions))
    entry = field(1, key.encode()) + field(2, field(fn_fields["canonicalized_input_signature"].number, deep))
    # A later occurrence of a singular message field merges into the earlier one.
    meta = sm.meta_graphs[0].SerializeToString() + field(object_graph, field(graph_fields["concrete_functions"].number,
                                                                             entry))
    sm.ClearField("meta_graphs")
    with open(pb, "wb") as f:
        f.write(sm.SerializeToString() + field(meta_fields["meta_graphs"].number, meta))


def _bytes(name, change):
    def run(path):
        target = os.path.join(path, "variables", name)
        with open(target, "rb") as f:
            data = bytearray(f.read())
        with open(target, "wb") as f:
            f.write(bytes(change(data)))
    return run


def _flip(data, at):
    data[at] ^= 0x5A
    return data


def _restore_with_no_names(mg):
    names = _node(_fn(mg, "__inference__traced_restore"), "RestoreV2/tensor_names")
    names.attr["value"].tensor.ClearField("string_val")
    names.attr["value"].tensor.tensor_shape.dim[0].size = 0


def _pb(change):
    return lambda path: _edit(path, change)


def _set_attr_type(prefix, name, dtype):
    def change(n):
        n.attr["dtype"].type = dtype
        n.attr["value"].tensor.dtype = dtype
    return _pb(_edit_node(prefix, name, change))


# (what TensorFlow's advisory class is, what is damaged, how, the error kiln must raise; None:
# loads and serves as before, because kiln never runs that part)
CASES = [
    ("CVE-2020-15206", "Const without its value", _pb(_edit_node(
        "__inference___call__", "Greater/y", lambda n: n.attr.pop("value"))), kiln.errors.InvalidArgumentError),
    ("CVE-2020-15206", "tensor shape with a negative dim", _pb(_edit_node(
        "__inference___call__", "Greater/y", lambda n: n.attr["value"].tensor.tensor_shape.dim.add(size=-5))),
     kiln.errors.InvalidArgumentError),
    ("CVE-2020-15206", "tensor of 2^62 elements with 4 bytes", _pb(_edit_node(
        "__inference___call__", "Greater/y", lambda n: [n.attr["value"].tensor.tensor_shape.dim.add(size=1 << 31)
                                                        for _ in range(2)])), kiln.errors.InvalidArgumentError),
    ("CVE-2022-23588", "reference dtype (DT_FLOAT_REF)", _set_attr_type("__inference___call__", "Greater/y", 101),
     kiln.errors.InvalidArgumentError),
    ("CVE-2022-23588", "DT_INVALID dtype", _set_attr_type("__inference___call__", "Greater/y", 0),
     kiln.errors.InvalidArgumentError),
    ("CVE-2022-23577", "signature's function missing from the library", _pb(
        lambda mg: mg.graph_def.library.function.remove(_fn(mg, "__inference_signature_wrapper"))),
     kiln.errors.InvalidArgumentError),
    ("CVE-2022-23577", "branch function missing from the library", _pb(
        lambda mg: mg.graph_def.library.function.remove(_fn(mg, "cond_true_"))), kiln.errors.InvalidArgumentError),
    ("CVE-2022-23577", "no __saved_model_init_op (kiln does not need it)", _pb(
        lambda mg: mg.signature_def.pop("__saved_model_init_op")), None),
    ("CVE-2021-41213", "functions calling each other in a cycle", _pb(_mutual_recursion),
     kiln.errors.InvalidArgumentError),
    ("CVE-2022-23580", "a shape taken from data: Fill of 2^60 floats", _pb(_fill_from_data),
     kiln.errors.InvalidArgumentError),
    ("CVE-2022-23594", "an input naming a missing node", _pb(_edit_node(
        "__inference___call__", "MatMul", lambda n: n.input.__setitem__(1, "nothing:output:0"))),
     kiln.errors.InvalidArgumentError),
    ("CVE-2022-23579", "an input naming a missing output", _pb(_edit_node(
        "__inference___call__", "Sum", lambda n: n.input.__setitem__(0, "MatMul:product:7"))),
     kiln.errors.InvalidArgumentError),
    ("CVE-2022-23581", "a cycle of data inputs", _pb(lambda mg: (
        _node(_fn(mg, "__inference___call__"), "Sum").input.__setitem__(0, "Greater:z:0"),
        _node(_fn(mg, "__inference___call__"), "Greater").input.__setitem__(0, "Sum:output:0"))),
     kiln.errors.InvalidArgumentError),
    ("CVE-2022-23589", "an op with too few inputs", _pb(_edit_node(
        "__inference___call__", "MatMul", lambda n: n.input.pop())), kiln.errors.InvalidArgumentError),
    ("CVE-2021-41217", "TF 1 control flow (Exit without Enter)", _pb(_add_node(
        "cond_true_", lambda n, f: (setattr(n, "name", "exit"), setattr(n, "op", "Exit"),
                                    n.input.append(f.signature.input_arg[0].name), n.attr["T"].__setattr__("type", 1)))),
     kiln.errors.UnimplementedError),
    ("CVE-2021-37639", "RestoreV2 with no tensor names (kiln never runs the saver)", _pb(_restore_with_no_names),
     None),
    ("object graph", "a child naming node 999", _pb(
        lambda mg: setattr(mg.object_graph_def.nodes[0].children[0], "node_id", 999)),
     kiln.errors.InvalidArgumentError),
    ("object graph", "bound input naming node 999", _pb(lambda mg: [
        f.bound_inputs.__setitem__(0, 999) for f in mg.object_graph_def.concrete_functions.values()]),
     kiln.errors.InvalidArgumentError),
    ("object graph", "bound input that is not a variable", _pb(lambda mg: [
        f.bound_inputs.__setitem__(0, 2) for f in mg.object_graph_def.concrete_functions.values()]),
     kiln.errors.InvalidArgumentError),
    ("graph vs checkpoint", "variable declared int32, stored float32", _pb(lambda mg: setattr(
        next(n for n in mg.object_graph_def.nodes if n.HasField("variable")).variable, "dtype", 3)),
     kiln.errors.InvalidArgumentError),
    ("graph vs checkpoint", "variable declared [3, 5], stored [3, 2]", _pb(lambda mg: setattr(
        next(n for n in mg.object_graph_def.nodes if n.HasField("variable")).variable.shape.dim[1], "size", 5)),
     kiln.errors.InvalidArgumentError),
    ("parser limits", "StructuredValue nested 100,000 deep", _deep_structured_value, kiln.errors.DataLossError),
    ("graph vs checkpoint", "a function reads the variable as int32", _pb(_edit_node(
        "__inference___call__", "MatMul/ReadVariableOp", lambda n: setattr(n.attr["dtype"], "type", 3))),
     kiln.errors.InvalidArgumentError),
    ("CVE-2021-41203", "checkpoint data truncated (entries past its end)", _bytes(
        "variables.data-00000-of-00001", lambda d: d[:len(d) // 2]), kiln.errors.DataLossError),
    ("CVE-2021-41203", "checkpoint index: a flipped byte", _bytes(
        "variables.index", lambda d: _flip(d, len(d) // 3)), kiln.errors.DataLossError),
    ("CVE-2021-41203", "checkpoint index: the footer cut off", _bytes("variables.index", lambda d: d[:-20]),
     kiln.errors.DataLossError),
    ("CVE-2021-41203", "checkpoint index: empty", _bytes("variables.index", lambda d: b""), kiln.errors.DataLossError),
]
IDS = ["%02d %s" % (i, c[1]) for i, c in enumerate(CASES)]


@pytest.fixture(scope="module")
def base(tf, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("crafted") / "base")
    _write_base(tf, path)
    return path


def run_case(base_path, work, case):
    """Damages a copy of the model, loads (and calls) it; returns (error or None, seconds, value)."""
    _, _, damage, _ = case
    path = os.path.join(work, "model")
    shutil.rmtree(path, ignore_errors=True)
    shutil.copytree(base_path, path)
    damage(path)
    start = time.perf_counter()
    try:
        model = kiln.saved_model.load(path)
        value = model.signatures["serving_default"](x=X)["output_0"].numpy()
        return None, time.perf_counter() - start, value
    except kiln.errors.OpError as e:
        return e, time.perf_counter() - start, None


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_crafted_model_is_refused_or_served(tf, base, tmp_path, case):
    error, seconds, value = run_case(base, str(tmp_path), case)
    expected = case[3]
    if expected is None:
        assert error is None, "kiln refused a model it can serve: %r" % error
        want = tf.saved_model.load(base).signatures["serving_default"](x=tf.constant(X))["output_0"].numpy()
        np.testing.assert_array_equal(value, want)
    else:
        assert isinstance(error, expected), "expected %s, got %r" % (expected.__name__, error)
    assert seconds < BOUND_SECONDS, "%.2f s" % seconds


def main():
    import tempfile
    import tensorflow as tf
    with tempfile.TemporaryDirectory() as work:
        base_path = os.path.join(work, "base")
        _write_base(tf, base_path)
        print("| class | crafted | kiln | time |")
        print("|---|---|---|---|")
        for case in CASES:
            error, seconds, _ = run_case(base_path, work, case)
            outcome = ("%s: %s" % (type(error).__name__, str(error).splitlines()[0][:90]) if error
                       else "loads and serves (never runs it)")
            print("| %s | %s | %s | %.2f ms |" % (case[0], case[1], outcome, seconds * 1000))


if __name__ == "__main__":
    sys.exit(main())
