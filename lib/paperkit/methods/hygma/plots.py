"""Figures of hygma-train runs: return and success curves (mean ± s.e. over seeds), groups over time."""

from __future__ import annotations

from typing import Any

import numpy as np


def _mean_se(rows: list[dict], key: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per eval index: mean step, mean and standard error of ``key`` over seeds (runs of equal length)."""
    seeds = sorted({r["seed"] for r in rows})
    per = [[r for r in rows if r["seed"] == s] for s in seeds]
    length = min(len(p) for p in per)
    steps = np.mean([[float(r["step"]) for r in p[:length]] for p in per], 0)
    vals = np.array([[np.nan if r.get(key) in (None, "") else float(r[key]) for r in p[:length]] for p in per])
    if not np.isfinite(vals).any():   # a column this algorithm does not log (group ARI of a baseline)
        return steps, np.full(length, np.nan), np.zeros(length)
    # group ARI is missing at an evaluation where fewer than two agents helped catch: average what there is
    count = np.isfinite(vals).sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.nansum(vals, 0) / count
        spread = np.sqrt(np.nansum((vals - mean) ** 2, 0) / (count - 1))
    return steps, np.where(count > 0, mean, np.nan), np.where(count > 1, spread / np.sqrt(count), 0.0)


def curves_figure(runs: list[tuple[str, list[dict], list[dict]]]) -> Any:
    """One row per run dir (label, curves rows, groups rows): return, success, and k / group ARI over steps."""
    from paperkit.core.plots import new_figure

    fig, axes = new_figure(len(runs), 3, figsize=(13, 3.4 * len(runs)), squeeze=False, layout="constrained")
    for row, (label, curves, groups) in zip(axes, runs, strict=True):
        for algo in dict.fromkeys(c["algo"] for c in curves):
            rows = [c for c in curves if c["algo"] == algo]
            for ax, key in zip(row[:2], ("return", "success"), strict=True):
                steps, mean, se = _mean_se(rows, key)
                ax.plot(steps, mean, label=algo)
                ax.fill_between(steps, mean - se, mean + se, alpha=0.2)
            steps, ari, _ = _mean_se(rows, "group_ari")
            if np.isfinite(ari).any():
                row[2].plot(steps, ari, label=f"{algo} ARI")
        for g in groups:
            if g["algo"].startswith("hygma"):
                pts = [x for x in groups if x["algo"] == g["algo"] and x["seed"] == g["seed"]]
                if pts[0] is g:
                    row[2].step([p["step"] for p in pts], [p["k"] for p in pts], where="post", alpha=0.6,
                                linestyle="--", label=f"{g['algo']} s{g['seed']} k")
        row[0].set_ylabel(f"{label}\ngreedy return")
        row[1].set_ylabel("success (catch / collected)")
        row[2].set_ylabel("groups k (dashed) / group ARI")
        for ax in row:
            ax.set_xlabel("env steps")
            ax.grid(alpha=0.3)
        row[0].legend(fontsize=8)
        if row[2].has_data():
            row[2].legend(fontsize=7)
    return fig
