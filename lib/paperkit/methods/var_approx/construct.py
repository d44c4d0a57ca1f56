"""The constructive proof of Thm 6.6, checked on a grid (as we reconstruct Lemma 5.4; confirm against the PDF).

1. A fixed ReLU FFN quantises every coordinate to the δ-grid: q(x) = δ·Σ_k [ReLU(x − kδ + η) − ReLU(x − kδ)]/η,
   exact (q(x) = δ⌊x/δ⌋) outside bands of width η below each grid point.
2. Each token gets a scalar code u = ⟨v, token⟩ + M·position + 1 (v a base-(1/δ) encoding of the d channels, M larger
   than the range of ⟨v, token⟩), and one rank-1 single-head softmax attention layer with scores a·u_i·u_j and
   values u_j gives s_i = Σ_j u_j·softmax_j(a·u_i·u_j): the contextual mapping. The id of (token i, context X) is
   u_i + γ·s_i with γ small enough that ids of different tokens cannot meet.
3. Check: every (token, context) pair over all grid contexts gets a distinct id, on the initial map and on the
   up-interpolated pyramid; report the smallest gap between ids of distinct pairs.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from paperkit.core.errors import UsageError


def quantize_ffn(x: np.ndarray, delta: float, eta: float) -> np.ndarray:
    """Step 1 as a one-hidden-layer ReLU FFN (2·(1/δ − 1) hidden units per coordinate)."""
    steps = np.arange(1, int(round(1 / delta))) * delta
    z = x[..., None] - steps
    return delta * ((np.maximum(z + eta, 0) - np.maximum(z, 0)) / eta).sum(-1)


def contextual_ids(tokens: np.ndarray, delta: float, scale: float) -> tuple[np.ndarray, dict[str, float]]:
    """Step 2: the id of every (context, token) pair, ``tokens`` of shape (contexts, L, d)."""
    n_ctx, length, dim = tokens.shape
    levels = round(1 / delta)
    v = (levels ** np.arange(dim)) / delta                     # base-(1/δ) code of a grid token
    value = tokens @ v
    span = float(value.max() - value.min()) + 1.0
    # positive codes (a zero code would score every key equally), distinct for every (position, value)
    u = 1.0 + value - value.min() + span * np.arange(length)
    u = u / np.abs(u).max()                                     # bounded scores
    scores = scale * u[:, :, None] * u[:, None, :]
    w = np.exp(scores - scores.max(-1, keepdims=True))
    s = (w * u[:, None, :]).sum(-1) / w.sum(-1)
    code_gap = np.diff(np.unique(u)).min() if np.unique(u).size > 1 else 1.0
    gamma = 0.25 * code_gap / (np.abs(s).max() + 1.0)
    return u + gamma * s, {"gamma": float(gamma), "token_code_gap": float(code_gap),
                           "context_gap": smallest_context_gap(u, s)}


def smallest_context_gap(u: np.ndarray, s: np.ndarray) -> float:
    """The smallest |s − s'| between two pairs whose tokens share a code u (0 if two contexts coincide):
    the attention's separation of contexts, before the scaling by γ."""
    order = np.lexsort((s.reshape(-1), u.reshape(-1)))
    uu, ss = u.reshape(-1)[order], s.reshape(-1)[order]
    same = uu[1:] == uu[:-1]
    return float(np.diff(ss)[same].min()) if same.any() else float("inf")


def smallest_gap(ids: np.ndarray) -> float:
    """The smallest difference between the ids of two distinct (context, token) pairs (0 if two coincide)."""
    flat = np.sort(ids.reshape(-1))
    return float(np.diff(flat).min())


def grid_contexts(init: tuple[int, int], dim: int, delta: float, max_contexts: int) -> np.ndarray:
    """Every input on the δ-grid: (levels^(h·w·d), h, w, d), refused beyond ``max_contexts``."""
    levels = round(1 / delta)
    n = init[0] * init[1] * dim
    # levels**n can have thousands of digits: too slow to build and beyond str()'s digit limit, so a count
    # far over any limit is refused from its logarithm and shown as a power.
    digits = n * math.log10(levels)
    count = levels ** n if digits < 16 else None
    if count is None or count > max_contexts:
        shown = f"{count}" if count is not None else f"{levels}^{n} (about 10^{digits:.0f})"
        raise UsageError(f"a {init[0]}x{init[1]}x{dim} map on a δ = {delta:g} grid has {shown} contexts, over the "
                         f"limit of {max_contexts}; use a coarser --delta or a smaller --init/--dim")
    grid = np.arange(levels) * delta
    return np.array(list(itertools.product(grid, repeat=n))).reshape(count, *init, dim)


def constructive_check(init: tuple[int, int], dim: int, delta: float, scales: tuple[int, ...], *,
                       attention_scale: float = 7.0, eta: float | None = None,
                       max_contexts: int = 100_000, seed: int = 0) -> dict[str, Any]:
    """Run steps 1–3 and return the report (distinctness and smallest gaps before and after Φ_up)."""
    import torch

    from paperkit.methods.var_approx.pyramid import up_pyramid

    if not 0 < delta <= 0.5 or abs(1 / delta - round(1 / delta)) > 1e-9:
        raise UsageError(f"--delta {delta:g} must be 1/k for an integer k >= 2")
    eta = delta / 10 if eta is None else eta
    contexts = grid_contexts(init, dim, delta, max_contexts)
    # inputs anywhere in a grid cell (away from the η bands) quantise to the cell's corner
    rng = np.random.default_rng(seed)
    jitter = rng.uniform(0, delta - 1.01 * eta, contexts.shape)
    quantized = quantize_ffn(contexts + jitter, delta, eta)
    exact = float(np.abs(quantized - contexts).max())
    flat = contexts.reshape(len(contexts), -1, dim)
    before, info_before = contextual_ids(flat, delta, attention_scale)
    pyramid = up_pyramid(torch.from_numpy(contexts), scales).numpy()
    after, info_after = contextual_ids(pyramid, delta, attention_scale)
    gap_before, gap_after = smallest_gap(before), smallest_gap(after)
    return {"init": f"{init[0]}x{init[1]}", "dim": dim, "delta": delta, "eta": eta, "scales": list(scales),
            "contexts": len(contexts), "tokens_before": flat.shape[1], "tokens_after": pyramid.shape[1],
            "quantizer_max_error": exact, "quantizer_exact": exact < 1e-12,
            "attention_rank": 1, "attention_scale": attention_scale,
            "ids_before": before.size, "distinct_before": bool(gap_before > 0), "smallest_gap_before": gap_before,
            "ids_after": after.size, "distinct_after": bool(gap_after > 0), "smallest_gap_after": gap_after,
            "context_gap_before": info_before["context_gap"], "context_gap_after": info_after["context_gap"],
            "gamma_before": info_before["gamma"], "gamma_after": info_after["gamma"]}
