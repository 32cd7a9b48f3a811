"""How much of the TensorFlow API that TensorFlow's guides and tutorials use kiln has: every
`tf.<name>` (tf.math.reduce_sum, tf.keras.layers.Dense, ...) in the code cells of the
notebooks under the given directories, counted per use, and whether the same dotted name
resolves in kiln. Prints the weighted coverage, with and without tf.keras and tf.data (the
next issues), and the most used names kiln lacks.

    PYTHONPATH=python .venv/bin/python bench/python/api_coverage.py DOCS/site/en/guide DOCS/site/en/tutorials
"""
import collections
import json
import os
import re
import sys

import kiln

_NAME = re.compile(r"\btf\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)")


def _resolves(dotted):
    """Whether kiln has the name: each part an attribute of the last (a name used as a method
    of a class, tf.Variable.assign, resolves through the class)."""
    obj = kiln
    for part in dotted.split("."):
        try:
            obj = getattr(obj, part)
        except Exception:  # noqa: BLE001: kiln's missing names raise AttributeError (or worse)
            return False
    return True


def _uses(directories):
    counts = collections.Counter()
    notebooks = 0
    for directory in directories:
        for root, _, files in os.walk(directory):
            for name in sorted(files):
                if not name.endswith(".ipynb"):
                    continue
                notebooks += 1
                with open(os.path.join(root, name)) as f:
                    cells = json.load(f).get("cells", [])
                for cell in cells:
                    if cell.get("cell_type") != "code":
                        continue
                    source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
                    counts.update(_NAME.findall(source))
    return notebooks, counts


def main():
    notebooks, counts = _uses(sys.argv[1:])
    has = {name: _resolves(name) for name in counts}

    def share(pred):
        total = sum(n for name, n in counts.items() if pred(name))
        got = sum(n for name, n in counts.items() if pred(name) and has[name])
        return got, total

    later = ("keras", "data")
    rows = [("all uses", share(lambda n: True)),
            ("without tf.keras and tf.data", share(lambda n: n.split(".")[0] not in later)),
            ("tf.data alone", share(lambda n: n.split(".")[0] == "data"))]
    print("%d notebooks, %d distinct tf.* names, %d uses" % (notebooks, len(counts), sum(counts.values())))
    print("| uses of tf.* names | kiln has | of | share |")
    print("|---|---|---|---|")
    for label, (got, total) in rows:
        print("| %s | %d | %d | %.1f%% |" % (label, got, total, 100.0 * got / max(total, 1)))
    missing = [(n, name) for name, n in counts.items() if not has[name] and name.split(".")[0] not in later]
    print("\nMost used names kiln lacks (without tf.keras and tf.data):")
    print(", ".join("tf.%s (%d)" % (name, n) for n, name in sorted(missing, reverse=True)[:40]))
    data = sorted(((n, name) for name, n in counts.items() if name.split(".")[0] == "data"), reverse=True)
    print("\ntf.data names by use (kiln has: yes/no):")
    print(", ".join("tf.%s (%d, %s)" % (name, n, "yes" if has[name] else "no") for n, name in data))


if __name__ == "__main__":
    main()
