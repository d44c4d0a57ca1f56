"""Collect P(irreversible) per mitigation start year from the sweep run dirs: a CSV and a PNG.

Usage: python p_irreversible.py OUT.csv OUT.png RUN_DIR...  (each RUN_DIR is out/start-YEAR/ of example.mk)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from paperkit.core import plots, tables


def main(argv: list[str]) -> None:
    csv_path, png_path, *dirs = argv
    rows = []
    for d in dirs:
        sm = json.loads((Path(d) / "summary.json").read_text())
        lo, hi = sm["p_irreversible_ci95"]
        rows.append({"start_year": int(Path(d).name.split("-")[-1]), "p_irreversible": sm["p_irreversible"],
                     "ci95_low": lo, "ci95_high": hi, "draws": sm["simulations"]})
    rows.sort(key=lambda r: r["start_year"])
    tables.write_table(csv_path, rows)
    fig, ax = plots.new_figure(figsize=(5.5, 3.5))
    x = [r["start_year"] for r in rows]
    ax.plot(x, [r["p_irreversible"] for r in rows], "o-", color="C3")
    ax.fill_between(x, [r["ci95_low"] for r in rows], [r["ci95_high"] for r in rows], color="C3", alpha=0.2,
                    label="95% Wilson interval")
    ax.set_xlabel("start year of mitigation (all four families)")
    ax.set_ylabel("P(irreversible) over the priors")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(loc="upper left")
    plots.save_figure(fig, png_path)
    for r in rows:
        print(f"{r['start_year']:>4}  {r['p_irreversible']:.3f}  [{r['ci95_low']:.3f}, {r['ci95_high']:.3f}]")


if __name__ == "__main__":
    main(sys.argv[1:])
