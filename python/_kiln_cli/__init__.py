"""The `kiln` console command a pip install puts on PATH: runs the kiln program that rides in
the kiln package (kiln/_bin/kiln: show, run, graph, export-tfjs; `kiln --help`).

It lives outside the kiln package so that starting it does not import kiln (its extension,
numpy: about 0.7 s) only to exec a program: it finds the package without importing it, and
chooses OpenBLAS as `import kiln` would (kiln/_openblas.py, run as a file of its own)."""
import importlib.util
import os
import sys


def _kiln_dir():
    spec = importlib.util.find_spec("kiln")  # finds the package; does not run its __init__
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def program_path():
    pkg = _kiln_dir()
    return os.path.join(pkg, "_bin", "kiln") if pkg else None


def main():
    path = program_path()
    if not path or not os.path.isfile(path):
        sys.stderr.write("kiln: this kiln package has no command-line program (a development build puts it in "
                         "build/tools/kiln; a wheel or `pip install .` in kiln/_bin/kiln)\n")
        return 2
    spec = importlib.util.spec_from_file_location("_kiln_openblas", os.path.join(_kiln_dir(), "_openblas.py"))
    openblas = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(openblas)
    openblas.point_at_wheel_openblas()
    os.execv(path, [path] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
