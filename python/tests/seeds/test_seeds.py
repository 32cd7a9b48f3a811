"""The seeds' Python programs (shared/seeds: the tf.function API page and the guide), each run
twice, with `tf` bound to TensorFlow and to kiln, in separate processes: their printed output
(values, tracing counts, signatures, exception classes) must be the same.

Differences in spelling only are normalized: `kiln.` prints where TensorFlow prints `tf.`,
and object addresses differ."""
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = sorted(f for f in os.listdir(os.path.join(HERE, "programs")) if f.endswith(".py"))


def run(module, program):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONHASHSEED="0")
    r = subprocess.run([sys.executable, os.path.join(HERE, "run_program.py"), module,
                        os.path.join(HERE, "programs", program)], capture_output=True, text=True, timeout=300,
                       env=env)
    assert r.returncode == 0, "%s under %s crashed:\n%s" % (program, module, r.stderr[-3000:])
    return r.stdout


def normalized(text):
    text = re.sub(r"\bkiln\.", "tf.", text)
    return re.sub(r"0x[0-9a-fA-F]+", "0xADDR", text)


@pytest.mark.parametrize("program", PROGRAMS)
def test_seed_program_prints_what_tensorflow_prints(program):
    pytest.importorskip("tensorflow")
    expected = normalized(run("tensorflow", program))
    got = normalized(run("kiln", program))
    assert got == expected, "%s\n--- TensorFlow\n%s\n--- kiln\n%s" % (program, expected, got)


def run_with_stderr(module, program):  # for debugging a failure by hand
    return subprocess.run([sys.executable, os.path.join(HERE, "run_program.py"), module,
                           os.path.join(HERE, "programs", program)], capture_output=True, text=True)
