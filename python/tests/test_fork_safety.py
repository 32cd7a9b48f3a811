"""A process that forks after running kiln (Python's multiprocessing does so by default on
Linux) gets a child that still runs kiln: splits work over threads and convolves, rather than
waiting for the parent's threads, which a child does not have."""
import os
import signal
import subprocess
import sys
import textwrap

CHILD_PROGRAM = textwrap.dedent(
    """
    import multiprocessing as mp
    import numpy as np
    import kiln as tf

    rng = np.random.default_rng(0)
    x = rng.random((1, 32, 32, 16), dtype=np.float32)
    w = rng.random((3, 3, 16, 16), dtype=np.float32)
    logits = rng.random((256, 4096), dtype=np.float32)

    def work(_):
        y = tf.nn.conv2d(x, w, 1, "SAME").numpy()
        s = tf.nn.softmax(logits).numpy()
        return float(y.sum()), float(s.sum())

    parent = work(0)  # starts the thread pool and, where it loads, oneDNN's OpenMP team
    with mp.get_context("fork").Pool(2) as pool:
        children = pool.map(work, range(2), chunksize=1)
    for c in children:
        assert abs(c[0] - parent[0]) <= 1e-4 * abs(parent[0]), (c, parent)
        assert abs(c[1] - parent[1]) <= 1e-3, (c, parent)
    print("ok")
    """
)


def test_forked_children_run_kiln_after_the_parent_has():
    # Its own session: a hung run's pool workers are killed with it, not left behind.
    run = subprocess.Popen(
        [sys.executable, "-c", CHILD_PROGRAM],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = run.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)
        run.communicate()
        raise AssertionError("a forked child hung")
    assert run.returncode == 0, err
    assert out.strip() == "ok"
