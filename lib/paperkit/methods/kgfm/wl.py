"""The two-stage WL test of MOTIF (App. C): colour refinement on LIFT_F(G) from 1[r = q], then relational
local 2-WL on G from the source entity u with those relation colours. Two relations (or links) that end
with equal colours cannot be told apart by MOTIF(F); colours are hashed stably (blake2b), so equal
colours across runs and processes mean equal refinement histories."""

from __future__ import annotations

import hashlib

import numpy as np

from paperkit.methods.kgfm.data import Graph
from paperkit.methods.kgfm.lift import Lift


def stable_hash(obj: object) -> int:
    return int.from_bytes(hashlib.blake2b(repr(obj).encode(), digest_size=8).digest(), "little")


def _refine(cols: list[int], signatures: list[list[tuple]], rounds: int | None) -> list[int]:
    """Refine until the partition stops splitting (or ``rounds`` rounds)."""
    n_classes = len(set(cols))
    step = 0
    while rounds is None or step < rounds:
        new = [stable_hash((cols[i], sorted((s[0], s[1], tuple(cols[j] for j in s[2])) for s in sig)))
               for i, sig in enumerate(signatures)]
        step += 1
        grown = len(set(new))
        cols = new
        if rounds is None and grown == n_classes:
            break
        n_classes = grown
    return cols


def relation_colors(lf: Lift, query: int, rounds: int | None = None) -> np.ndarray:
    """Stage 1: each relation's colour after refinement on the lift from the indicator of the query."""
    sigs: list[list[tuple]] = [[] for _ in range(lf.n_rel2)]
    for motif, edges in lf.edges.items():
        for e in edges.tolist():
            for i, r in enumerate(e):
                sigs[r].append((motif, i, [x for j, x in enumerate(e) if j != i]))
    cols = [int(r == query) for r in range(lf.n_rel2)]
    return np.array(_refine(cols, sigs, rounds), dtype=np.uint64)


def entity_colors(graph: Graph, rel_colors: np.ndarray, source: int, rounds: int | None = None) -> np.ndarray:
    """Stage 2: relational local 2-WL: colours of the pairs (source, v), messages along r(w, v)."""
    sigs: list[list[tuple]] = [[] for _ in range(graph.n_entities)]
    for h, r, t in graph.edges.tolist():
        sigs[t].append(("in", int(rel_colors[r]), [h]))
    cols = [int(v == source) for v in range(graph.n_entities)]
    return np.array(_refine(cols, sigs, rounds), dtype=np.uint64)


def separated_pairs(colors: np.ndarray, items: list[int]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Pairs of ``items`` with different (separated) and equal (tied) colours."""
    sep, tied = [], []
    for i, a in enumerate(items):
        for b in items[i + 1:]:
            (sep if colors[a] != colors[b] else tied).append((a, b))
    return sep, tied
