# ruff: noqa: E741  (k and l are the paper's input and output tensor orders)
"""Diagram basis: set partitions of the l output and k input legs as maps applied without matrices.

D_π on full tensors: legs in one block share an index value, blocks are unconstrained. Per block:
input legs only → contract (sum) along the diagonal (scaled 1/n so scales stay stable across n);
input and output legs → take the input diagonal and copy it onto the output diagonal; output legs only →
broadcast ones along an output diagonal. Symmetrising the output gives the map of the label λ (the
partition's S_l×S_k orbit). The integer change of basis D_λ = Σ_μ c_λμ X_μ and its Möbius inverse are
exact (fractions)."""

from __future__ import annotations

import itertools
import string
from collections import Counter
from fractions import Fraction
from functools import lru_cache
from math import factorial, prod

import numpy as np

from paperkit.methods.symeq.orbit import Label, orbit_labels

Blocks = tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]  # per block: (output legs, input legs)


def set_partitions(m: int):
    """All set partitions of range(m) as restricted growth strings (block id per element)."""
    def grow(prefix: list[int], top: int):
        if len(prefix) == m:
            yield tuple(prefix)
            return
        for b in range(top + 2):
            yield from grow(prefix + [b], max(top, b))
    yield from grow([], -1)


def blocks_of(rgs: tuple[int, ...], l: int) -> Blocks:
    """Legs 0..l-1 are outputs, l..l+k-1 inputs (numbered 0..k-1 within their side)."""
    out = []
    for b in range(max(rgs, default=-1) + 1):
        legs = [i for i, x in enumerate(rgs) if x == b]
        out.append((tuple(i for i in legs if i < l), tuple(i - l for i in legs if i >= l)))
    return tuple(out)


def label_of(blocks: Blocks) -> Label:
    return tuple(sorted(((len(o), len(i)) for o, i in blocks), reverse=True))


def representative(label: Label) -> Blocks:
    """One partition of the label: parts take consecutive output and input legs."""
    out, o, i = [], 0, 0
    for b, a in label:
        out.append((tuple(range(o, o + b)), tuple(range(i, i + a))))
        o, i = o + b, i + a
    return tuple(out)


def orbit_size(label: Label, k: int, l: int) -> int:
    """Number of set partitions of the l+k legs with this label."""
    denom = prod(factorial(b) * factorial(a) for b, a in label) * prod(factorial(m) for m in Counter(label).values())
    return factorial(l) * factorial(k) // denom


def all_partitions(k: int, l: int) -> list[Blocks]:
    """Every set partition of the l+k legs (Bell(k+l) of them): the Maron-style full-tensor basis."""
    return [blocks_of(r, l) for r in set_partitions(k + l)]


@lru_cache(maxsize=256)
def _scatter_index(blocks: Blocks, l: int, n: int) -> np.ndarray:
    """Flat output positions for each value assignment of the blocks that have output legs."""
    strides = [n ** (l - 1 - t) for t in range(l)]
    block_strides = [sum(strides[t] for t in o) for o, _ in blocks if o]
    grids = np.meshgrid(*[np.arange(n)] * len(block_strides), indexing="ij")
    return sum(g * s for g, s in zip(grids, block_strides, strict=True)).reshape(-1).astype(np.int64)


def apply_partition(x, blocks: Blocks, k: int, l: int, *, normalize: bool = True):
    """D_π(x) for full tensors x [..., n^k as k axes] → [..., n^l as l axes] (torch), no symmetrisation."""
    import torch
    n = x.shape[-1] if k else None
    letters = string.ascii_letters
    in_sub = [""] * k
    for b, (_, ins) in enumerate(blocks):
        for t in ins:
            in_sub[t] = letters[b]
    kept = [b for b, (o, i) in enumerate(blocks) if o and i]
    core = torch.einsum(f"...{''.join(in_sub)}->...{''.join(letters[b] for b in kept)}", x)
    pure_in = sum(1 for o, i in blocks if i and not o)
    if normalize and pure_in:
        core = core / float(n) ** pure_in
    if l == 0:
        return core
    n = n or x.shape[-1]
    pure_out = sum(1 for o, i in blocks if o and not i)
    lead = core.shape[:core.ndim - len(kept)]
    core = core.reshape(*lead, *(n,) * len(kept), *(1,) * pure_out).expand(*lead, *(n,) * (len(kept) + pure_out))
    # the scatter index lists blocks in their own order; put the kept ones first to match ``core``
    order = [b for b in kept] + [b for b, (o, i) in enumerate(blocks) if o and not i]
    idx = torch.as_tensor(_scatter_index(tuple(blocks[b] for b in order), l, n), device=x.device)
    flat = core.reshape(*lead, -1)
    y = flat.new_zeros(*lead, n ** l).index_add(flat.ndim - 1, idx, flat)
    return y.reshape(*lead, *(n,) * l)


def _kernel(values: tuple[int, ...]) -> tuple[int, ...]:
    """Set partition (restricted growth string) of legs by equal index value."""
    seen: dict[int, int] = {}
    return tuple(seen.setdefault(v, len(seen)) for v in values)


def _refinement_labels(kernel: tuple[int, ...], l: int) -> Counter:
    """Labels of all set partitions that refine ``kernel`` (legs in one block of a refinement are equal)."""
    groups = [[i for i, x in enumerate(kernel) if x == b] for b in range(max(kernel) + 1)]
    per_group = [[tuple(tuple(g[j] for j, x in enumerate(r) if x == c) for c in range(max(r) + 1))
                  for r in set_partitions(len(g))] for g in groups]
    counts: Counter = Counter()
    for choice in itertools.product(*per_group):
        parts = [p for group in choice for p in group]
        counts[tuple(sorted(((sum(1 for t in p if t < l), sum(1 for t in p if t >= l)) for p in parts),
                            reverse=True))] += 1
    return counts


@lru_cache(maxsize=32)
def change_of_basis(k: int, l: int) -> tuple[tuple[Label, ...], np.ndarray]:
    """(labels, C) with D_λ = Σ_μ C[λ, μ] X_μ, where D_λ = Σ_{π ∈ orbit λ} D_π acts on packed entries and
    X_μ is the orbit basis. Integer, upper triangular when labels are ordered by decreasing number of parts."""
    labels = tuple(sorted(orbit_labels(k, l), key=lambda lab: (-len(lab), lab)))
    pos = {lab: i for i, lab in enumerate(labels)}
    C = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for mu in labels:
        # representative pair at n = #parts: value v carries part mu[v]
        out_vals = [v for v, (b, _) in enumerate(mu) for _ in range(b)]
        in_vals = [v for v, (_, a) in enumerate(mu) for _ in range(a)]
        for arrangement in set(itertools.permutations(in_vals)):
            for lab, c in _refinement_labels(_kernel(tuple(out_vals) + arrangement), l).items():
                C[pos[lab], pos[mu]] += c
    return labels, C


def mobius_inverse(C: np.ndarray) -> list[list[Fraction]]:
    """Exact inverse of the upper-triangular integer change of basis (X_μ = Σ_λ inv[μ][λ] D_λ)."""
    m = len(C)
    inv = [[Fraction(0)] * m for _ in range(m)]
    for j in range(m):  # solve C · col_j = e_j by back substitution
        for i in range(m - 1, -1, -1):
            s = Fraction(int(i == j)) - sum((Fraction(int(C[i, t])) * inv[t][j] for t in range(i + 1, m)), Fraction(0))
            inv[i][j] = s / int(C[i, i])
    return inv
