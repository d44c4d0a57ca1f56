"""Recall vs density per pattern, one panel per planted head type, from mm-prefill runs (metrics.json).

    python mm_prefill/summarize.py OUT_DIR RUN/metrics.json ...
"""

import sys
from pathlib import Path

from paperkit.core.io import read_json
from paperkit.core.plots import new_figure, save_figure
from paperkit.core.tables import write_table


def main(out_dir: str, *runs: str) -> None:
    rows = []
    for path in runs:
        m = read_json(path)
        planted = m["summary"]["planted"][0]
        for h in m["heads"]:
            rows.append({"pattern": h["pattern"], "planted": planted[h["head"]], "density_budget":
                         m["summary"]["density_budget"], "density": h["density"], "recall": h["recall"],
                         "rel_l2": h["rel_l2"]})
    rows.sort(key=lambda r: (r["planted"], r["pattern"], r["density_budget"]))
    write_table(Path(out_dir) / "recall_vs_density.csv", rows)
    types = sorted({r["planted"] for r in rows})
    fig, axes = new_figure(1, len(types), figsize=(3.2 * len(types), 3.2), sharey=True)
    for ax, t in zip(axes, types, strict=True):
        for p in sorted({r["pattern"] for r in rows}):
            pts = sorted((r["density"], r["recall"]) for r in rows if r["planted"] == t and r["pattern"] == p)
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", ms=3, label=p)
        ax.set_title(f"planted {t}", fontsize=9)
        ax.set_xlabel("density (fraction of causal pairs)")
        ax.set_xlim(0, None)
    axes[0].set_ylabel("attention-mass recall")
    axes[-1].legend(fontsize=7)
    save_figure(fig, Path(out_dir) / "recall_vs_density.png")


if __name__ == "__main__":
    main(*sys.argv[1:])
