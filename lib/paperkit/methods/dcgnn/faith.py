r"""FAITH: sufficiency and necessity of an edge explanation under edge-removal budgets, as the official DC-GNN
code computes it (Azzolin et al., ICML 2025, App. on faithfulness; github.com/steveazzolin/beyond-topo-segnns,
``compute_metric_ratio`` and ``sample_edges_tensorized_batched`` with ``deconfounded`` sampling and
``prop_G_dataset`` budgets).

For a graph G with explanation R (the top ceil(``ratio``·U) of its U undirected edges by mask score) and
complement C = G \ R, and a budget α:
- necessity: remove k_nec = max(1, ⌊α·Ē⌋) random edges of R, Ē the mean number of directed edges of the
  evaluated graphs; Nec(G) = 1 − exp(−mean_s ‖p(G) − p(G \ S_s)‖₁) over ``n_samples`` draws;
- sufficiency: the same with k_suf = max(1, ⌊2α·Ē⌋) edges of C; Suf(G) = exp(−mean_s ‖p(G) − p(G \ S_s)‖₁);
- k is capped at min(k, ⌊E_G/2⌋ − 2, |part|); a graph with k = 0 is left out of that test, graphs with at
  most 6 directed edges out of both;
- Suf and Nec are averaged over graphs, and FAITH = 2·Suf·Nec / (Suf + Nec) of those averages.
The random-explanation baseline draws R at random (same size); the paper reports FAITH(random) / FAITH.
An undirected edge is removed in both directions. All perturbed graphs go through the model in large batches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch

from paperkit.methods.dcgnn.data import GraphSet

MIN_DIRECTED_EDGES = 7   # the official code skips graphs with at most 6 directed edges
SUFFICIENCY, NECESSITY = 0, 1


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


def removal_count(alpha: float, mean_edges: float, n_directed: int, part_size: int) -> int:
    """Undirected edges to remove for budget ``alpha`` (0: the test is skipped for this graph)."""
    k = max(1, int(alpha * mean_edges))
    return max(0, min(k, n_directed // 2 - 2, part_size))


@dataclass
class Perturbations:
    """Perturbed copies of the evaluated graphs: ``entries`` (graph id, kept-edge mask) and, per entry, the
    position of its graph among the evaluated ones and its (budget, test) cell; intact graphs have cell −1."""
    entries: list[tuple[int, np.ndarray]]
    graph_pos: np.ndarray
    cell: np.ndarray
    n_graphs: int
    n_budgets: int


def perturbations(gs: GraphSet, idx: np.ndarray, mask: np.ndarray, *, ratio: float, budgets: list[float],
                  n_samples: int, seed: int, random_explanation: bool = False) -> Perturbations:
    """Per evaluated graph its intact copy, then per budget ``n_samples`` complement removals (sufficiency) and
    ``n_samples`` explanation removals (necessity). ``mask`` holds the scores of the edges of ``idx``, in order."""
    rng = np.random.default_rng(seed)
    eptr = gs.edge_ptr()
    n_edges = np.diff(eptr)[idx]
    mean_edges = float(n_edges.mean()) if len(idx) else 0.0
    starts = np.concatenate([[0], np.cumsum(n_edges)])
    entries, graph_pos, cell = [], [], []
    kept = [i for i, g in enumerate(idx) if n_edges[i] >= MIN_DIRECTED_EDGES]
    for pos, i in enumerate(kept):
        g, ea, eb = int(idx[i]), eptr[idx[i]], eptr[idx[i] + 1]
        units, n_units = undirected_units(gs.edge_index[:, ea:eb])
        scores = mask[starts[i]:starts[i + 1]]
        unit_scores = np.bincount(units, weights=scores, minlength=n_units) / np.maximum(
            np.bincount(units, minlength=n_units), 1)
        expl = pick_explanation(unit_scores, ratio, rng if random_explanation else None)
        parts = {SUFFICIENCY: np.flatnonzero(~expl), NECESSITY: np.flatnonzero(expl)}
        entries.append((g, np.ones(eb - ea, dtype=bool)))
        graph_pos.append(pos)
        cell.append(-1)
        for b, alpha in enumerate(budgets):
            for test, part in parts.items():
                k = removal_count(alpha * (2 if test == SUFFICIENCY else 1), mean_edges, eb - ea, len(part))
                for _ in range(n_samples if k else 0):
                    removed = np.zeros(n_units, dtype=bool)
                    removed[rng.choice(part, size=k, replace=False)] = True
                    entries.append((g, ~removed[units]))
                    graph_pos.append(pos)
                    cell.append(2 * b + test)
    return Perturbations(entries, np.array(graph_pos, np.int64), np.array(cell, np.int64), len(kept), len(budgets))


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenated aranges [starts[i], starts[i] + lengths[i]) without a Python loop."""
    offsets = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.arange(int(lengths.sum())) - offsets + np.repeat(starts, lengths)


