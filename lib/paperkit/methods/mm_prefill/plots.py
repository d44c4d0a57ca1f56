"""Figures of the mm-prefill commands: a head's computed (query, key) pairs, and the speedup against N."""

from __future__ import annotations

from typing import Any

import torch

from paperkit.methods.mm_prefill import index as sparse_index


def pooled_mask(idx: sparse_index.SparseIndex, head: int, pixels: int = 512) -> torch.Tensor:
    """The computed (query, key) pairs of one head in original positions, max-pooled to at most ``pixels``
    per side (what :func:`mask_figure` draws; small enough to keep in a checkpoint)."""
    mask = sparse_index.dense_mask(idx, head).float()
    n = mask.shape[0]
    f = max(1, -(-n // pixels))
    pad = (-n) % f
    mask = torch.nn.functional.pad(mask, (0, pad, 0, pad))
    return torch.nn.functional.max_pool2d(mask[None, None], f)[0, 0].cpu()


def mask_figure(pooled: torch.Tensor, n: int, title: str) -> Any:
    """A pooled mask (from :func:`pooled_mask`) of an ``n``-token head as a black-and-white image."""
    from paperkit.core.plots import new_figure

    fig, ax = new_figure(figsize=(4.2, 4))
    ax.imshow(pooled.numpy(), cmap="Greys", interpolation="nearest", extent=(0, n, n, 0))
    ax.set_xlabel("key position")
    ax.set_ylabel("query position")
    ax.set_title(title, fontsize=9)
    return fig


def speedup_figure(rows: list[dict[str, Any]]) -> Any:
    """Dense SDPA time over sparse time against N, one line per density (rows of ``bench.csv``)."""
    from paperkit.core.plots import new_figure

    fig, ax = new_figure(figsize=(5.5, 3.8))
    for d in sorted({r["density_target"] for r in rows}):
        pts = sorted((r["n"], r["speedup"]) for r in rows if r["density_target"] == d)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"density {d:g}")
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("tokens N")
    ax.set_ylabel("dense SDPA time / sparse time")
    dev = rows[0]["device"] if rows else ""
    ax.set_title(f"mm-prefill speedup ({dev}, {rows[0]['backend'] if rows else ''})", fontsize=10)
    ax.legend(fontsize=8)
    return fig
