"""Figures for the dcgnn-* commands: channel relevance per seed, sample graphs with their top edges,
FAITH against the removal budget."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit.core.plots import new_figure
from paperkit.methods.dcgnn.data import GraphSet


def relevance_figure(rows: list[dict[str, Any]], title: str) -> Any:
    fig, ax = new_figure(figsize=(5, 3.2))
    seeds = [str(r["seed"]) for r in rows]
    gnn = np.array([r["gnn_relevance"] or 0.0 for r in rows])
    rule = np.array([r["rule_relevance"] or 0.0 for r in rows])
    ax.bar(seeds, gnn, label="GNN channel", color="tab:blue")
    ax.bar(seeds, rule, bottom=gnn, label="rule channel", color="tab:orange")
    ax.set_ylim(0, 1)
    ax.set_xlabel("seed")
    ax.set_ylabel("channel relevance")
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    return fig


def sample_graphs_figure(gs: GraphSet, graphs: np.ndarray, mask: np.ndarray, top_k: int, title: str) -> Any:
    """Each graph on a circle; its top-k edges by mask score in red, ground-truth edges dashed when known."""
    n = len(graphs)
    fig, axes = new_figure(1, n, figsize=(3 * n, 3.2), squeeze=False)
    eptr = gs.edge_ptr()
    for ax, g in zip(axes[0], graphs, strict=True):
        a, b, ea, eb = gs.graph_ptr[g], gs.graph_ptr[g + 1], eptr[g], eptr[g + 1]
        angle = 2 * np.pi * np.arange(b - a) / (b - a)
        pos = np.stack([np.cos(angle), np.sin(angle)], 1)
        e = gs.edge_index[:, ea:eb] - a
        m = mask[ea:eb]
        top = set(np.argsort(-m, kind="stable")[:top_k].tolist())
        for j in range(e.shape[1]):
            u, v = e[:, j]
            hot = j in top
            gt = gs.edge_gt is not None and gs.edge_gt[ea + j]
            ax.plot(*pos[[u, v]].T, color="tab:red" if hot else "0.75", lw=2 if hot else 0.6,
                    ls="--" if gt and not hot else "-", zorder=2 if hot else 1)
        colour = gs.x[a:b].argmax(1) if gs.x.shape[1] > 1 else np.zeros(b - a, int)
        ax.scatter(*pos.T, c=colour, cmap="coolwarm_r" if gs.x.shape[1] == 2 else "tab10", s=12, zorder=3)
        ax.set_title(f"graph {g}: {gs.class_names[gs.y[g]]}", fontsize=8)
        ax.set_axis_off()
    fig.suptitle(title, fontsize=9)
    return fig


def faith_figure(rows: list[dict[str, Any]], title: str) -> Any:
    fig, ax = new_figure(figsize=(5, 3.2))
    for kind, colour in (("model", "tab:blue"), ("random", "0.5"), ("ground_truth", "tab:green")):
        sel = [r for r in rows if r["explanation"] == kind]
        if not sel:
            continue
        budgets = sorted({r["budget"] for r in sel})
        mean = [np.mean([r["faith"] for r in sel if r["budget"] == b and r["faith"] is not None] or [np.nan])
                for b in budgets]
        ax.plot(budgets, mean, "o-", color=colour, label=kind.replace("_", " "))
    ax.set_xlabel("budget α (edges removed: α·mean edges for Nec, 2α for Suf)")
    ax.set_ylabel("FAITH (harmonic mean of Suf, Nec)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return fig
