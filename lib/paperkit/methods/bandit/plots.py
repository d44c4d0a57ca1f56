"""Figures of Section 6 (Wang et al., ICML 2025): regret against t, and final regret along a sweep."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from paperkit.core.plots import new_figure
from paperkit.methods.bandit.simulate import LABELS, SimResult

STYLE = {"decofusion": ("tab:blue", "-", "d"), "elimfusion": ("tab:red", "-.", "^"),
         "elim-nofusion": ("tab:green", "--", "o"), "med-nofusion": ("tab:purple", ":", "s"),
         "ucb": ("tab:orange", "--", "v"), "klucb": ("tab:brown", "--", "<"), "rucb": ("tab:gray", ":", ">")}


def regret_figure(results: Sequence[SimResult], alpha: float, *, lower_bound: float | None = None,
                  title: str = "", yscale: str = "linear") -> Any:
    """Mean aggregated regret ± one standard deviation against t, one line per algorithm; ``lower_bound``
    (the constant C(α)) adds the reference line C(α)·log t.

    The x axis is logarithmic. With ``yscale="linear"`` (the default, as in the paper's figures) regret
    growing like log t is a straight line; ``"log"`` keeps algorithms whose regrets differ by orders of
    magnitude readable."""
    fig, ax = new_figure(figsize=(7.0, 4.6))
    for res in results:
        color, ls, marker = STYLE.get(res.algo, ("black", "-", "."))
        reg = res.regret(alpha)
        mean, std = reg.mean(axis=0), reg.std(axis=0)
        ax.plot(res.t, mean, color=color, ls=ls, marker=marker, markevery=max(1, len(res.t) // 8),
                markerfacecolor="none", label=LABELS.get(res.algo, res.algo))
        ax.fill_between(res.t, np.maximum(mean - std, 0), mean + std, color=color, alpha=0.12, lw=0)
    if lower_bound is not None and results:
        t = results[0].t.astype(float)
        if yscale == "log":
            t = t[t >= 3]  # log t < 1 below e; keep the log-scaled axis clean
        ax.plot(t, lower_bound * np.log(t), color="black", lw=1, ls=(0, (1, 2)), label=r"$C(\alpha)\log t$")
    ax.set_xscale("log")
    if yscale == "log":
        ax.set_yscale("log")
        ax.set_ylim(bottom=1.0)
    else:
        ax.set_ylim(bottom=0.0)
    ax.set_xlabel("round t")
    ax.set_ylabel(rf"aggregated regret $R_t$ ($\alpha$ = {alpha:g})")
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=9)
    return fig


def sweep_figure(rows: Sequence[dict], kind: str, *, yscale: str | None = None) -> Any:
    """Final regret (mean ± standard error) against the swept value, one line per algorithm; ``yscale``
    None is log for the gap sweeps (regrets spanning orders of magnitude) and linear for alpha."""
    fig, ax = new_figure(figsize=(7.0, 4.6))
    algos = list(dict.fromkeys(r["algo"] for r in rows))
    for algo in algos:
        sub = sorted((r for r in rows if r["algo"] == algo), key=lambda r: r["value"])
        x = np.array([r["value"] for r in sub])
        y = np.array([r["regret_mean"] for r in sub])
        e = np.array([r["regret_sem"] for r in sub])
        color, ls, marker = STYLE.get(algo, ("black", "-", "."))
        ax.errorbar(x, y, yerr=e, color=color, ls=ls, marker=marker, markerfacecolor="none", capsize=2,
                    label=LABELS.get(algo, algo))
    if kind == "alpha" and rows:
        sub = sorted((r for r in rows if r["algo"] == algos[0]), key=lambda r: r["value"])
        ax.plot([r["value"] for r in sub], [r["lower_bound"] for r in sub], color="black", lw=1, ls=(0, (1, 2)),
                label=r"$C(\alpha)\log T$")
    xlabel = {"alpha": r"fusion weight $\alpha$", "reward-gap": "reward gap", "pref-gap": "preference gap"}[kind]
    ax.set_xlabel(xlabel)
    ax.set_ylabel(r"final aggregated regret $R_T$")
    if (yscale or ("linear" if kind == "alpha" else "log")) == "log":
        ax.set_yscale("log")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=9)
    return fig
