"""PNG plots: the front (R² against length) with each run's best per length, and model gaps."""

from __future__ import annotations

import os
from collections.abc import Sequence

from paperkit.core import plots


def plot_front(path: str | os.PathLike, front: dict[int, float], runs: dict[str, dict[int, float]] | None = None,
               *, title: str = "APO front") -> None:
    """Front as a step line; each run's best-per-length as faint markers."""
    fig, ax = plots.new_figure(figsize=(5.5, 4))
    if runs:
        for label, best in runs.items():
            ax.plot(sorted(best), [best[L] for L in sorted(best)], "o", alpha=0.35, ms=4, label=label)
    Ls = sorted(front)
    if Ls:
        ax.step(Ls, [front[L] for L in Ls], where="post", color="k", lw=1.5, label="front")
        ax.plot(Ls, [front[L] for L in Ls], "ks")
    ax.set_xlabel("length (nodes)")
    ax.set_ylabel("R² (standardised data)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if runs and len(runs) <= 12:
        ax.legend(fontsize=7)
    plots.save_figure(fig, path)


def plot_compare(path: str | os.PathLike, front: dict[int, float], models: Sequence[dict], *,
                 title: str = "models against the APO front") -> None:
    fig, ax = plots.new_figure(figsize=(5.5, 4))
    Ls = sorted(front)
    if Ls:
        ax.step(Ls + [max(Ls + [m["length"] for m in models]) + 1], [front[L] for L in Ls] + [front[Ls[-1]]],
                where="post", color="k", lw=1.5, label="front")
    names = sorted({m["model"] for m in models})
    for name in names:
        pts = [m for m in models if m["model"] == name and m["R2"] is not None]  # None: NaN/inf on the data
        ax.plot([m["length"] for m in pts], [m["R2"] for m in pts], "o", alpha=0.7, label=name)
    ax.set_xlabel("length (nodes)")
    ax.set_ylabel("R²")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if len(names) <= 15:
        ax.legend(fontsize=7)
    plots.save_figure(fig, path)


def plot_fronts(path: str | os.PathLike, fronts: dict[str, dict[int, float]]) -> None:
    """One step line per dataset."""
    fig, ax = plots.new_figure(figsize=(5.5, 4))
    for name, front in fronts.items():
        Ls = sorted(front)
        ax.step(Ls, [front[L] for L in Ls], where="post", marker="o", ms=4, label=name)
    ax.set_xlabel("length (nodes)")
    ax.set_ylabel("R² (standardised data)")
    ax.set_title("APO fronts")
    ax.grid(alpha=0.3)
    if len(fronts) <= 15:
        ax.legend(fontsize=7)
    plots.save_figure(fig, path)
