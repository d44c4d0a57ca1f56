"""Figures of symeq-fit: learning curves (log–log, one line per model) and size transfer."""

from __future__ import annotations

from typing import Any

from paperkit.core.plots import new_figure


def learning_curve_figure(rows: list[dict[str, Any]], title: str) -> Any:
    fig, ax = new_figure(figsize=(6, 4))
    for model in dict.fromkeys(r["model"] for r in rows):
        pts = [r for r in rows if r["model"] == model]
        ax.errorbar([r["n_train"] for r in pts], [r["test_mse"] for r in pts],
                    yerr=[r["test_mse_se"] or 0.0 for r in pts], marker="o", capsize=2, label=model)
    ax.set(xscale="log", yscale="log", xlabel="training samples", ylabel="test MSE", title=title)
    ax.legend()
    return fig


def transfer_figure(rows: list[dict[str, Any]], train_n: int, title: str) -> Any:
    fig, ax = new_figure(figsize=(6, 4))
    for model in dict.fromkeys(r["model"] for r in rows):
        pts = sorted((r for r in rows if r["model"] == model), key=lambda r: r["test_n"])
        ax.errorbar([r["test_n"] for r in pts], [r["test_mse"] for r in pts],
                    yerr=[r["test_mse_se"] or 0.0 for r in pts], marker="o", capsize=2, label=model)
    ax.axvline(train_n, color="grey", linestyle=":", label=f"trained at n={train_n}")
    ax.set(yscale="log", xlabel="n at test time (same weights)", ylabel="test MSE", title=title)
    ax.legend()
    return fig
