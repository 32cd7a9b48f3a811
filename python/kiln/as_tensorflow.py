"""Run an unchanged TensorFlow program on kiln:

    python -m kiln.as_tensorflow SCRIPT [ARGS...]
    python -m kiln.as_tensorflow -m MODULE [ARGS...]     (e.g. -m pytest)

In that process every `import tensorflow` (and `from tensorflow.X import Y` for the modules kiln
provides) gives kiln, and reprs say `tf.` as TensorFlow's do. Inside a program, call
kiln.install_as_tensorflow() before anything imports tensorflow.
"""
import os
import runpy
import sys

from ._tensorflow_alias import install

_USAGE = "usage: python -m kiln.as_tensorflow SCRIPT [ARGS...] | -m MODULE [ARGS...]"


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip() if argv else _USAGE, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    install()
    if argv[0] == "-m":
        if len(argv) < 2:
            print(_USAGE, file=sys.stderr)
            return 2
        sys.argv = [argv[1]] + argv[2:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        script = argv[0]
        sys.argv = list(argv)
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
