"""Eager ops from Python: kiln against TensorFlow, numpy (and JAX, torch when installed), in one run.

    make bench-python        (or: .venv/bin/python bench/python/bench_eager.py [--quick])

Each case is timed with timeit: the best of several repeats of many calls, in microseconds per
call. Ratios are the peer's time over kiln's (above 1: kiln is faster). Not a test: nothing here
asserts a speed; the numbers are for the reader."""
import argparse
import os
import sys
import timeit

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def best_us(fn, number, repeat):
    fn()  # warm up (first-call caches, lazy imports)
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def peers():
    """Each framework's implementation of every case, as (name, {case: callable})."""
    import kiln

    out = []
    big = np.arange(1_000_000, dtype=np.float32)
    small = np.arange(1_000, dtype=np.float32)  # beside 1M: the conversions are O(1), no copy
    m10 = np.random.default_rng(0).standard_normal((10, 10)).astype(np.float32)

    def cases(mod_constant, add, matmul, to_numpy, block=lambda r: r):
        a, b = mod_constant(np.float32(1.5)), mod_constant(np.float32(2.5))
        x = mod_constant(m10)
        t, s = mod_constant(big), mod_constant(small)
        return {
            "scalar a + b": lambda: block(add(a, b)),
            "matmul 10x10 f32": lambda: block(matmul(x, x)),
            "constant(1K numpy)": lambda: block(mod_constant(small)),
            "constant(1M numpy)": lambda: block(mod_constant(big)),
            ".numpy() of 1K": lambda: to_numpy(s),
            ".numpy() of 1M": lambda: to_numpy(t),
        }

    out.append(("kiln", cases(kiln.constant, lambda a, b: a + b, kiln.matmul, lambda t: t.numpy())))
    try:
        import tensorflow as tf

        out.append(("TensorFlow", cases(tf.constant, lambda a, b: a + b, tf.matmul, lambda t: t.numpy())))
    except ImportError:
        pass
    out.append(("numpy", cases(np.asarray, lambda a, b: a + b, np.matmul, np.asarray)))
    try:
        import jax
        import jax.numpy as jnp

        out.append(("JAX", cases(jnp.asarray, lambda a, b: a + b, jnp.matmul, np.asarray,
                                 block=lambda r: r.block_until_ready())))
        del jax
    except ImportError:
        pass
    try:
        import torch

        out.append(("torch", cases(torch.as_tensor, lambda a, b: a + b, torch.matmul, lambda t: t.numpy())))
    except ImportError:
        pass
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    args = parser.parse_args()
    number, repeat = (200, 3) if args.quick else (5000, 7)

    frameworks = peers()
    case_names = list(frameworks[0][1])
    times = {}
    for name, cases in frameworks:
        for case in case_names:
            times[name, case] = best_us(cases[case], number, repeat)

    names = [n for n, _ in frameworks]
    print("eager from Python, us per call (best of %d x %d); ratio = peer / kiln" % (repeat, number))
    print("python %s, numpy %s, %d cores" % (sys.version.split()[0], np.__version__, os.cpu_count()))
    header = "%-20s" % "case" + "".join("%12s" % n for n in names) + "".join(
        "%16s" % (n + "/kiln") for n in names[1:])
    print(header)
    print("-" * len(header))
    for case in case_names:
        row = "%-20s" % case + "".join("%12.3f" % times[n, case] for n in names)
        row += "".join("%16.1f" % (times[n, case] / times["kiln", case]) for n in names[1:])
        print(row)


if __name__ == "__main__":
    main()
