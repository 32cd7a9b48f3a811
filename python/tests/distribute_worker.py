"""One rank of python/tests/test_distribute.py, run under mpirun: `python distribute_worker.py
CASE OUT_DIR`. Writes OUT_DIR/CASE.<rank>.json with what the test compares."""
import json
import os
import sys

import numpy as np

import kiln
import kiln.distribute as hvd


def collectives(out):
    r, n = hvd.rank(), hvd.size()
    results = {}
    for dtype in ("int32", "int64", "float32", "float64"):
        x = np.array([1, -2, 3], dtype) * (r + 1)
        results[dtype] = {
            "sum": hvd.allreduce(x, op=hvd.Sum).numpy().tolist(),
            "min": hvd.allreduce(x, op=hvd.Min).numpy().tolist(),
            "max": hvd.allreduce(x, op=hvd.Max).numpy().tolist(),
            "average": hvd.allreduce(x).numpy().tolist(),
            "average_dtype": hvd.allreduce(x).dtype.name,
            "gather": hvd.allgather(np.repeat(x[None], r + 1, axis=0)).numpy().tolist(),
            "broadcast": hvd.broadcast(x, root_rank=n - 1).numpy().tolist(),
        }
    results["bool_gather"] = hvd.allgather(np.array([r == 0])).numpy().tolist()
    results["bool_broadcast"] = hvd.broadcast(np.array([r == 1, True]), root_rank=1).numpy().tolist()

    @kiln.function
    def traced(x):
        return hvd.allreduce(x * 2.0, op=hvd.Sum), hvd.allgather(x), hvd.broadcast(x, 0)

    a, g, b = traced(kiln.constant([1.0, 2.0]) * (r + 1))
    results["traced"] = [a.numpy().tolist(), g.numpy().tolist(), b.numpy().tolist()]
    # Disagreeing ranks: the same error on every rank, and the ranks stay in step.
    try:
        hvd.allreduce(np.zeros(2 + r, np.float32))
        results["mismatch"] = "no error"
    except kiln.errors.InvalidArgumentError as e:
        results["mismatch"] = str(e)
    try:
        hvd.broadcast(np.zeros(2), root_rank=7)
        results["bad_root"] = "no error"
    except kiln.errors.InvalidArgumentError as e:
        results["bad_root"] = str(e)
    v = kiln.Variable(np.array([1.0, 2.0], np.float32) * (r + 1))
    hvd.broadcast_variables([v], root_rank=0)
    results["broadcast_variables"] = v.numpy().tolist()
    results["after"] = hvd.allreduce(np.float32(r), op=hvd.Sum).numpy().tolist()
    out.update(results)


def train(out, traced):
    """A 8-16-3 MLP on a fixed batch of 32: each of the N ranks takes its 32/N rows; the
    gradients are averaged over the ranks (DistributedGradientTape). Initial weights are drawn
    per rank and made equal by broadcast_variables."""
    r, n = hvd.rank(), hvd.size()
    data = np.random.default_rng(0)
    x_all = data.standard_normal((32, 8)).astype(np.float32)
    y_all = data.integers(0, 3, 32).astype(np.int32)
    rows = slice(r * 32 // n, (r + 1) * 32 // n)
    x, y = kiln.constant(x_all[rows]), kiln.constant(y_all[rows])
    init = np.random.default_rng(100 + r)  # different on each rank until broadcast
    w1 = kiln.Variable(init.standard_normal((8, 16)).astype(np.float32) * 0.5)
    b1 = kiln.Variable(np.zeros(16, np.float32))
    w2 = kiln.Variable(init.standard_normal((16, 3)).astype(np.float32) * 0.5)
    variables = [w1, b1, w2]
    hvd.broadcast_variables(variables, root_rank=0)

    def step(x, y):
        with kiln.GradientTape() as tape:
            logits = kiln.matmul(kiln.tanh(kiln.matmul(x, w1) + b1), w2)
            loss = kiln.reduce_mean(kiln.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        grads = hvd.DistributedGradientTape(tape).gradient(loss, variables)
        for v, g in zip(variables, grads):
            v.assign_sub(0.1 * g)
        return hvd.allreduce(loss)  # the mean over equal shards: the whole batch's loss

    if traced:
        step = kiln.function(step)
    losses, calls = [], []
    for _ in range(20):
        before = hvd.collective_calls()
        losses.append(float(step(x, y).numpy()))
        calls.append(hvd.collective_calls() - before)
    out.update(losses=losses, calls_per_step=calls[-1], weights=[v.numpy().tolist() for v in variables])


def stall(out):
    """Rank 1 stays alive but never joins the collective rank 0 waits in."""
    del out
    if hvd.rank() == 1:
        import time
        time.sleep(120)
    hvd.allreduce(np.ones(2, np.float32))


def leave(out):
    """Rank 1 exits without joining the collective rank 0 waits in."""
    del out
    if hvd.rank() == 1:
        os._exit(0)
    hvd.allreduce(np.ones(2, np.float32))


def raises(out):
    """Rank 1 raises; rank 0 waits in a collective."""
    del out
    if hvd.rank() == 1:
        raise RuntimeError("rank 1 failed on purpose")
    hvd.allreduce(np.ones(2, np.float32))


def main():
    case, out_dir = sys.argv[1], sys.argv[2]
    hvd.init()
    out = {"rank": hvd.rank(), "size": hvd.size(), "local_rank": hvd.local_rank(), "local_size": hvd.local_size()}
    if case == "collectives":
        collectives(out)
    elif case in ("train_eager", "train_traced"):
        train(out, traced=case == "train_traced")
    elif case == "stall":
        stall(out)
    elif case == "leave":
        leave(out)
    elif case == "raises":
        raises(out)
    else:
        raise SystemExit("unknown case " + case)
    with open(os.path.join(out_dir, "%s.%d.json" % (case, hvd.rank())), "w") as f:
        json.dump(out, f)
    hvd.shutdown()


if __name__ == "__main__":
    main()
