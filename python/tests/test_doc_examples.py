"""Every ```python example in README.md, CHANGELOG.md and docs/*.md runs, each file in a fresh
interpreter (scripts/doc_examples.py says how blocks are chosen): doctest blocks compare their
printed output, others must run without raising. So the docs cannot drift from the code."""
import doctest
import importlib.util
import pathlib
import subprocess
import sys

import pytest

_SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "doc_examples.py"
_SPEC = importlib.util.spec_from_file_location("doc_examples", _SCRIPT)
doc_examples = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(doc_examples)

_FILES = [p for p in doc_examples.doc_files()
          if any(b.language == "python" and not b.no_test for b in doc_examples.blocks(p))]


@pytest.mark.parametrize("path", _FILES, ids=lambda p: str(p.relative_to(doc_examples.ROOT)))
def test_python_examples_in(path, tmp_path):
    # In tmp_path: examples that write files write them there.
    result = subprocess.run([sys.executable, str(_SCRIPT), "python", str(path)], cwd=tmp_path,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr


def test_doc_examples_are_counted():
    blocks = doc_examples.all_blocks("python")
    run = [b for b in blocks if not b.no_test]
    examples = sum(len(doctest.DocTestParser().get_examples(b.text)) or 1 for b in run)
    print(f"{len(run)} Python doc blocks run ({examples} examples); "
          f"{len(blocks) - len(run)} shown only: {[b.name for b in blocks if b.no_test]}")
    assert len(run) >= 5
