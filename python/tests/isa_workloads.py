"""The kernels that runtime CPU dispatch builds per instruction-set level, as programs run
alike by kiln and TensorFlow (test_cpu_isa_levels.py runs kiln once per level).
Run as a script: `python isa_workloads.py OUT.npz` saves kiln's results at the level
KILN_CPU_ISA asks for."""
import sys

import numpy as np


def _inputs():
    rng = np.random.default_rng(7)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    return {
        "a": f(37, 129), "b": f(37, 129), "row": f(129), "col": f(37, 1),
        "d": rng.standard_normal((5, 300)), "i": rng.integers(-1000, 1000, (37, 129), dtype=np.int32),
        "m10": f(10, 10), "m10i": rng.integers(-50, 50, (10, 10), dtype=np.int32), "m12": f(12, 200),
        "w200": f(200, 300), "big": f(300, 300), "img1": f(2, 17, 19, 1), "img": f(2, 13, 11, 24),
        "k1": f(3, 3, 1, 16), "k": f(3, 3, 24, 32), "dw1": f(3, 3, 24, 1), "dw2": f(3, 3, 24, 2),
        "bias32": f(32), "long": f(70001),
    }


def workloads():
    """name -> fn(tf-like module, inputs) returning one tensor."""
    return {
        "add_bcast": lambda m, x: m.add(x["a"], x["row"]),
        "sub_col": lambda m, x: m.subtract(x["col"], x["a"]),
        "mul": lambda m, x: m.multiply(x["a"], x["b"]),
        "div": lambda m, x: m.divide(x["a"], x["b"] + 3.0),
        "max_scalar": lambda m, x: m.maximum(x["a"], 0.25),
        "int_mul_add": lambda m, x: m.add(m.multiply(x["i"], x["i"]), 7),
        "f64_mul": lambda m, x: m.multiply(x["d"], x["d"]),
        "exp": lambda m, x: m.exp(x["a"]),
        "tanh": lambda m, x: m.tanh(x["a"]),
        "sigmoid": lambda m, x: m.sigmoid(x["a"]),
        "log": lambda m, x: m.math.log(m.abs(x["a"]) + 1e-3),
        "sqrt": lambda m, x: m.sqrt(m.abs(x["a"])),
        "rsqrt": lambda m, x: m.math.rsqrt(m.abs(x["a"]) + 0.5),
        "relu": lambda m, x: m.nn.relu(x["a"]),
        "leaky_relu": lambda m, x: m.nn.leaky_relu(x["a"], 0.1),
        "sum_all": lambda m, x: m.reduce_sum(x["long"]),
        "sum_rows": lambda m, x: m.reduce_sum(x["a"], axis=1),
        "sum_cols": lambda m, x: m.reduce_sum(x["a"], axis=0),
        "max_rows": lambda m, x: m.reduce_max(x["a"], axis=1),
        "max_cols": lambda m, x: m.reduce_max(x["a"], axis=0),
        "prod_cols": lambda m, x: m.reduce_prod(x["a"][:5] * 0.5 + 1.0, axis=0),
        "int_sum_cols": lambda m, x: m.reduce_sum(x["i"], axis=0),
        "softmax": lambda m, x: m.nn.softmax(x["a"]),
        "log_softmax": lambda m, x: m.nn.log_softmax(x["a"]),
        "matmul10": lambda m, x: m.matmul(x["m10"], x["m10"]),
        "matmul10_int": lambda m, x: m.matmul(x["m10i"], x["m10i"]),
        "matmul_short_rows": lambda m, x: m.matmul(x["m12"], x["w200"]),
        "matmul_tn": lambda m, x: m.matmul(x["w200"], x["w200"], transpose_a=True),
        "matmul_big": lambda m, x: m.matmul(x["big"], x["big"]),
        "conv_thin": lambda m, x: m.nn.conv2d(x["img1"], x["k1"], 1, "SAME"),
        "conv": lambda m, x: m.nn.conv2d(x["img"], x["k"], 1, "SAME"),
        "conv_bias_relu": lambda m, x: m.nn.relu(m.nn.bias_add(m.nn.conv2d(x["img"], x["k"], 2, "VALID"),
                                                               x["bias32"])),
        "depthwise": lambda m, x: m.nn.depthwise_conv2d(x["img"], x["dw1"], [1, 1, 1, 1], "SAME"),
        "depthwise_x2": lambda m, x: m.nn.depthwise_conv2d(x["img"], x["dw2"], [1, 2, 2, 1], "SAME"),
        "max_pool": lambda m, x: m.nn.max_pool2d(x["img"], 3, 2, "SAME"),
        "avg_pool": lambda m, x: m.nn.avg_pool2d(x["img"], 3, 2, "SAME"),
        "fused_chain": lambda m, x: m.function(lambda a, b: m.tanh(a * 2.0 + 1.0) - a * b + m.sigmoid(b))(
            x["a"], x["b"]),
    }


def run_kiln(path):
    import kiln

    x = _inputs()
    out = {name: np.asarray(fn(kiln, x)) for name, fn in workloads().items()}
    out["__cpu_isa__"] = np.array(kiln.sysconfig.get_build_info()["cpu_isa"])
    np.savez(path, **out)


def run_tf():
    import tensorflow as tf

    x = _inputs()
    return {name: np.asarray(fn(tf, x)) for name, fn in workloads().items()}


if __name__ == "__main__":
    run_kiln(sys.argv[1])
