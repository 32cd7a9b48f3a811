"""What no input, thread or neighbour library may do to kiln: crash it, hang it, or make it
hold memory without bound. Each test pins a defect that was found (issue: a safe core)."""
import gc
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import weakref

import numpy as np
import pytest

import kiln

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(code, timeout=240):
    """Runs `code` as a script file (AutoGraph reads a function's source from its file)."""
    import tempfile
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=os.path.join(ROOT, "python"))
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as script:
        script.write(textwrap.dedent(code))
    try:
        return subprocess.run([sys.executable, script.name], capture_output=True, text=True, timeout=timeout,
                              env=env)
    finally:
        os.unlink(script.name)


# libkiln is dlopen'ed beside libraries that use static TLS themselves; with the
# initial-exec TLS model it failed to load after TensorFlow ("cannot allocate memory in
# static TLS block").
@pytest.mark.parametrize("first, then", [
    ("tensorflow", "kiln"), ("kiln", "tensorflow"), ("jax", "kiln"), ("kiln", "jax"),
    ("sklearn", "kiln"), ("kiln", "sklearn"),
])
def test_kiln_imports_beside_other_libraries_in_either_order(first, then):
    pytest.importorskip(first if first != "kiln" else then)
    r = _run(f"""
        import {first}
        import {then}
        import kiln
        print(float(kiln.function(lambda x: x * 2.0)(kiln.constant(3.0))))
    """)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().endswith("6.0")


def test_empty_tensors_broadcast_like_tensorflow(tf):
    for a_shape, b_shape in [((0, 32), (32,)), ((0, 4, 4, 32), (32,)), ((4, 0, 1), (1, 7))]:
        a = np.zeros(a_shape, np.float32)
        b = np.ones(b_shape, np.float32)
        for _ in range(50):
            for op in (lambda m, x, y: x + y, lambda m, x, y: x - y, lambda m, x, y: x * y,
                       lambda m, x, y: m.maximum(x, y)):
                got = op(kiln, kiln.constant(a), kiln.constant(b))
                want = op(tf, tf.constant(a), tf.constant(b))
                assert tuple(got.shape) == tuple(want.shape)


def test_a_served_model_takes_a_batch_of_zero(tf, tmp_path):
    class Dense(tf.Module):
        def __init__(self):
            self.w = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3))
            self.b = tf.Variable(np.ones(3, np.float32))

        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
        def __call__(self, x):
            return tf.nn.relu(tf.matmul(x, self.w) + self.b)

    module = Dense()
    tf.saved_model.save(module, str(tmp_path), signatures=module.__call__.get_concrete_function())
    served = kiln.saved_model.load(str(tmp_path))
    for batch in (0, 64, 0):
        x = np.random.default_rng(batch).standard_normal((batch, 4)).astype(np.float32)
        got = served.signatures["serving_default"](x=kiln.constant(x))
        want = tf.saved_model.load(str(tmp_path)).signatures["serving_default"](x=tf.constant(x))
        (gk, gv), = got.items()
        (wk, wv), = want.items()
        assert gk == wk and gv.shape == tuple(wv.shape)
        # (absolutely too: TensorFlow's sum order differs by CPU, an ulp apart near zero)
        np.testing.assert_allclose(gv.numpy(), wv.numpy(), rtol=1e-6, atol=1e-6)


def test_threads_making_the_first_call_together_all_get_their_result():
    # The Python record of a trace was published after the trace itself: a second thread
    # found the trace and not its record (IndexError 'unordered_map::at').
    for round_ in range(20):
        f = kiln.function(lambda x: x * 2.0 + 1.0)
        errors, results = [], []
        barrier = threading.Barrier(8)

        def call(f=f):
            barrier.wait()
            try:
                results.append(float(f(kiln.constant(float(round_)))))
            except Exception as e:  # noqa: BLE001 (any error is the defect)
                errors.append(repr(e))

        threads = [threading.Thread(target=call) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert results == [round_ * 2.0 + 1.0] * 8


def test_trace_records_live_no_longer_than_their_traces():
    f = kiln.function(lambda x, k: x + k)
    x = kiln.constant(1.0)
    for k in range(3000):  # each Python number is its own trace; the cache keeps 1024
        f(x, k)
    assert f._core.num_records() <= 2 * 1024 + 64
    assert float(f(x, 2999)) == 3000.0


def test_a_function_is_freed_when_dropped():
    def body(x):
        return x * 3.0

    f = kiln.function(body)
    f(kiln.constant(1.0))
    ref = weakref.ref(f)
    del f
    gc.collect()
    assert ref() is None


def test_ctrl_c_stops_a_graph_that_never_ends():
    code = """
        import os, signal, sys, threading, time
        # As in an interactive Python: a process started in the background of a non-interactive
        # shell (a CI runner) inherits SIGINT ignored, and Python then installs no handler.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        import kiln

        @kiln.function
        def spin(x):
            i = kiln.constant(0)
            while i >= 0:
                i += 1
            return x + kiln.cast(i, kiln.float32)  # used: the loop is not pruned

        spin.get_concrete_function(kiln.constant(1.0))
        def interrupt():
            time.sleep(0.5)
            global sent
            sent = time.monotonic()
            os.kill(os.getpid(), signal.SIGINT)
        threading.Thread(target=interrupt).start()
        try:
            spin(kiln.constant(1.0))
        except KeyboardInterrupt:
            print("KeyboardInterrupt after %.3f s" % (time.monotonic() - sent))
            sys.exit(0)
        print("returned")
        sys.exit(1)
    """
    r = _run(code, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    latency = float(r.stdout.split("after")[1].split()[0])
    assert latency < 1.0, r.stdout


def test_run_limits_bound_time_and_memory():
    @kiln.function
    def spin(x):
        i = kiln.constant(0)
        while i >= 0:
            i += 1
        return x + kiln.cast(i, kiln.float32)  # used: the loop is not pruned

    start = time.monotonic()
    with kiln.config.run_limits(timeout=0.1):
        with pytest.raises(kiln.errors.DeadlineExceededError, match="deadline"):
            spin(kiln.constant(1.0))
    assert time.monotonic() - start < 2.0

    @kiln.function
    def square(n):
        return kiln.reshape(kiln.range(n * n), kiln.stack([n, n]))

    with kiln.config.run_limits(memory_limit_bytes=64 << 20):
        with pytest.raises(kiln.errors.ResourceExhaustedError, match="memory budget"):
            square(kiln.constant(1 << 15))  # 4 GiB
        assert square(kiln.constant(8)).shape == (8, 8)
    assert square(kiln.constant(1 << 11)).shape == (2048, 2048)  # no limits outside the block
    with pytest.raises(kiln.errors.InvalidArgumentError):
        kiln.config.run_limits(timeout=-1)
