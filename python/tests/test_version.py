"""One version everywhere: include/kiln/version.h is its source; the Python package, the
library it loaded, the kiln program, the R package and tf.version all report it."""
import pathlib
import re
import subprocess

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
