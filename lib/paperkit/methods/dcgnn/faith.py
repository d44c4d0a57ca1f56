"""FAITH: sufficiency and necessity of an edge explanation under edge-removal budgets (Azzolin et al.,
ICML 2025, App. on faithfulness, following Azzolin et al. 2024, "Perks and pitfalls of faithfulness").

For a graph G with explanation R (the top ``ratio`` of undirected edges by mask score) and complement C:
- sufficiency  Suf = exp(−E‖p(G) − p(G \\ S_C)‖₁), S_C a random ``budget`` fraction of C's edges;
- necessity    Nec = 1 − exp(−E‖p(G) − p(G \\ S_R)‖₁), S_R a random ``budget`` fraction of R's edges;
- FAITH = harmonic mean of Suf and Nec, averaged over graphs; the same with R drawn at random (same size)
  is the random-explanation baseline. An undirected edge is removed in both directions.
All perturbed graphs of all graphs and budgets go through the model in large batches.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch

from paperkit.methods.dcgnn.data import GraphSet


def undirected_units(edge_index: np.ndarray) -> tuple[np.ndarray, int]:
    """Unit id of each directed edge: (u, v) and (v, u) share one id."""
    lo, hi = np.minimum(edge_index[0], edge_index[1]), np.maximum(edge_index[0], edge_index[1])
    _, inv = np.unique(lo * (int(hi.max(initial=0)) + 1) + hi, return_inverse=True)
    return inv.ravel(), int(inv.max(initial=-1)) + 1


def pick_explanation(unit_scores: np.ndarray, ratio: float, rng: np.random.Generator | None) -> np.ndarray:
    """Boolean mask of explanation units: top ceil(ratio·U) by score, or a random set of that size."""
    n = len(unit_scores)
    k = min(n, math.ceil(ratio * n))
    order = rng.permutation(n) if rng is not None else np.argsort(-unit_scores, kind="stable")
    chosen = np.zeros(n, dtype=bool)
    chosen[order[:k]] = True
    return chosen


def perturbations(gs: GraphSet, idx: np.ndarray, mask: np.ndarray, *, ratio: float, budgets: list[float],
                  n_samples: int, seed: int, random_explanation: bool = False) -> list[tuple[int, np.ndarray]]:
    """(graph, kept-edge mask) entries: per graph the intact graph, then for each budget n_samples
    complement removals (sufficiency) and n_samples explanation removals (necessity)."""
    rng = np.random.default_rng(seed)
    eptr = gs.edge_ptr()
    entries, start = [], 0
    for g in idx:
        ea, eb = eptr[g], eptr[g + 1]
        scores = mask[start:start + eb - ea]
        start += eb - ea
        units, n_units = undirected_units(gs.edge_index[:, ea:eb])
        unit_scores = np.bincount(units, weights=scores, minlength=n_units) / np.maximum(
            np.bincount(units, minlength=n_units), 1)
        expl = pick_explanation(unit_scores, ratio, rng if random_explanation else None)
        parts = (np.flatnonzero(~expl), np.flatnonzero(expl))
        entries.append((int(g), np.ones(eb - ea, dtype=bool)))
        for b in budgets:
            for part in parts:
                k = min(len(part), math.ceil(b * len(part)))
                for _ in range(n_samples):
                    removed = np.zeros(n_units, dtype=bool)
                    removed[rng.choice(part, size=k, replace=False)] = True
                    entries.append((int(g), ~removed[units]))
    return entries


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenated aranges [starts[i], starts[i] + lengths[i]) without a Python loop."""
    offsets = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.arange(int(lengths.sum())) - offsets + np.repeat(starts, lengths)


@torch.no_grad()
def perturbed_probs(model: Any, gs: GraphSet, entries: list[tuple[int, np.ndarray]], *, chunk: int = 2048,
                    device: Any = "cpu") -> np.ndarray:
    """Class probabilities of each (graph, kept edges) entry, ``chunk`` entries per forward pass."""
    model.eval()
    eptr, sizes, n_edges = gs.edge_ptr(), np.diff(gs.graph_ptr), np.diff(gs.edge_ptr())
    out = []
    for s in range(0, len(entries), chunk):
        part = entries[s:s + chunk]
        g = np.array([e[0] for e in part])
        nodes = _ranges(gs.graph_ptr[g], sizes[g])
        edges = _ranges(eptr[g], n_edges[g])
        shift = np.repeat(np.cumsum(sizes[g]) - sizes[g] - gs.graph_ptr[g], n_edges[g])
        keep = np.concatenate([e[1] for e in part])
        data = SimpleNamespace(x=torch.from_numpy(gs.x[nodes]).to(device),
                               edge_index=torch.from_numpy((gs.edge_index[:, edges] + shift)[:, keep]).to(device),
                               batch=torch.from_numpy(np.repeat(np.arange(len(part)), sizes[g])).to(device),
                               num_graphs=len(part))
        out.append(torch.softmax(model(data)["logits"], -1).cpu().numpy())
    return np.concatenate(out)


def faith_scores(probs: np.ndarray, n_graphs: int, n_budgets: int, n_samples: int) -> dict[str, np.ndarray]:
    """Per-budget mean sufficiency, necessity and FAITH from the probabilities laid out as ``perturbations``."""
    per_graph = 1 + 2 * n_budgets * n_samples
    p = probs.reshape(n_graphs, per_graph, -1)
    d = np.abs(p[:, 1:] - p[:, :1]).sum(-1).reshape(n_graphs, n_budgets, 2, n_samples).mean(-1)
    suf, nec = np.exp(-d[:, :, 0]), 1 - np.exp(-d[:, :, 1])
    faith = np.where(suf + nec > 0, 2 * suf * nec / np.maximum(suf + nec, 1e-12), 0.0)
    return {"sufficiency": suf.mean(0), "necessity": nec.mean(0), "faith": faith.mean(0)}


def evaluate_faith(model: Any, gs: GraphSet, idx: np.ndarray, mask: np.ndarray, *, ratio: float,
                   budgets: list[float], n_samples: int, seed: int, random_explanation: bool = False,
                   chunk: int = 2048, device: Any = "cpu") -> dict[str, np.ndarray]:
    entries = perturbations(gs, idx, mask, ratio=ratio, budgets=budgets, n_samples=n_samples, seed=seed,
                            random_explanation=random_explanation)
    probs = perturbed_probs(model, gs, entries, chunk=chunk, device=device)
    return faith_scores(probs, len(idx), len(budgets), n_samples)
