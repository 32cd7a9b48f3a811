"""Runtime CPU dispatch: kiln's kernels at every instruction-set level this CPU has
(KILN_CPU_ISA=baseline, avx2, avx512 in a process each) against TensorFlow, and against each
other. A level the CPU lacks is skipped, saying so."""
import os
import subprocess
import sys

import numpy as np
import pytest

import kiln
import isa_workloads

LEVELS = ["baseline", "avx2", "avx512"]
SUPPORTED = kiln.sysconfig.get_build_info()["cpu_isa_supported"]


def _at_level(level, tmp_path):
    path = tmp_path / ("%s.npz" % level)
    env = dict(os.environ, KILN_CPU_ISA=level)
    subprocess.run([sys.executable, isa_workloads.__file__, str(path)], env=env, check=True, timeout=300)
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("isa")
    return {level: _at_level(level, tmp) for level in LEVELS[:LEVELS.index(SUPPORTED) + 1]}


@pytest.fixture(scope="module")
def oracle(tf):
    return isa_workloads.run_tf()


def _close(ours, theirs, name):
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, name
    if ours.dtype.kind in "iub":
        np.testing.assert_array_equal(ours, theirs, err_msg=name)
    else:  # multiply-adds fuse at some levels and not others, as they do across TF builds
        np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=2e-5, err_msg=name)


@pytest.mark.parametrize("level", LEVELS)
def test_level_matches_tensorflow(level, results, oracle):
    if level not in results:
        pytest.skip("this CPU runs at most %s" % SUPPORTED)
    got = results[level]
    assert str(got["__cpu_isa__"]) == level
    for name, want in oracle.items():
        _close(got[name], want, name)


def test_levels_agree(results):
    base = results["baseline"]
    for level, got in results.items():
        for name in isa_workloads.workloads():
            _close(got[name], base[name], "%s at %s" % (name, level))


def test_unknown_level_is_said(tmp_path):
    env = dict(os.environ, KILN_CPU_ISA="sse9")
    r = subprocess.run([sys.executable, "-c", "import kiln; print(kiln.sysconfig.get_build_info()['cpu_isa'])"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "KILN_CPU_ISA=sse9 is not one of baseline, avx2, avx512" in r.stderr
    assert r.stdout.strip() == SUPPORTED
