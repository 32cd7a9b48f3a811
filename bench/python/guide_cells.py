"""TensorFlow's public guides, cell by cell, on TensorFlow and on kiln in the same run: how many
code cells each runs, and how many print what TensorFlow prints. Prints a markdown table per
guide, then kiln's failures grouped by message (the causes, by cells lost).

    PYTHONPATH=python .venv/bin/python bench/python/guide_cells.py GUIDE_DIR [guide ...]

GUIDE_DIR is site/en/guide of a checkout of github.com/tensorflow/docs (nothing is
downloaded here). Each guide runs in one process per framework, like a notebook. TensorFlow
runs each guide twice: a cell whose two TensorFlow runs print different things (unseeded
random numbers, timings, addresses) cannot be compared and is counted apart. When printed
text is compared, `kiln.` reads as `tf.`, and hexadecimal addresses and log lines are ignored.
With GUIDE_CELLS_DIFFS=FILE set, the cells that print differently are written there as JSON.
GUIDE_CELLS_EXTRAS=DIR puts DIR on both frameworks' path: the guides plot with matplotlib and
read tables with pandas, which the project's .venv does not hold (pip install --target DIR
matplotlib pandas seaborn, for the measurement only); without them those cells fail in both.
"""
import collections
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

GUIDES = [
    "basics", "tensor", "variable", "autodiff", "advanced_autodiff", "intro_to_modules",
    "intro_to_graphs", "function", "basic_training_loops", "tensor_slicing", "random_numbers",
    "core/quickstart_core", "core/logistic_regression_core", "core/mlp_core", "core/matrix_core",
    "core/optimizers_core",
]
GUIDE_SECONDS = 3600
_HERE = os.path.dirname(os.path.abspath(__file__))
_LOG_LINE = re.compile(
    r"^(WARNING|INFO|ERROR|W|I|E)[:\d].*|.*(oneDNN|cuda|TensorRT|rebuild TensorFlow|absl::|"
    r"This TensorFlow binary|instructions in performance-critical|computation_placer).*$")


def _normalize(text):
    lines = [line for line in text.split("\n") if not _LOG_LINE.match(line)]
    text = "\n".join(lines).strip()
    text = re.sub(r"0x[0-9a-fA-F]+", "0x?", text)
    return text.replace("kiln.", "tf.")


def _run(mode, notebook, tag):
    out = os.path.join(tempfile.gettempdir(), "guide_cells_%s_%s.jsonl" % (tag, os.getpid()))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONHASHSEED="0", MPLBACKEND="Agg")
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(_HERE, "..", "..", "python"), env.get("GUIDE_CELLS_EXTRAS", ""),
                                         env.get("PYTHONPATH", "")])
    with tempfile.TemporaryDirectory() as cwd:  # guides write files where they run
        try:
            subprocess.run([sys.executable, os.path.join(_HERE, "guide_cell_runner.py"), mode, notebook, out],
                           cwd=cwd, env=env, timeout=GUIDE_SECONDS, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            pass
    cells = []
    if os.path.exists(out):
        with open(out) as f:
            cells = [json.loads(line) for line in f]
        os.remove(out)
    return cells


def _measure(guide_dir, guide):
    notebook = os.path.join(guide_dir, guide + ".ipynb")
    with open(notebook) as f:
        total = sum(1 for c in json.load(f)["cells"] if c["cell_type"] == "code")
    tag = guide.replace("/", "_")
    tf1 = _run("tensorflow", notebook, tag + "_tf1")
    tf2 = _run("tensorflow", notebook, tag + "_tf2")
    mine = _run("kiln", notebook, tag + "_kiln")
    row = collections.Counter(cells=total)
    failures = []
    diffs = []
    for i, first in enumerate(tf1):
        if first["error"]:
            continue
        row["tf_runs"] += 1
        second = tf2[i] if i < len(tf2) else None
        deterministic = second is not None and _normalize(second["printed"]) == _normalize(first["printed"])
        row["tf_deterministic"] += deterministic
        ours = mine[i] if i < len(mine) else None
        if ours is None or ours["error"]:
            failures.append((guide, i, ours["error"] if ours else "not reached (the guide's process ended)"))
            continue
        row["kiln_runs"] += 1
        if deterministic and _normalize(ours["printed"]) == _normalize(first["printed"]):
            row["kiln_same"] += 1
        elif deterministic:
            failures.append((guide, i, "prints differently"))
            diffs.append({"guide": guide, "cell": i, "source": first["source"],
                          "tensorflow": _normalize(first["printed"]), "kiln": _normalize(ours["printed"])})
    return guide, row, failures, diffs


def _pct(a, b):
    return "%d%%" % round(100.0 * a / b) if b else "-"


def main():
    guide_dir = sys.argv[1]
    guides = sys.argv[2:] or GUIDES
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda g: _measure(guide_dir, g), guides))
    print("| guide | code cells | TF runs | kiln runs | TF prints the same twice | kiln prints as TF |")
    print("|---|---|---|---|---|---|")
    total = collections.Counter()
    for guide, row, _, _ in results:
        total.update(row)
        print("| %s | %d | %d | %d | %d | %d |" % (guide, row["cells"], row["tf_runs"], row["kiln_runs"],
                                                  row["tf_deterministic"], row["kiln_same"]))
    print("| **all** | %d | %d | %d (%s) | %d | %d (%s of TF runs, %s of comparable) |" % (
        total["cells"], total["tf_runs"], total["kiln_runs"], _pct(total["kiln_runs"], total["tf_runs"]),
        total["tf_deterministic"], total["kiln_same"], _pct(total["kiln_same"], total["tf_runs"]),
        _pct(total["kiln_same"], total["tf_deterministic"])))
    if os.environ.get("GUIDE_CELLS_DIFFS"):
        with open(os.environ["GUIDE_CELLS_DIFFS"], "w") as f:
            json.dump([d for r in results for d in r[3]], f, indent=1)
    causes = collections.defaultdict(list)
    for _, _, failures, _ in results:
        for guide, cell, why in failures:
            causes[re.sub(r"\d+", "N", why)[:160]].append("%s#%d" % (guide, cell))
    print("\n| cells lost | why (kiln) | where |")
    print("|---|---|---|")
    for why, where in sorted(causes.items(), key=lambda kv: -len(kv[1])):
        print("| %d | %s | %s |" % (len(where), why.replace("|", "\\|"), " ".join(where[:6])))


if __name__ == "__main__":
    main()