def default_chunk(device: Any) -> int:
    """Perturbed graphs per forward pass: on the CPU a few hundred keep a pass's activations in cache (400 motif
    graphs × 3 budgets × 8 samples: 256 per pass 1.9 s, 4,096 per pass 3.0 s, one thread); accelerators want
    large batches."""
    return 256 if torch.device(device).type == "cpu" else 4096


@torch.no_grad()
def perturbed_probs(model: Any, gs: GraphSet, entries: list[tuple[int, np.ndarray]], *, chunk: int | None = None,
                    device: Any = "cpu") -> np.ndarray:
    """Class probabilities of each (graph, kept edges) entry, ``chunk`` entries per forward pass."""
    chunk = chunk or default_chunk(device)
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


def faith_scores(probs: np.ndarray, pert: Perturbations) -> dict[str, np.ndarray]:
    """Per budget: sufficiency and necessity averaged over the graphs that have the test, FAITH their harmonic
    mean, and the graph counts, from the probabilities of ``pert.entries``."""
    intact = np.zeros((pert.n_graphs, probs.shape[1]))
    is_intact = pert.cell < 0
    intact[pert.graph_pos[is_intact]] = probs[is_intact]
    pert_rows = ~is_intact
    dist = np.abs(probs[pert_rows] - intact[pert.graph_pos[pert_rows]]).sum(-1)
    flat = pert.graph_pos[pert_rows] * 2 * pert.n_budgets + pert.cell[pert_rows]
    size = pert.n_graphs * 2 * pert.n_budgets
    total = np.bincount(flat, weights=dist, minlength=size).reshape(pert.n_graphs, pert.n_budgets, 2)
    count = np.bincount(flat, minlength=size).reshape(pert.n_graphs, pert.n_budgets, 2)
    has = count > 0
    per_graph = np.stack([np.exp(-total[..., 0] / np.maximum(count[..., 0], 1)),
                          1 - np.exp(-total[..., 1] / np.maximum(count[..., 1], 1))], -1)
    n = has.sum(0)                                              # (budgets, {suf, nec}) graphs with the test
    with np.errstate(invalid="ignore", divide="ignore"):
        suf, nec = ((per_graph * has).sum(0) / n).T             # NaN where no graph has the test
        faith = np.where(suf + nec == 0, 0.0, 2 * suf * nec / (suf + nec))
    return {"sufficiency": suf, "necessity": nec, "faith": faith, "graphs_sufficiency": n[:, 0],
            "graphs_necessity": n[:, 1]}


def evaluate_faith(model: Any, gs: GraphSet, idx: np.ndarray, mask: np.ndarray, *, ratio: float,
                   budgets: list[float], n_samples: int, seed: int, random_explanation: bool = False,
                   chunk: int | None = None, device: Any = "cpu") -> dict[str, np.ndarray]:
    pert = perturbations(gs, idx, mask, ratio=ratio, budgets=budgets, n_samples=n_samples, seed=seed,
                         random_explanation=random_explanation)
    probs = perturbed_probs(model, gs, pert.entries, chunk=chunk, device=device) if pert.entries else np.zeros((0, 1))
    return faith_scores(probs, pert)
