"""Markdown tables (mean ± standard error over seeds) from ldsmc-bench run folders, as in README.md.

    python examples/ldsmc/table.py examples/ldsmc/out/box examples/ldsmc/out/random examples/ldsmc/out/ablation-n
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "lib")]

COLUMNS = (("accuracy", "accuracy", ".3f"), ("fd", "Fréchet", ".2f"), ("psnr", "PSNR", ".2f"),
           ("ssim", "SSIM", ".3f"), ("residual", "residual", ".3f"))


def table(folder: Path) -> str:
    from paperkit.core.tables import read_table

    bench = read_table(folder / "bench.csv").records()
    timing = read_table(folder / "timing.csv").records()
    n_seeds = len(timing) // max(len(bench), 1)
    head = ["method", *(name for _, name, _ in COLUMNS), "s/image"]
    lines = [f"**{folder.name}** ({n_seeds} seeds; mean ± s.e.)", "", "| " + " | ".join(head) + " |",
             "|" + "---|" * len(head)]
    for r in bench:
        secs = [t["seconds_per_image"] for t in timing if t["method"] == r["method"]]
        cells = [str(r["method"])] + [f"{float(r[k]):{f}} ± {float(r[k + '_se']):{f}}" for k, _, f in COLUMNS if k in r]
        lines.append("| " + " | ".join(cells + [f"{sum(secs) / len(secs):.3f}"]) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print("\n\n".join(table(Path(p)) for p in sys.argv[1:]))
