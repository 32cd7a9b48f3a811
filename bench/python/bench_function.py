"""Cached calls of a traced function from Python: kiln.function against tf.function (and
jax.jit when installed), in one run.

    make bench-python        (or: .venv/bin/python bench/python/bench_function.py [--quick])

The function is traced once before timing; what is timed is the call path of a cache hit:
argument flattening, the key, the lookup, running the graph, returning the result.
Microseconds per call (best of several repeats); ratio = peer / kiln."""
import argparse
import os
import sys
import timeit

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def best_us(fn, number, repeat):
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def cases(mod, function, constant):
    x = constant(np.float32(1.5))
    v = constant(np.ones((4, 4), np.float32))
    one = function(lambda a: a + 1)
    three = function(lambda a, b, c: a * b + c)
    with_python = function(lambda a, n: a * n)
    return {
        "f(x): x + 1": lambda: one(x),
        "f(a, b, c): a*b + c": lambda: three(v, v, v),
        "f(x, 3) Python arg": lambda: with_python(x, 3),
    }


def power_table(quick):
    """The guide's benchmark: power(x, 100), 100 int32 10x10 matmuls, eagerly and as a graph."""
    import kiln

    runs = [("kiln", kiln)]
    try:
        import tensorflow as tf

        runs.append(("TensorFlow", tf))
    except ImportError:
        pass
    number = 5 if quick else 100
    x_np = (np.arange(100).reshape(10, 10) % 3 - 1).astype(np.int32)
    print("the guide's power(x, 100): seconds for %d calls" % number)
    print("%-12s%12s%12s%10s" % ("", "eager", "function", "speedup"))
    for name, m in runs:
        x = m.constant(x_np)

        def power(x, y):
            result = m.eye(10, dtype=m.int32)
            for _ in range(y):
                result = m.matmul(x, result)
            return result

        graph = m.function(power)
        graph(x, 100)
        eager_s = min(timeit.repeat(lambda: power(x, 100), number=number, repeat=3))
        graph_s = min(timeit.repeat(lambda: graph(x, 100), number=number, repeat=3))
        print("%-12s%12.4f%12.4f%9.1fx" % (name, eager_s, graph_s, eager_s / graph_s))
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    number, repeat = (200, 3) if args.quick else (5000, 7)

    import kiln

    peers = [("kiln", cases(kiln, kiln.function, kiln.constant))]
    try:
        import tensorflow as tf

        peers.append(("tf.function", cases(tf, tf.function, tf.constant)))
    except ImportError:
        pass
    try:
        import jax
        import jax.numpy as jnp

        jit_cases = cases(jnp, lambda f: jax.jit(f, static_argnums=()), jnp.asarray)
        block = {k: (lambda g: (lambda: g().block_until_ready()))(g) for k, g in jit_cases.items()}
        x = jnp.asarray(np.float32(1.5))
        py = jax.jit(lambda a, n: a * n, static_argnums=(1,))
        block["f(x, 3) Python arg"] = lambda: py(x, 3).block_until_ready()
        peers.append(("jax.jit", block))
    except ImportError:
        pass

    power_table(args.quick)
    names = [n for n, _ in peers]
    rows = list(peers[0][1])
    t = {(n, r): best_us(c[r], number, repeat) for n, c in peers for r in rows}
    print("cached traced-function calls from Python, us per call (best of %d x %d); ratio = peer / kiln"
          % (repeat, number))
    print("python %s, %d cores" % (sys.version.split()[0], os.cpu_count()))
    header = "%-22s" % "case" + "".join("%14s" % n for n in names) + "".join("%18s" % (n + "/kiln") for n in names[1:])
    print(header)
    print("-" * len(header))
    for r in rows:
        print("%-22s" % r + "".join("%14.3f" % t[n, r] for n in names)
              + "".join("%18.1f" % (t[n, r] / t["kiln", r]) for n in names[1:]))


if __name__ == "__main__":
    main()
