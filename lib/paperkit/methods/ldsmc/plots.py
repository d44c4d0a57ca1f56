"""PNG figures: the comparison grid (truth, measurement, restorations, particles) and the bench chart."""

from __future__ import annotations

import numpy as np


def _show(ax, img: np.ndarray) -> None:
    img = np.asarray(img)
    if img.shape[0] == 1:
        ax.imshow(img[0], cmap="gray", vmin=-1, vmax=1)
    else:
        ax.imshow(np.clip((np.moveaxis(img[:3], 0, -1) + 1) / 2, 0, 1))
    ax.set_xticks([])
    ax.set_yticks([])


def comparison_grid(columns: dict[str, np.ndarray], n_rows: int = 8, title: str = ""):
    """One row per image, one column per entry of ``columns`` (name → (B, C, H, W) images)."""
    from paperkit.core.plots import new_figure

    names = list(columns)
    rows = min(n_rows, min(len(v) for v in columns.values()))
    fig, axes = new_figure(rows, len(names), figsize=(1.2 * len(names) + 0.4, 1.2 * rows + 0.6), squeeze=False)
    for j, name in enumerate(names):
        for i in range(rows):
            _show(axes[i][j], columns[name][i])
        axes[0][j].set_title(name, fontsize=8)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


def bench_figure(rows: list[dict], metrics: tuple[str, ...] = ("accuracy", "fd", "psnr", "seconds_per_image"),
                 title: str = ""):
    from paperkit.core.plots import new_figure

    present = [m for m in metrics if all(m in r for r in rows)]
    fig, axes = new_figure(1, len(present), figsize=(3.0 * len(present), 3.0), squeeze=False)
    names = [r["method"] for r in rows]
    for ax, m in zip(axes[0], present, strict=False):
        vals = [r[m] for r in rows]
        errs = [r.get(m + "_se", 0.0) for r in rows]
        ax.bar(range(len(vals)), vals, yerr=errs, color="tab:blue", alpha=0.8)
        ax.set_xticks(range(len(vals)))
        ax.set_xticklabels(names, rotation=45, ha="right", fontsize=8)
        ax.set_title(m, fontsize=9)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig
