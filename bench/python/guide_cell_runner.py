"""Runs one notebook's code cells in one process, as Jupyter would, and writes what each cell
did as JSON lines: whether it raised, and what it printed (stdout and stderr at the file
descriptor, so that output from C++ counts too, plus the repr of a last expression).

    guide_cell_runner.py tensorflow|kiln NOTEBOOK.ipynb OUT.jsonl

In `kiln` mode, `tensorflow` and `tensorflow.<sub>` resolve to `kiln` and `kiln.<sub>`, so
the notebook runs unchanged; a submodule kiln lacks fails to import, as it would for a user.
Shell (`!`) and magic (`%`) lines are dropped in both modes. guide_cells.py drives this.
"""
import ast
import importlib
import importlib.abc
import importlib.util
import json
import linecache
import os
import signal
import sys
import tempfile
import threading
import traceback
import warnings

CELL_SECONDS = 120


class _TensorflowIsKiln(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers `import tensorflow[.x]` with the kiln module of the same path."""

    def find_spec(self, name, path=None, target=None):
        if name != "tensorflow" and not name.startswith("tensorflow."):
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        return importlib.import_module("kiln" + spec.name[len("tensorflow"):])

    def exec_module(self, module):
        pass


class _CellTimeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _CellTimeout("cell ran longer than %d s" % CELL_SECONDS)


def _give_up(out, index, source):
    out.write(json.dumps({"cell": index, "source": source, "error": "Timeout: cell hung in native code",
                          "printed": ""}) + "\n")
    out.flush()
    os._exit(3)


def _cell_source(cell):
    text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    kept = [line for line in text.split("\n") if not line.lstrip().startswith(("!", "%"))]
    return "\n".join(kept)


def _run(source, namespace, index):
    # The cell's text in linecache, as Jupyter keeps it: AutoGraph (TensorFlow's and kiln's)
    # reads a function's source to convert it.
    filename = "<cell-%d>" % index
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    tree = ast.parse(source)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, filename, "exec"), namespace)
    if last is not None:
        value = eval(compile(last, filename, "eval"), namespace)
        if value is not None:
            print(repr(value))


def main():
    mode, notebook, out_path = sys.argv[1:4]
    if mode == "kiln":
        sys.meta_path.insert(0, _TensorflowIsKiln())
    warnings.simplefilter("ignore")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    signal.signal(signal.SIGALRM, _on_alarm)
    with open(notebook) as f:
        cells = [c for c in json.load(f)["cells"] if c["cell_type"] == "code"]
    namespace = {"__name__": "__main__"}
    capture = tempfile.TemporaryFile(mode="w+b")
    saved = (os.dup(1), os.dup(2))
    with open(out_path, "w") as out:
        for index, cell in enumerate(cells):
            source = _cell_source(cell)
            capture.seek(0)
            capture.truncate()
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(capture.fileno(), 1)
            os.dup2(capture.fileno(), 2)
            error = None
            # A cell stuck in C++ never sees SIGALRM: after a grace period the process ends,
            # and the driver counts this cell and the rest as not run.
            watchdog = threading.Timer(CELL_SECONDS + 30, _give_up, (out, index, source))
            watchdog.daemon = True
            watchdog.start()
            signal.alarm(CELL_SECONDS)
            try:
                _run(source, namespace, index)
            except BaseException as e:  # noqa: BLE001: a cell's failure is the measurement
                error = "%s: %s" % (type(e).__name__, str(e).split("\n")[0][:300])
                if isinstance(e, KeyboardInterrupt):
                    raise
                traceback.print_exc(limit=0, file=open(os.devnull, "w"))
            finally:
                signal.alarm(0)
                watchdog.cancel()
                sys.stdout.flush()
                sys.stderr.flush()
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
            capture.seek(0)
            printed = capture.read().decode("utf-8", "replace")
            out.write(json.dumps({"cell": index, "source": source, "error": error, "printed": printed}) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
