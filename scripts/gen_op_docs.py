"""Writes docs/ops.md from kiln's op registry: one entry per op row (inputs, attrs, dtypes,
gradient, TensorFlow.js, kiln.raw_ops). `make docs` runs it; a test fails when the file is stale.

    PYTHONPATH=python .venv/bin/python scripts/gen_op_docs.py [--check]
"""
import os
import sys

HEADER = """# Ops

Generated from kiln's op registry by `scripts/gen_op_docs.py` (`make docs`); do not edit by
hand. Each op is one row in `src/ops/` (its TensorFlow name, inputs, attrs, shape function,
kernels and gradient); `kiln.raw_ops.<Name>(**kwargs)` runs any op marked *raw_ops* with
TensorFlow's keyword arguments, eagerly or inside a `kiln.function`.

Columns: **dtypes** the dtypes of its type attr kiln has kernels for (*any*: one kernel moves
or dispatches on bytes of every dtype); **gradient** *yes* (defined), *none* (TensorFlow's
NotDifferentiable: nothing flows back) or *missing* (differentiating through it is an error);
**TF.js** whether `kiln export-tfjs` may write it; **raw_ops** whether `kiln.raw_ops` has it
(ops that need a variable or a function, or that the optimizer makes, do not).
"""


def _arg(a):
    name, is_list, number_attr, api = a
    text = "`%s`" % api
    if is_list:
        text += "[%s]" % (number_attr or "…")
    if api != name:
        text += " (GraphDef: `%s`)" % name
    return text


def _attr(a):
    name, kind, default, api = a
    text = "`%s`: %s" % (api, kind)
    if default is not None:
        text += " = `%s`" % default
    if api != name:
        text += " (GraphDef: `%s`)" % name
    return text


def render(catalog, all_dtypes):
    ops = sorted(catalog, key=lambda op: op["name"])
    public = [op for op in ops if not op["internal"]]
    lines = [HEADER, "%d ops (%d saved in graphs, %d made only by kiln's optimizer); %d in `kiln.raw_ops`." % (
        len(ops), len(public), len(ops) - len(public), sum(op["runnable"] for op in ops)), ""]
    lines += ["| op | inputs | attrs | dtypes | gradient | TF.js | raw_ops |",
              "|---|---|---|---|---|---|---|"]
    for op in ops:
        dtypes = "any" if op["dtypes"] == all_dtypes else ", ".join(op["dtypes"])
        name = "`%s`" % op["name"] + (" (internal)" if op["internal"] else "")
        lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            name, ", ".join(_arg(a) for a in op["inputs"]) or "—",
            "<br>".join(_attr(a) for a in op["attrs"]) or "—", dtypes or "—", op["gradient"],
            "yes" if op["tfjs"] else "", "yes" if op["runnable"] else ""))
    return "\n".join(lines) + "\n"


def main():
    import kiln
    text = render(kiln._core._op_catalog(), [d.name for d in kiln._dtypes.ALL])
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "ops.md")
    if "--check" in sys.argv:
        with open(path) as f:
            if f.read() != text:
                sys.exit("docs/ops.md is stale: run `make docs`")
        return
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
