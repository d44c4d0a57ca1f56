"""Figures of the gen-select run dir: OtB, OPR and regret against t per learner (mean ± std over runs)."""

from __future__ import annotations

from typing import Any

import numpy as np


def metrics_figure(t: np.ndarray, curves: dict[str, dict[str, np.ndarray]], *, title: str = "") -> Any:
    from paperkit.core.plots import new_figure

    fig, axes = new_figure(1, 3, figsize=(15, 4.2))
    labels = {"otb": "outscore-the-best (OtB)", "opr": "optimal-pick ratio (OPR)", "regret": "regret"}
    for ax, key in zip(axes, ("otb", "opr", "regret"), strict=True):
        for name, c in curves.items():
            m, sd = c[key].mean(axis=0), c[key].std(axis=0)
            ax.plot(t, m, label=name, lw=1.4)
            ax.fill_between(t, m - sd, m + sd, alpha=0.15)
        ax.set_xlabel("round t")
        ax.set_title(labels[key])
        ax.grid(alpha=0.3)
        if key == "otb":
            ax.axhline(0.0, color="black", lw=0.8)
    axes[0].legend(fontsize=8)
    if title:
        fig.suptitle(title)
    return fig
