"""Collect the metrics.json of the mvml example runs into one table (CSV) and one bar chart (PNG).

Usage: python summarize.py OUT.csv OUT.png RUN_DIR...
"""

import sys
from pathlib import Path

import numpy as np

from paperkit.core import io, plots, tables


def main(out_csv: str, out_png: str, *runs: str) -> None:
    rows = []
    for run in runs:
        rep = io.read_json(Path(run) / "metrics.json")
        for method, vals in rep["cv"]["summary"].items():
            rows.append({"dataset": Path(run).name, "method": method,
                         **{f"{k}_mean": v["mean"] for k, v in vals.items()},
                         **{f"{k}_std": v["std"] for k, v in vals.items()}})
    tables.write_table(out_csv, rows)
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    fig, ax = plots.new_figure(figsize=(10, 3.8))
    width = 0.8 / len(methods)
    for i, meth in enumerate(methods):
        means = [next(r["average_precision_mean"] for r in rows if r["dataset"] == d and r["method"] == meth) for d in datasets]
        stds = [next(r["average_precision_std"] for r in rows if r["dataset"] == d and r["method"] == meth) for d in datasets]
        ax.bar(np.arange(len(datasets)) + i * width, means, width, yerr=stds, label=meth, capsize=2)
    ax.set_xticks(np.arange(len(datasets)) + 0.4 - width / 2)
    ax.set_xticklabels(datasets)
    lo = min(r["average_precision_mean"] for r in rows)
    ax.set_ylim(max(0.0, lo - 0.05), 1.0)
    ax.set_ylabel("average precision (5 splits)")
    ax.legend(ncol=4, fontsize=8, loc="lower left")
    fig.tight_layout()
    plots.save_figure(fig, out_png)


if __name__ == "__main__":
    main(*sys.argv[1:])
