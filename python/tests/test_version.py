"""One version everywhere: include/kiln/version.h is its source; the Python package, the
library it loaded, the kiln program, the R package and tf.version all report it."""
import json
import os
import pathlib
import re
import subprocess
import sys

import kiln

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _header_version():
    text = (ROOT / "include" / "kiln" / "version.h").read_text()
    return re.search(r'#define KILN_VERSION "([0-9.]+)"', text).group(1)


def test_python_package_and_library_agree_with_the_header():
    version = _header_version()
    parts = dict(re.findall(r"#define KILN_VERSION_(MAJOR|MINOR|PATCH) (\d+)",
                            (ROOT / "include" / "kiln" / "version.h").read_text()))
    assert version == f"{parts['MAJOR']}.{parts['MINOR']}.{parts['PATCH']}"
    assert kiln.__version__ == version
    assert kiln._core.version() == version
    assert kiln.version.VERSION == version


def test_r_package_and_program_agree_with_the_header():
    version = _header_version()
    description = (ROOT / "r" / "DESCRIPTION").read_text()
    assert re.search(r"^Version: (.*)$", description, re.M).group(1) == version
    program = ROOT / "build" / "tools" / "kiln"
    if program.exists():  # a development build (the wheel's program is checked by make wheel-test)
        out = subprocess.run([str(program), "--version"], capture_output=True, text=True, check=True).stdout
        assert out.startswith(f"kiln {version} (cpu_isa ")


def test_the_kiln_command_starts_without_importing_kiln():
    # The console command (_kiln_cli) only execs kiln/_bin/kiln; importing kiln (its extension,
    # numpy) would cost ~0.7 s per start. Its exec is caught here: where the program is
    # installed (a wheel) it must be the package's, with the OpenBLAS `import kiln` would pick.
    code = (
        "import json, os, sys, _kiln_cli\n"
        "seen = {}\n"
        "os.execv = lambda path, argv: seen.update(path=path, argv=argv)\n"
        "seen['result'] = _kiln_cli.main()\n"
        "assert 'kiln' not in sys.modules, 'the kiln command imported the kiln package'\n"
        "seen['openblas'] = os.environ.get('KILN_OPENBLAS_LIBRARY')\n"
        "print(json.dumps(seen))\n")
    env = {k: v for k, v in os.environ.items() if k != "KILN_OPENBLAS_LIBRARY"}
    seen = json.loads(subprocess.run([sys.executable, "-c", code, "--version"], capture_output=True, text=True,
                                     check=True, env=env).stdout)
    program = pathlib.Path(kiln.__file__).parent / "_bin" / "kiln"
    if program.exists():
        assert seen["path"] == str(program) and seen["argv"] == [str(program), "--version"], seen
        try:
            import scipy_openblas32  # noqa: F401
            assert "libscipy_openblas" in seen["openblas"], seen
        except ImportError:
            pass
    else:  # a development tree: the program is in build/tools, and the command says so
        assert seen["result"] == 2 and "path" not in seen, seen
