"""kiln.distribute (Horovod's API over MPI) with two ranks on this machine: each case runs
python/tests/distribute_worker.py under `mpirun -np 2 --oversubscribe` (and, for training,
`-np 1` on the whole batch) and compares what the ranks wrote."""
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import kiln
import kiln.distribute as hvd

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "distribute_worker.py")


def _mpirun():
    mpirun = shutil.which("mpirun")
    if not mpirun or not hvd.mpi_built():
        if os.environ.get("CI") == "true":
            pytest.fail("CI needs Open MPI and kiln built with it (make deps installs openmpi-bin libopenmpi-dev)")
        pytest.skip("needs mpirun and kiln built with MPI (make deps installs Open MPI)")
    return mpirun


def _run(case, out_dir, ranks=2, timeout=120, env=None):
    # Open MPI refuses to run as root unless told (CI runs as root).
    full_env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **(env or {}))
    start = time.monotonic()
    proc = subprocess.run([_mpirun(), "-np", str(ranks), "--oversubscribe", sys.executable, WORKER, case,
                           str(out_dir)], capture_output=True, text=True, timeout=timeout, env=full_env)
    return proc, time.monotonic() - start


def _read(out_dir, case, ranks=2):
    return [json.load(open(os.path.join(str(out_dir), "%s.%d.json" % (case, r)))) for r in range(ranks)]


def test_every_collective_for_every_dtype(tmp_path):
    proc, _ = _run("collectives", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ranks = _read(tmp_path, "collectives")
    assert [r["rank"] for r in ranks] == [0, 1] and all(r["size"] == 2 and r["local_size"] == 2 for r in ranks)
    for r in ranks:  # rank r brought [1, -2, 3] * (r + 1)
        for dtype in ("int32", "int64", "float32", "float64"):
            got = r[dtype]
            assert got["sum"] == [3, -6, 9] and got["min"] == [1, -4, 3] and got["max"] == [2, -2, 6]
            assert got["average"] == [1.5, -3.0, 4.5]
            assert got["average_dtype"] == ("float32" if dtype == "float32" else "float64")
            assert got["gather"] == [[1, -2, 3], [2, -4, 6], [2, -4, 6]]  # one row from rank 0, two from rank 1
            assert got["broadcast"] == [2, -4, 6]  # root: the last rank
        assert r["bool_gather"] == [True, False]
        assert r["bool_broadcast"] == [True, True]
        assert r["traced"] == [[6.0, 12.0], [1.0, 2.0, 2.0, 4.0], [1.0, 2.0]]
        assert "the ranks disagree in allreduce" in r["mismatch"]
        assert "rank 0: float32 (2,)" in r["mismatch"] and "rank 1: float32 (3,)" in r["mismatch"]
        assert "root_rank 7 is not a rank" in r["bad_root"]
        assert r["broadcast_variables"] == [1.0, 2.0]
        assert r["after"] == 1.0  # still in step after the errors


@pytest.mark.parametrize("case", ["train_eager", "train_traced"])
def test_data_parallel_training_matches_one_process(tmp_path, case):
    two = tmp_path / "two"
    one = tmp_path / "one"
    two.mkdir()
    one.mkdir()
    proc, _ = _run(case, two)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc, _ = _run(case, one, ranks=1)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ranks, (alone,) = _read(two, case), _read(one, case, ranks=1)
    # Both ranks hold the same weights; they match one process on the whole batch up to float
    # rounding (the mean of two half-batch means against one mean: a few ulps per step).
    for a, b in zip(ranks[0]["weights"], ranks[1]["weights"]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(ranks[0]["losses"], alone["losses"], rtol=1e-6, atol=1e-6)
    for a, b in zip(ranks[0]["weights"], alone["weights"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert ranks[0]["losses"][-1] < ranks[0]["losses"][0]  # it trains
    # One fused allreduce for the three float32 gradients and one for the loss: two MPI calls
    # each (the agreement on shapes, then the data).
    assert ranks[0]["calls_per_step"] == 4


def test_a_stalled_rank_aborts_the_job_after_the_timeout(tmp_path):
    proc, seconds = _run("stall", tmp_path, env={"KILN_COLLECTIVE_TIMEOUT": "2"})
    assert proc.returncode != 0
    assert "rank 0 waited 2 s for the other ranks in allreduce" in proc.stderr
    assert seconds < 30


@pytest.mark.parametrize("case", ["leave", "raises"])
def test_a_rank_that_dies_or_raises_ends_the_job(tmp_path, case):
    proc, seconds = _run(case, tmp_path)
    assert proc.returncode != 0
    if case == "raises":
        assert "rank 1 failed on purpose" in proc.stderr
    assert seconds < 30  # mpirun ends the others at once; the timeout is the backstop


def test_without_init_and_bad_arguments():
    if not hvd.mpi_built():
        with pytest.raises(kiln.errors.FailedPreconditionError, match="built without MPI"):
            hvd.init()
        return
    with pytest.raises(kiln.errors.FailedPreconditionError, match=r"call init\(\) first"):
        hvd.rank()
    with pytest.raises(ValueError, match="op must be one of"):
        hvd.allreduce([1.0], op="mean")
    with pytest.raises(NotImplementedError, match="Adasum"):
        hvd.allreduce([1.0], op=hvd.Adasum)
    with pytest.raises(NotImplementedError, match="compression"):
        hvd.allreduce([1.0], compression=object())


def test_the_horovod_style_example_trains(tmp_path):
    script = os.path.join(os.path.dirname(WORKER), "..", "..", "examples", "train_mlp_distributed.py")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    proc = subprocess.run([_mpirun(), "-np", "2", "--oversubscribe", sys.executable, script, "40"],
                          capture_output=True, text=True, timeout=120, env=env, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ranks 2: loss" in proc.stdout
