"""Plots: coverage and set length per method across dimensions (the paper's Figure 2 layout)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from paperkit.core import plots

_STYLE = {
    "mod": ("tab:blue", "-"), "e-mod": ("tab:orange", "-"), "u-mod": ("tab:green", "-"), "eu-mod": ("tab:red", "-"),
    "cross": ("black", "-"), "e-cross": ("tab:orange", ":"), "u-cross": ("tab:green", ":"),
    "eu-cross": ("tab:red", ":"), "cvplus": ("tab:gray", "--"), "jackknife+": ("tab:purple", "--"),
    "split": ("tab:brown", "-."), "split-2a": ("tab:pink", "-."),
}


def plot_simulation(table: Sequence[dict[str, Any]], path: str | os.PathLike, *, alpha: float) -> None:
    """Coverage (with the 1 - 2 alpha line) and median length against p, one line per method."""
    fig, (ax_cov, ax_len) = plots.new_figure(1, 2, figsize=(11, 4.2))
    methods = list(dict.fromkeys(r["method"] for r in table))
    for m in methods:
        rs = sorted((r for r in table if r["method"] == m), key=lambda r: r["p"])
        ps = [r["p"] for r in rs]
        color, ls = _STYLE.get(m, (None, "-"))
        ax_cov.plot(ps, [r["coverage"] for r in rs], ls, color=color, marker="o", ms=3, label=m)
        lengths = np.array([r["median_length"] for r in rs], dtype=float)
        ax_len.plot(ps, np.where(np.isfinite(lengths), lengths, np.nan), ls, color=color, marker="o", ms=3, label=m)
    ax_cov.axhline(1 - 2 * alpha, color="k", lw=0.8, ls="--")
    ax_cov.axhline(1 - alpha, color="k", lw=0.8, ls=":")
    ax_cov.set_xlabel("p (features)")
    ax_cov.set_ylabel("coverage")
    ax_cov.set_title(f"coverage (dashed: 1-2a, dotted: 1-a; a={alpha:g})")
    ax_len.set_xlabel("p (features)")
    ax_len.set_ylabel("median set length")
    ax_len.set_yscale("log")
    ax_len.set_title("median length")
    ax_len.legend(fontsize=7, ncol=2)
    plots.save_figure(fig, path)
