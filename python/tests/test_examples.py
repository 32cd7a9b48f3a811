"""The Python tour and the benchmark scripts run to the end (so none rots)."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(*args):
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_tour_runs():
    r = run("examples/tour.py")
    assert r.returncode == 0, r.stderr
    assert "constant shares the array: True" in r.stdout
    assert "InvalidArgumentError:" in r.stdout and "AttributeError:" in r.stdout


def test_bench_runs_quick():
    pytest.importorskip("tensorflow")
    r = run("bench/python/bench_eager.py", "--quick")
    assert r.returncode == 0, r.stderr
    assert "scalar a + b" in r.stdout and "TensorFlow/kiln" in r.stdout


def test_function_bench_runs_quick():
    pytest.importorskip("tensorflow")
    r = run("bench/python/bench_function.py", "--quick")
    assert r.returncode == 0, r.stderr
    assert "f(x): x + 1" in r.stdout and "tf.function/kiln" in r.stdout


def test_peers_bench_runs_quick(tmp_path):
    pytest.importorskip("tensorflow")
    r = run("bench/python/bench_peers.py", "--quick", "--json", str(tmp_path / "peers.json"))
    assert r.returncode == 0, r.stderr
    assert "power(x,100) int32 10x10" in r.stdout and (tmp_path / "peers.json").exists()


def test_data_bench_runs_quick():
    pytest.importorskip("tensorflow")
    r = run("bench/python/bench_data.py", "--quick")
    assert r.returncode == 0, r.stderr
    assert "slices-map-batch" in r.stdout and "tfrecord-parse" in r.stdout and "MLP step" in r.stdout
