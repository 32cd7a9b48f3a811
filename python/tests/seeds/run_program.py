"""Runs one seed program with `tf` bound to TensorFlow or to kiln (argv: module, program path).

The program's stdout is what the test compares; an exception ends the program with one line
naming its class, so that the two runs can be compared there too."""
import importlib
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def main():
    module, path = sys.argv[1], sys.argv[2]
    tf = importlib.import_module(module)
    import numpy as np

    source = open(path).read()
    scope = {"__name__": "__main__", "__file__": path, "tf": tf, "np": np}
    try:
        exec(compile(source, path, "exec"), scope)
    except Exception as e:  # noqa: BLE001 (the class is the outcome)
        import traceback

        traceback.print_exc()  # to stderr: for the reader of a failure, not compared
        print("RAISED %s" % type(e).__name__)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
