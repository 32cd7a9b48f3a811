"""One table from several Google Benchmark JSON files (kiln_bench --benchmark_format=json):
a column per run, the time per benchmark in its own unit, and each run's ratio to the first.

    python bench/python/compare_runs.py before=a.json after=b.json [...]

Used to compare builds (-march=native against the portable build) and instruction-set
levels (KILN_CPU_ISA) on one machine, in one session."""
import json
import sys


def _load(path):
    with open(path) as f:
        data = json.load(f)
    rows = {}
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b.get("run_name", b["name"])
        rows[name] = (b["real_time"], b["time_unit"])  # wall time: some benchmarks use the thread pool
    return rows, data.get("context", {})


def main(argv):
    runs = []
    for arg in argv:
        label, _, path = arg.partition("=")
        runs.append((label, *_load(path)))
    names = [n for n in runs[0][1]]
    width = max(len(n) for n in names) + 2
    head = "benchmark".ljust(width) + "".join(label.rjust(14) for label, _, _ in runs)
    head += "".join(("%s/%s" % (label, runs[0][0])).rjust(16) for label, _, _ in runs[1:])
    print("CPU: %s" % runs[0][2].get("cpu_description", runs[0][2].get("host_name", "?")))
    print(head)
    print("-" * len(head))
    for n in names:
        cells = [r[1].get(n) for r in runs]
        line = n.ljust(width)
        line += "".join(("%.3f %s" % c if c else "-").rjust(14) for c in cells)
        base = cells[0][0] if cells[0] else None
        line += "".join((("%.2f" % (c[0] / base)) if c and base else "-").rjust(16) for c in cells[1:])
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
