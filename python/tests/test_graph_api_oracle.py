"""What a concrete function's graph shows, against TensorFlow in the same test: get_operations
(type, inputs and outputs with names, shapes and dtypes), as_graph_def().node (name, op, input),
str/repr/function_type of a concrete function, and tf.print in a function with no tensor
arguments printing on every call."""
import subprocess
import sys
import os

import numpy as np
import pytest

import kiln


def _functions(m):
    def relu_plus_row(x):
        return m.nn.relu(x) + x[0]

    def matmul_sum(a, b):
        return m.reduce_sum(m.matmul(a, b), axis=1)
    return [(relu_plus_row, [m.TensorSpec([None, 3], m.float32)]),
            (matmul_sum, [m.TensorSpec([2, 3], m.float64), m.TensorSpec([3, 4], m.float64)])]


def _ops(m, fn, specs):
    graph = m.function(fn).get_concrete_function(*specs).graph
    out = []
    for op in graph.get_operations():
        out.append((op.type, [(t.name, str(t.shape), t.dtype.name) for t in op.inputs],
                    [(t.name, str(t.shape), t.dtype.name) for t in op.outputs]))
    nodes = [(n.op, len(n.input)) for n in graph.as_graph_def().node]
    return out, nodes


@pytest.mark.parametrize("index", [0, 1])
def test_operations_and_graph_def_nodes(tf, index):
    theirs_fn, theirs_specs = _functions(tf)[index]
    ours_fn, ours_specs = _functions(kiln)[index]
    theirs, their_nodes = _ops(tf, theirs_fn, theirs_specs)
    ours, our_nodes = _ops(kiln, ours_fn, ours_specs)
    # Names of constants differ ("Greater/y" in TensorFlow), and kiln's reduction axes are a
    # vector where TensorFlow's are a scalar for one axis: inputs are compared by dtype, and
    # outputs by shape and dtype (a constant's by dtype).
    def strip(ops):
        return [(t, [d for _, _, d in i], [d if t == "Const" else (s, d) for _, s, d in o]) for t, i, o in ops]
    assert strip(ours) == strip(theirs)
    assert our_nodes == their_nodes


def test_concrete_function_texts(tf):
    def texts(m):
        @m.function
        def pw(a, b, c=3):
            return {"x": a ** b, "y": [a]}
        cf = pw.get_concrete_function(a=m.TensorSpec(None, m.float32), b=2)
        return [str(cf), str(cf.function_type), repr(cf).rsplit(" at ", 1)[0]]
    assert [t.replace("kiln.", "tf.") for t in texts(kiln)] == texts(tf)


PROGRAM = """
import sys
import %s as tf
@tf.function
def f(x):
    tf.print("Executed with", x)
f(1)
f(1)
f(2)
@tf.function
def g():
    tf.print("g", output_stream=sys.stdout)
g()
g()
"""


def test_print_runs_on_every_call_without_tensor_arguments(tf):
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(kiln.__file__), ".."), TF_CPP_MIN_LOG_LEVEL="3")
    outs = [subprocess.run([sys.executable, "-c", PROGRAM % name], capture_output=True, text=True, env=env,
                           timeout=300) for name in ("tensorflow", "kiln")]
    assert outs[1].returncode == 0, outs[1].stderr
    assert outs[1].stdout == outs[0].stdout == "g\ng\n"
    tail = [line for line in outs[0].stderr.splitlines() if line.startswith("Executed")]
    assert [line for line in outs[1].stderr.splitlines() if line.startswith("Executed")] == tail
    assert len(tail) == 3


def test_concrete_function_call_errors(tf):
    def wrong_dtype(m):
        double = m.function(lambda a: a + a)
        double.get_concrete_function(m.TensorSpec([], m.string))(m.constant(1))

    def other_python_value(m):
        @m.function
        def pw(a, b):
            return a ** b
        pw.get_concrete_function(a=m.TensorSpec(None, m.float32), b=2)(m.constant(10.0), b=3)

    from conftest import errors_of
    ours, theirs = errors_of(wrong_dtype, tf)
    assert "input #0(zero-based) was expected to be a string tensor but is a int32 tensor" in str(theirs)
    assert "input #0(zero-based) was expected to be a string tensor but is a int32 tensor" in str(ours)
    ours, theirs = errors_of(other_python_value, tf)
    assert str(ours).split(". Received")[0].replace("kiln.", "tf.") == str(theirs).split(". Received")[0]

    @kiln.function
    def pw(a, b):
        return a ** b
    square = pw.get_concrete_function(a=kiln.TensorSpec(None, kiln.float32), b=2)
    assert float(square(kiln.constant(3.0), b=2)) == 9.0 and float(square(kiln.constant(3.0))) == 9.0
