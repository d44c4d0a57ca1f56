"""Figures of kgfm-motif: training curves and the relation-representation similarity matrix."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit.core.plots import new_figure


def curves_figure(curve: list[dict[str, Any]], family: str) -> Any:
    fig, ax = new_figure(1, 2, figsize=(9, 3.5))
    ep = [r["epoch"] for r in curve]
    ax[0].plot(ep, [r["loss"] for r in curve], marker="o")
    ax[0].set(xlabel="epoch (0-based)", ylabel="training loss", title=f"MOTIF {family}")
    key, label = ("train_accuracy", "training-link accuracy") if any("train_accuracy" in r for r in curve) else \
        ("valid_mrr", "valid filtered MRR")
    if any(key in r for r in curve):
        ax[1].plot(ep, [r.get(key) for r in curve], marker="o", color="C1")
    ax[1].set(xlabel="epoch (0-based)", ylabel=label)
    fig.tight_layout()
    return fig


def similarity_figure(sim: np.ndarray, names: list[str], family: str) -> Any:
    n = len(names)
    fig, ax = new_figure(figsize=(2 + 0.35 * n, 1.5 + 0.35 * n))
    im = ax.imshow(sim, vmin=-1, vmax=1, cmap="RdBu_r")
    if n <= 40:
        ax.set_xticks(range(n), names, rotation=90, fontsize=7)
        ax.set_yticks(range(n), names, fontsize=7)
    ax.set_title(f"cosine similarity of z_q|q ({family})")
    fig.colorbar(im, ax=ax)
    fig.tight_layout()
    return fig
