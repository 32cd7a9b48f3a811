"""ONNX Runtime as a peer in bench_peers.py: the workloads' graphs written as ONNX models.

kiln does not export ONNX, so each graph here is built by hand with onnx.helper, node for
node what the traced function computes, and run through one InferenceSession per model
(CPU provider, default threading). Only workloads that are a fixed graph apply: no eager
mode, no training step (ONNX Runtime's inference sessions do not differentiate)."""
import numpy as np

THREADS = 0  # intra-op threads per session; 0: ONNX Runtime's default


def available():
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def _session(nodes, inputs, outputs, initializers=()):
    import onnx
    import onnxruntime as ort
    from onnx import helper

    graph = helper.make_graph(nodes, "kiln_bench", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.intra_op_num_threads = THREADS
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def _tensor_info(name, np_dtype, shape):
    from onnx import helper

    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(np_dtype)), shape)


def _const(name, array):
    from onnx import numpy_helper

    return numpy_helper.from_array(np.asarray(array), name)


def _runner(sess, feeds):
    out_names = [o.name for o in sess.get_outputs()]
    return lambda: sess.run(out_names, feeds)


def power(dtype, x):
    """result = eye(10); 100 times: result = x @ result (the seed's power)."""
    from onnx import helper

    nodes, prev = [], "eye"
    for i in range(100):
        nodes.append(helper.make_node("MatMul", ["x", prev], ["r%d" % i]))
        prev = "r%d" % i
    nodes.append(helper.make_node("Identity", [prev], ["y"]))
    sess = _session(nodes, [_tensor_info("x", dtype, [10, 10])], [_tensor_info("y", dtype, [10, 10])],
                    [_const("eye", np.eye(10, dtype=dtype))])
    return _runner(sess, {"x": x})


def add_one(x):
    from onnx import helper

    sess = _session([helper.make_node("Add", ["x", "one"], ["y"])], [_tensor_info("x", np.float32, [])],
                    [_tensor_info("y", np.float32, [])], [_const("one", np.float32(1))])
    return _runner(sess, {"x": x})


def chain(x):
    """tanh(x * 0.5 + 1) * x - x / 3"""
    from onnx import helper

    nodes = [helper.make_node("Mul", ["x", "half"], ["a"]), helper.make_node("Add", ["a", "one"], ["b"]),
             helper.make_node("Tanh", ["b"], ["t"]), helper.make_node("Mul", ["t", "x"], ["p"]),
             helper.make_node("Div", ["x", "three"], ["q"]), helper.make_node("Sub", ["p", "q"], ["y"])]
    consts = [_const("half", np.float32(0.5)), _const("one", np.float32(1)), _const("three", np.float32(3))]
    n = x.shape[0]
    sess = _session(nodes, [_tensor_info("x", np.float32, [n])], [_tensor_info("y", np.float32, [n])], consts)
    return _runner(sess, {"x": x})


def lstm_loop(x, w, steps):
    """The recurrent workload: an ONNX Loop whose body is the same LSTM-like cell."""
    from onnx import helper

    batch, units = x.shape[0], w.shape[1] // 4
    body = helper.make_graph(
        [helper.make_node("Concat", ["x", "h_in"], ["xh"], axis=1),
         helper.make_node("MatMul", ["xh", "w"], ["z"]),
         helper.make_node("Split", ["z"], ["zi", "zf", "zo", "zg"], axis=1, num_outputs=4),
         helper.make_node("Sigmoid", ["zi"], ["si"]), helper.make_node("Sigmoid", ["zf"], ["sf"]),
         helper.make_node("Sigmoid", ["zo"], ["so"]), helper.make_node("Tanh", ["zg"], ["tg"]),
         helper.make_node("Mul", ["sf", "c_in"], ["fc"]), helper.make_node("Mul", ["si", "tg"], ["ig"]),
         helper.make_node("Add", ["fc", "ig"], ["c_out"]), helper.make_node("Tanh", ["c_out"], ["tc"]),
         helper.make_node("Mul", ["so", "tc"], ["h_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "cell",
        [_tensor_info("iter", np.int64, []), _tensor_info("cond_in", np.bool_, []),
         _tensor_info("h_in", np.float32, [batch, units]), _tensor_info("c_in", np.float32, [batch, units])],
        [_tensor_info("cond_out", np.bool_, []), _tensor_info("h_out", np.float32, [batch, units]),
         _tensor_info("c_out", np.float32, [batch, units])])
    loop = helper.make_node("Loop", ["steps", "", "h0", "c0"], ["h", "c"], body=body)
    consts = [_const("w", w), _const("steps", np.int64(steps)),
              _const("h0", np.zeros((batch, units), np.float32)), _const("c0", np.zeros((batch, units), np.float32))]
    sess = _session([loop], [_tensor_info("x", np.float32, list(x.shape))],
                    [_tensor_info("h", np.float32, [batch, units]), _tensor_info("c", np.float32, [batch, units])],
                    consts)
    return _runner(sess, {"x": x})
