"""Apply patterns to Q/K/V and measure them against dense attention; the dense-vs-sparse speed benchmark."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import torch

from paperkit.core.errors import InputError
from paperkit.methods.mm_prefill import index as I
from paperkit.methods.mm_prefill.attention import (
    dense_attention,
    last_backend,
    recall_from_lse,
    rel_l2,
    sdpa_causal,
    sparse_prefill,
)
from paperkit.methods.mm_prefill.search import build_head, check_patterns, index_from_patterns


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def _timed(fn: Callable[[], Any], device: torch.device) -> tuple[Any, float]:
    _sync(device)
    t0 = time.perf_counter()
    out = fn()
    _sync(device)
    return out, (time.perf_counter() - t0) * 1e3


def layer_index(q: torch.Tensor, k: torch.Tensor, *, layer: int, doc: dict[str, Any] | None, pattern: str | None,
                density: float, block_size: int, modality: torch.Tensor | None) -> I.SparseIndex:
    if doc is not None:
        return index_from_patterns(q, k, doc, layer, block_size=block_size, modality=modality, density=density)
    return I.stack_heads([build_head(pattern, q[h], k[h], density=density, block_size=block_size, modality=modality)
                          for h in range(q.shape[0])], block_size)


def apply_patterns(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, doc: dict[str, Any] | None = None,
                   pattern: str | None = None, density: float = 0.1, block_size: int = 64, backend: str = "auto",
                   modality: torch.Tensor | None = None, on_layer: Callable[[], None] | None = None
                   ) -> tuple[list[dict[str, Any]], list[torch.Tensor], list[I.SparseIndex], list[dict[str, Any]]]:
    """Per (layer, head) rows (pattern, density, tile cost, recall, output rel-L2 vs dense, backend: the same
    for the same inputs), the sparse outputs, the indices, and per-layer times in milliseconds (index build,
    sparse attention, dense SDPA), kept apart because they differ run to run. q, k, v: [L, H, N, D].

    A non-finite metric (inputs beyond what fp32 attention can hold) is an InputError, never a NaN row."""
    L, H, n, _ = q.shape
    if doc is not None:
        check_patterns(doc, heads=H, layers=L)
    I.check_qkv(q[0], k[0], v[0], block_size)
    device = q.device
    rows, outs, indices, timings = [], [], [], []
    for layer in range(L):
        ql, kl, vl = q[layer], k[layer], v[layer]
        idx, t_index = _timed(partial(layer_index, ql, kl, layer=layer, doc=doc, pattern=pattern, density=density,
                                      block_size=block_size, modality=modality), device)
        (out, lse), t_sparse = _timed(partial(sparse_prefill, ql, kl, vl, idx, backend=backend, return_lse=True,
                                              validate=False), device)
        ran = last_backend()
        _, t_dense = _timed(partial(sdpa_causal, ql, kl, vl), device)
        ref, dense_lse = dense_attention(ql, kl, vl)
        rec = recall_from_lse(lse.float(), dense_lse)
        err = rel_l2(out, ref)
        dens, cost = I.density(idx), I.tile_cost(idx)
        bad = [h for h in range(H) if not (math.isfinite(float(rec[h])) and math.isfinite(float(err[h])))]
        if bad:
            raise InputError(f"layer {layer} head(s) {bad}: attention produced non-finite values (NaN or inf); the "
                             "inputs are beyond what float32 attention can hold; rescale q, k, v")
        for h in range(H):
            rows.append({"layer": layer, "head": h, "pattern": idx.patterns[h],
                         "params": ";".join(f"{a}={b}" for a, b in sorted(idx.params[h].items())),
                         "density": round(dens[h], 6), "tile_cost": round(cost[h], 6),
                         "recall": round(float(rec[h]), 6), "rel_l2": round(float(err[h]), 6), "backend": ran})
        timings.append({"layer": layer, "index_ms": round(t_index, 3), "sparse_ms": round(t_sparse, 3),
                        "dense_ms": round(t_dense, 3), "backend": ran})
        outs.append(out)
        indices.append(idx)
        if on_layer:
            on_layer()
    return rows, outs, indices, timings


def mask_figure(index: I.SparseIndex, head: int, title: str, pixels: int = 512) -> Any:
    """The computed (query, key) pairs of one head in original positions, max-pooled to ``pixels``."""
    from paperkit.core.plots import new_figure

    mask = I.dense_mask(index, head).float()
    n = mask.shape[0]
    f = max(1, -(-n // pixels))
    pad = (-n) % f
    mask = torch.nn.functional.pad(mask, (0, pad, 0, pad))
    pooled = torch.nn.functional.max_pool2d(mask[None, None], f)[0, 0]
    fig, ax = new_figure(figsize=(4.2, 4))
    ax.imshow(pooled.numpy(), cmap="Greys", interpolation="nearest", extent=(0, n, n, 0))
    ax.set_xlabel("key position")
    ax.set_ylabel("query position")
    ax.set_title(title, fontsize=9)
    return fig


# ------------------------------------------------------------------------------------------------- bench

def bench_point(n: int, heads: int, dim: int, density: float, *, device: torch.device, backend: str = "auto",
                dtype: torch.dtype = torch.float32, repeats: int = 3, block_size: int = 64, seed: int = 0
                ) -> dict[str, Any]:
    """Dense causal SDPA vs the sparse operator (VS index sized to ``density``) on random q, k, v.

    The VS sizes are found once (bisection, untimed); index building is then timed as it runs online:
    last-query scores, top columns/diagonals, packing. Medians over ``repeats``.
    """
    g = torch.Generator(device="cpu").manual_seed(seed)
    q, k, v = (torch.randn(heads, n, dim, generator=g).to(device=device, dtype=dtype) for _ in range(3))
    if n < block_size:
        raise InputError(f"n = {n} is smaller than one block ({block_size})")
    sizes = build_head("vs", q[0], k[0], density=density, block_size=block_size).params

    def build() -> I.SparseIndex:
        return I.stack_heads([build_head("vs", q[h], k[h], params=sizes, block_size=block_size)
                              for h in range(heads)], block_size)

    def med(fn: Callable[[], Any]) -> tuple[Any, float]:
        out, times = None, []
        fn()  # warm-up (Triton compile, allocator)
        for _ in range(repeats):
            out, ms = _timed(fn, device)
            times.append(ms)
        return out, sorted(times)[len(times) // 2]

    idx, t_index = med(build)
    out, t_sparse = med(lambda: sparse_prefill(q, k, v, idx, backend=backend, validate=False))
    ran = last_backend()
    ref, t_dense = med(lambda: sdpa_causal(q, k, v))
    return {"n": n, "heads": heads, "dim": dim, "dtype": str(dtype).replace("torch.", ""), "device": device.type,
            "backend": ran, "density_target": density, "density": round(sum(I.density(idx)) / heads, 6),
            "dense_ms": round(t_dense, 3), "sparse_ms": round(t_sparse, 3), "index_ms": round(t_index, 3),
            "speedup": round(t_dense / t_sparse, 4), "speedup_with_index": round(t_dense / (t_sparse + t_index), 4),
            "index_share": round(t_index / t_sparse, 4),
            "rel_l2_vs_dense": round(float(rel_l2(out, ref).mean()), 6)}


def speedup_figure(rows: list[dict[str, Any]]) -> Any:
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
