"""docs/ops.md is generated from the registry (scripts/gen_op_docs.py): it must match the rows."""
import importlib.util
import os

import kiln

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def _generator():
    spec = importlib.util.spec_from_file_location("gen_op_docs", os.path.join(ROOT, "scripts", "gen_op_docs.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ops_md_is_current():
    text = _generator().render(kiln._core._op_catalog(), [d.name for d in kiln._dtypes.ALL])
    with open(os.path.join(ROOT, "docs", "ops.md")) as f:
        assert f.read() == text, "docs/ops.md is stale: run `make docs`"


def test_every_op_has_an_entry():
    with open(os.path.join(ROOT, "docs", "ops.md")) as f:
        text = f.read()
    for op in kiln._core._op_catalog():
        assert "| `%s`" % op["name"] in text, op["name"]
