"""The safety issue's probes, each in a fresh process with a time limit: outcome, wall time and
peak RSS. Run against any build of kiln to compare, e.g. an older one:

    PYTHONPATH=/path/to/old/python .venv/bin/python bench/python/safety_probes.py

Each probe prints one line: name, outcome (ok / the exception / crashed / timed out), seconds,
peak RSS in MB."""
import os
import subprocess
import sys
import tempfile
import textwrap
import time

PROBES = {
    "1 empty broadcast x200": """
        import numpy as np, kiln
        for _ in range(200):
            y = kiln.constant(np.zeros((0, 32), np.float32)) + kiln.constant(np.ones(32, np.float32))
            y = kiln.constant(np.zeros((0, 4, 4, 32), np.float32)) * kiln.constant(np.ones(32, np.float32))
        print(y.shape)
    """,
    "2 import tensorflow, then kiln": """
        import tensorflow, kiln
        print(float(kiln.constant(2.0) * 3.0))
    """,
    "2 import jax, then kiln": """
        import jax, kiln
        print(float(kiln.constant(2.0) * 3.0))
    """,
    "3 index key bomb (2,000 keys of 1 MiB)": "",  # written by main(): the file's path
    "4 Neg/Identity chain of 20,000, traced": """
        import kiln
        @kiln.function(autograph=False)
        def f(x):
            for i in range(20000):
                x = kiln.identity(x) if i % 3 == 2 else -x
            return x
        print(float(f(kiln.constant(2.0))))
    """,
    "5 first call from 8 threads x 50 functions": """
        import threading, kiln
        errors = []
        for _ in range(50):
            f = kiln.function(lambda x: x * 2.0 + 1.0)
            b = threading.Barrier(8)
            def call():
                b.wait()
                try:
                    f(kiln.constant(1.0))
                except Exception as e:
                    errors.append(type(e).__name__)
            ts = [threading.Thread(target=call) for _ in range(8)]
            [t.start() for t in ts]
            [t.join() for t in ts]
        print("errors:", len(errors), sorted(set(errors)))
        assert not errors
    """,
    "6 5,000 distinct Python numbers, then del f": """
        import gc, kiln
        f = kiln.function(lambda x, k: x + k)
        x = kiln.constant(1.0)
        for k in range(5000):
            f(x, k)
        n = f._core.num_records() if hasattr(f._core, "num_records") else "?"
        del f
        gc.collect()
        print("records:", n)
    """,
    "7 FIFO named saved_model.pb": """
        import os, tempfile, kiln
        d = tempfile.mkdtemp()
        os.mkfifo(os.path.join(d, "saved_model.pb"))
        kiln.saved_model.load(d)
    """,
    "7 6 GiB sparse saved_model.pb": """
        import os, tempfile, kiln
        d = tempfile.mkdtemp()
        with open(os.path.join(d, "saved_model.pb"), "wb") as f:
            f.truncate(6 << 30)
        kiln.saved_model.load(d)
    """,
    "8 a served While that never ends, under a 0.2 s limit": """
        import kiln
        @kiln.function
        def spin(x):
            i = kiln.constant(0)
            while i >= 0:
                i += 1
            return x + kiln.cast(i, kiln.float32)
        with kiln.config.run_limits(timeout=0.2):
            spin(kiln.constant(1.0))
    """,
}


def _key_bomb(path, key_bytes=1 << 20, count=2000):
    """A checkpoint index whose keys share all but their last two bytes (see the C++ test)."""
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 & -(c & 1))
        table.append(c)

    def crc32c(data, crc=0):
        crc ^= 0xFFFFFFFF
        for b in data:
            crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
        return crc ^ 0xFFFFFFFF

    def mask(c):
        return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF

    def varint(v):
        out = bytearray()
        while v >= 0x80:
            out.append((v & 0x7F) | 0x80)
            v >>= 7
        out.append(v)
        return bytes(out)

    def block(file, contents):
        contents += (0).to_bytes(4, "little") + (1).to_bytes(4, "little")
        handle = varint(len(file)) + varint(len(contents))
        crc = crc32c(contents + b"\0")
        return file + contents + b"\0" + mask(crc).to_bytes(4, "little"), handle

    entries = varint(0) + varint(key_bytes) + varint(0) + b"k" * key_bytes
    for i in range(1, count + 1):
        entries += varint(key_bytes - 2) + varint(2) + varint(0) + bytes([ord("l") + i // 256, i % 256])
    file, data_handle = block(b"", entries)
    file, meta_handle = block(file, b"")
    file, index_handle = block(file, varint(0) + varint(1) + varint(len(data_handle)) + b"z" + data_handle)
    footer = (meta_handle + index_handle).ljust(40, b"\0") + (0x8B80FB57).to_bytes(4, "little") + \
        (0xDB477524).to_bytes(4, "little")
    with open(path + ".index", "wb") as f:
        f.write(file + footer)


def run_probe(script, env, timeout=120):
    """(outcome, seconds, peak RSS in MB) of one probe process."""
    import signal
    import threading
    out = tempfile.TemporaryFile("w+")
    err = tempfile.TemporaryFile("w+")
    start = time.monotonic()
    p = subprocess.Popen([sys.executable, script], stdout=out, stderr=err, env=env)
    timer = threading.Timer(timeout, lambda: os.kill(p.pid, signal.SIGKILL))
    timer.start()
    _, status, usage = os.wait4(p.pid, 0)
    timer.cancel()
    seconds = time.monotonic() - start
    out.seek(0)
    err.seek(0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        outcome = "timed out (%d s)" % timeout if sig == signal.SIGKILL and seconds >= timeout else \
            "crashed (signal %d)" % sig
    elif os.WEXITSTATUS(status) == 0:
        outcome = "ok: " + ((out.read().strip().splitlines() or [""])[-1][:60])
    else:
        lines = err.read().strip().splitlines() or ["?"]
        errors = [line for line in lines if "Error" in line]
        outcome = (errors or lines)[-1][:100]
    return outcome, seconds, usage.ru_maxrss / 1024


def main():
    tmp = tempfile.mkdtemp()
    bomb = os.path.join(tmp, "ckpt")
    _key_bomb(bomb)
    PROBES["3 index key bomb (2,000 keys of 1 MiB)"] = """
        import kiln
        kiln.train.load_checkpoint(%r)
    """ % bomb
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    for name, code in PROBES.items():
        script = os.path.join(tmp, "probe.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent(code))
        outcome, seconds, rss = run_probe(script, env)
        print("%-52s %-75s %7.2f s %7.0f MB" % (name, outcome, seconds, rss))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
