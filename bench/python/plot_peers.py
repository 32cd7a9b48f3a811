"""Draws bench_peers.py's JSON as a PNG: for each workload, how many times faster kiln is than
each peer, both from the same language (Python peers against kiln's best Python column, C++
peers against kiln C++); log scale, above 1: kiln is faster.

    python bench/python/plot_peers.py build/bench_peers.json build/bench_peers.png"""
import json
import sys


def main(json_path, png_path):
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on a build machine
    import matplotlib.pyplot as plt

    with open(json_path) as f:
        rows = json.load(f)["rows"]
    peer_names = [n for n in rows[0]["us"] if not n.startswith("kiln")]
    fig, ax = plt.subplots(figsize=(10, 0.55 * len(rows) + 1.5))
    height = 0.8 / max(1, len(peer_names))
    labels = []
    for i, row in enumerate(rows):
        labels.append(row["workload"])
        for j, peer in enumerate(peer_names):
            lang_cpp = peer.endswith("C++")
            kiln_best = min([v for n, v in row["us"].items()
                             if n.startswith("kiln") and v and n.endswith("C++") == lang_cpp], default=None)
            t = row["us"].get(peer)
            if kiln_best and t:
                ax.barh(i + j * height - 0.4 + height / 2, t / kiln_best, height=height, color="C%d" % j,
                        label=peer if i == 0 or peer not in ax.get_legend_handles_labels()[1] else None)
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xscale("log")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.set_xlabel("peer time / kiln time (log scale; right of the line: kiln is faster)")
    ax.set_title("kiln vs its peers, one run (bench/python/bench_peers.py)")
    ax.legend(loc="lower right", fontsize="small")
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
