"""`python -m kiln.as_tensorflow` and kiln.install_as_tensorflow(): an unchanged TensorFlow program
runs on kiln. Each case runs in a fresh interpreter (this test process has the real TensorFlow
imported); the oracle runs the same program with `python` and TensorFlow."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), TF_CPP_MIN_LOG_LEVEL="3")


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def _run(args, cwd=None, check=True):
    p = subprocess.run([sys.executable] + args, env=ENV, cwd=cwd, capture_output=True, text=True, timeout=300)
    if check:
        assert p.returncode == 0, p.stderr[-3000:]
    return p


def _on_kiln(script, *args, cwd=None, check=True):
    return _run(["-m", "kiln.as_tensorflow", script] + list(args), cwd=cwd, check=check)


def _on_tensorflow(script, *args):
    return _run([script] + list(args))


PRINTS = """
import sys
import tensorflow as tf
x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
print(repr(x))
print(x)
print(repr(tf.constant(3)), tf.float32, repr(tf.int64), tf.TensorShape([2, None]))
v = tf.Variable([1, 2], name="v")
print(repr(v))
print(tf.reduce_sum(x).numpy(), tf.matmul(x, x).numpy().tolist())
print(sys.argv[1:])
"""


def test_a_script_prints_what_it_prints_on_tensorflow(tmp_path):
    script = _write(tmp_path, "prog.py", PRINTS)
    ours = _on_kiln(script, "a", "--b")
    theirs = _on_tensorflow(script, "a", "--b")
    assert ours.stdout == theirs.stdout
    assert "tf.Tensor(" in ours.stdout and "<tf.Variable 'v:0'" in ours.stdout


def test_a_module_runs_with_dash_m(tmp_path):
    _write(tmp_path, "progmod.py", PRINTS)
    ours = _run(["-m", "kiln.as_tensorflow", "-m", "progmod", "x"], cwd=str(tmp_path))
    assert ours.stdout.splitlines()[-1] == "['x']"
    assert "<tf.Tensor: shape=(2, 2), dtype=float32" in ours.stdout


def test_the_script_directory_is_on_the_path(tmp_path):
    _write(tmp_path, "helper.py", "VALUE = 41\n")
    script = _write(tmp_path, "prog.py", """
        import helper, tensorflow as tf
        print(tf.add(helper.VALUE, 1).numpy())
    """)
    assert _on_kiln(script, cwd="/").stdout.strip() == "42"


def test_what_kiln_lacks_fails_naming_it(tmp_path):
    script = _write(tmp_path, "prog.py", """
        import tensorflow as tf
        for stmt in ("import tensorflow.not_a_module", "from tensorflow import not_a_name", "tf.not_a_name",
                     "import tensorflow.python.not_a_module"):
            try:
                exec(stmt)
            except (ImportError, AttributeError) as e:
                print(type(e).__name__, "|", e)
    """)
    lines = _on_kiln(script).stdout.splitlines()
    assert lines[0].startswith("ModuleNotFoundError | No module named 'tensorflow.not_a_module'"), lines
    assert lines[1].startswith("ImportError | cannot import name 'not_a_name'"), lines
    assert lines[2].startswith("AttributeError | ") and "tf.not_a_name" in lines[2], lines
    assert lines[3].startswith("ModuleNotFoundError | No module named 'tensorflow.python.not_a_module'"), lines


def test_the_real_tensorflow_is_never_loaded(tmp_path):
    script = _write(tmp_path, "prog.py", """
        import sys
        import tensorflow as tf
        import tensorflow.data, tensorflow.nest
        from tensorflow.python.eager import context
        print(tf.__name__, sorted({m.__name__.split('.')[0] for k, m in sys.modules.items()
                                   if k.startswith('tensorflow') and hasattr(m, '__name__')}))
        print(any(k.startswith('tensorflow.python.framework.ops') for k in sys.modules))
    """)
    out = _on_kiln(script).stdout.splitlines()
    assert out[0] == "kiln ['kiln', 'tensorflow']", out
    assert out[1] == "False"


def test_internal_modules_libraries_import(tmp_path):
    script = _write(tmp_path, "prog.py", """
        import tensorflow as tf
        from tensorflow.python.eager import context
        from tensorflow.python.trackable.data_structures import ListWrapper, _DictWrapper
        from tensorflow.python.ops.math_ops import is_nan
        from tensorflow.compiler.tf2xla.python.xla import dynamic_update_slice
        from tensorflow.experimental import dtensor
        context.context().clear_kernel_cache(); context.async_wait()
        print(isinstance(ListWrapper([1]), list), isinstance(_DictWrapper({}), dict))
        print(is_nan(tf.constant([1.0, float('nan')])).numpy().tolist())
        print(dynamic_update_slice(tf.zeros([4, 3]), tf.ones([2, 2]), [3, 2]).numpy().tolist())
        try:
            dtensor.Mesh
        except NotImplementedError as e:
            print("NotImplementedError", "DTensor" in str(e))
        import kiln.data
        print(kiln.data.__spec__.name)
    """)
    out = _on_kiln(script).stdout.splitlines()
    assert out[0] == "True True"
    assert out[1] == "[False, True]"
    # XLA clamps the start so the update fits: rows 2..3, columns 1..2
    assert out[2] == "[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 1.0], [0.0, 1.0, 1.0]]"
    assert out[3] == "NotImplementedError True"
    assert out[4] == "kiln.data"  # aliasing leaves kiln's modules their own spec


def test_it_refuses_when_tensorflow_is_already_imported():
    p = _run(["-c", "import tensorflow, kiln; kiln.install_as_tensorflow()"], check=False)
    assert p.returncode != 0
    assert "RuntimeError: kiln.install_as_tensorflow(): the real TensorFlow is already imported" in p.stderr


def test_install_in_a_program_before_tensorflow_is_imported():
    p = _run(["-c", "import kiln; kiln.install_as_tensorflow(); import tensorflow as tf; "
                    "print(tf is kiln, repr(tf.constant(1)))"])
    assert p.stdout.strip() == "True <tf.Tensor: shape=(), dtype=int32, numpy=1>"


def test_usage_without_arguments():
    p = _run(["-m", "kiln.as_tensorflow"], check=False)
    assert p.returncode == 2 and "usage: python -m kiln.as_tensorflow" in p.stderr


def test_a_failing_script_fails_as_it_would():
    p = _run(["-m", "kiln.as_tensorflow", "-m", "no_such_module_here"], check=False)
    assert p.returncode != 0 and "No module named no_such_module_here" in p.stderr


@pytest.mark.parametrize("shape,update,start", [([5], [2], [4]), ([3, 4], [3, 4], [1, 1]), ([2, 3], [1, 2], [-1, 0])])
def test_dynamic_update_slice_matches_xla(tf, shape, update, start):
    """kiln's composition against TensorFlow's XlaDynamicUpdateSlice kernel."""
    import numpy as np

    import kiln
    from kiln._tf_internal.xla import dynamic_update_slice
    from tensorflow.compiler.tf2xla.python.xla import dynamic_update_slice as theirs

    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    u = -np.ones(update, np.float32)
    ours = dynamic_update_slice(kiln.constant(a), kiln.constant(u), kiln.constant(start))
    np.testing.assert_array_equal(ours.numpy(), theirs(tf.constant(a), tf.constant(u), tf.constant(start)).numpy())
