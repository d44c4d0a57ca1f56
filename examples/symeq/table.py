"""Markdown tables from the symeq example runs: test MSE (mean ± s.e. over seeds) per training size and
model, and size transfer (same weights at other n, ratio to the training n)."""

from __future__ import annotations

import csv
import sys
from pathlib import Path


def rows(path: Path) -> list[dict[str, str]]:
    with path.open() as f:
        return list(csv.DictReader(f))


def fmt(mean: str, se: str) -> str:
    return f"{float(mean):.3g} ± {float(se):.1g}" if se else f"{float(mean):.3g}"


def main(out: Path) -> None:
    for run in sorted(p.parent for p in out.glob("curve-*/curve.csv")):
        curve = rows(run / "curve.csv")
        models = list(dict.fromkeys(r["model"] for r in curve))
        print(f"\n### {run.name}: test MSE at n = 6\n")
        print("| n_train | " + " | ".join(models) + " |")
        print("|---:|" + "---:|" * len(models))
        for size in dict.fromkeys(r["n_train"] for r in curve):
            cells = {r["model"]: fmt(r["test_mse"], r["test_mse_se"]) for r in curve if r["n_train"] == size}
            print(f"| {size} | " + " | ".join(cells[m] for m in models) + " |")
        transfer = [r for r in rows(run / "transfer.csv") if r["model"] in ("equivariant", "maron")]
        print(f"\n{run.name}: size transfer (largest training size, weights trained at n = 6)\n")
        print("| model | n | test MSE | ratio to n = 6 |\n|---|---:|---:|---:|")
        for r in transfer:
            print(f"| {r['model']} | {r['test_n']} | {fmt(r['test_mse'], r['test_mse_se'])} | "
                  f"{float(r['ratio_to_train_n']):.2f} |")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "out"))
