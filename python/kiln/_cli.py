"""The `kiln` console command a pip install puts on PATH: runs the kiln program that rides in
the package (kiln/_bin/kiln: show, run, graph, export-tfjs; `kiln --help`)."""
import os
import sys


def program_path():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "kiln")


def main():
    path = program_path()
    if not os.path.isfile(path):
        sys.stderr.write("kiln: this kiln package has no command-line program (a development build puts it in "
                         "build/tools/kiln; a wheel or `pip install .` in kiln/_bin/kiln)\n")
        return 2
    os.execv(path, [path] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
