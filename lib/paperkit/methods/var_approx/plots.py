"""Figures of the var-approx commands: test predictions beside targets, and error vs width (log–log)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from paperkit.core.plots import new_figure


def pred_grid_figure(p: Any, seed: int, pred: Any, n: int = 6) -> Any:
    """Top row: the first test targets (last scale); bottom row: the model's predictions."""
    from paperkit.methods.var_approx.train import make_data

    data = make_data(p, seed)
    side = data.side
    y = data.y_test[:n, -side * side:, 0].reshape(-1, side, side).numpy()
    yhat = np.asarray(pred[:n, -side * side:, 0]).reshape(-1, side, side)
    fig, axes = new_figure(2, len(y), figsize=(1.6 * len(y), 3.4))
    lo, hi = float(y.min()), float(y.max())
    for j in range(len(y)):
        for i, (img, name) in enumerate(((y[j], "target"), (yhat[j], "prediction"))):
            axes[i, j].imshow(img, vmin=lo, vmax=hi, cmap="viridis")
            axes[i, j].set_xticks([])
            axes[i, j].set_yticks([])
            if j == 0:
                axes[i, j].set_ylabel(name)
    fig.suptitle(f"{p.target}: test inputs 0-{len(y) - 1}")
    return fig


def scaling_figure(rows: Sequence[dict[str, Any]], slopes: Sequence[dict[str, Any]]) -> Any:
    """Median test RMSE over seeds vs FFN width, log–log, one line per (target, L, embed, scales)."""
    fig, ax = new_figure(figsize=(5.5, 4))
    for sl in slopes:
        sel = [r for r in rows if all(r[k] == sl[k] for k in ("target", "lipschitz", "embed", "scales"))]
        widths = sorted({r["width"] for r in sel})
        med = [np.median([r["test_rmse"] for r in sel if r["width"] == w]) for w in widths]
        ax.loglog(widths, med, "o-", label=f"{sl['target']} L={sl['lipschitz']:g} D={sl['embed']} "
                                           f"s={sl['scales']}: slope {sl['slope']:.2f}")
    ax.set_xlabel("FFN width m")
    ax.set_ylabel("test RMSE (median over seeds)")
    ax.legend(fontsize=7)
    return fig
