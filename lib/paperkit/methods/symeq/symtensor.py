"""Packed symmetric tensors S^k(R^n): one entry per multiset of k indices (sorted index tuple), the
S_n action that relabels all indices at once, and the map between packed and full n^k storage."""

from __future__ import annotations

import itertools
from functools import lru_cache
from math import comb

import numpy as np


def packed_size(n: int, k: int) -> int:
    """dim S^k(R^n) = C(n+k-1, k)."""
    return comb(n + k - 1, k)


@lru_cache(maxsize=64)
def multisets(n: int, k: int) -> np.ndarray:
    """[P, k] sorted index tuples in lexicographic order (the packed order)."""
    rows = list(itertools.combinations_with_replacement(range(n), k))
    return np.asarray(rows, dtype=np.int64).reshape(len(rows), k)


@lru_cache(maxsize=64)
def multiplicities(n: int, k: int) -> np.ndarray:
    """[P, n] multiplicity vectors α (|α| = k) of the packed multisets."""
    ms = multisets(n, k)
    out = np.zeros((len(ms), n), dtype=np.int64)
    for t in range(k):
        np.add.at(out, (np.arange(len(ms)), ms[:, t]), 1)
    return out


def _encode(tuples: np.ndarray, n: int) -> np.ndarray:
    return tuples @ (n ** np.arange(tuples.shape[-1] - 1, -1, -1, dtype=np.int64))


@lru_cache(maxsize=64)
def packed_positions(n: int, k: int) -> np.ndarray:
    """[P] flat positions in the n^k array of each packed multiset (its sorted representative)."""
    return _encode(multisets(n, k), n)


@lru_cache(maxsize=64)
def unpack_index(n: int, k: int) -> np.ndarray:
    """[n^k] packed index of every full entry (the entry of its sorted index tuple)."""
    full = np.indices((n,) * k).reshape(k, -1).T
    return np.searchsorted(packed_positions(n, k), _encode(np.sort(full, axis=1), n))


def _index_like(x, idx: np.ndarray):
    if isinstance(x, np.ndarray):
        return idx
    import torch
    return torch.as_tensor(idx, device=x.device)


def pack(x, k: int):
    """Full [..., n, ..., n] (k trailing axes) → packed [..., P]. Works on numpy arrays and torch tensors."""
    if k == 0:
        return x[..., None]
    n = x.shape[-1]
    flat = x.reshape(*x.shape[:-k], n ** k)
    return flat[..., _index_like(x, packed_positions(n, k))]


def unpack(p, n: int, k: int):
    """Packed [..., P] → full symmetric [..., n, ..., n]."""
    if k == 0:
        return p[..., 0]
    return p[..., _index_like(p, unpack_index(n, k))].reshape(*p.shape[:-1], *(n,) * k)


def act(perm, x, k: int):
    """σ·T with (σ·T)[σ(i_1), ..., σ(i_k)] = T[i_1, ..., i_k] on the k trailing axes."""
    inv = np.argsort(np.asarray(perm))
    idx = _index_like(x, inv)
    for ax in range(x.ndim - k, x.ndim):
        x = x.index_select(ax, idx) if not isinstance(x, np.ndarray) else np.take(x, idx, axis=ax)
    return x


def symmetrize(x, k: int):
    """Mean over all k! orders of the k trailing axes."""
    if k <= 1:
        return x
    lead = x.ndim - k
    perms = list(itertools.permutations(range(k)))
    total = None
    for p in perms:
        axes = tuple(range(lead)) + tuple(lead + q for q in p)
        y = x.transpose(axes) if isinstance(x, np.ndarray) else x.permute(axes)
        total = y if total is None else total + y
    return total / len(perms)


def asymmetry(x: np.ndarray, k: int) -> float:
    """Largest |T - T∘τ| over swaps of adjacent trailing axes (0 for a symmetric tensor)."""
    worst = 0.0
    for t in range(x.ndim - k, x.ndim - 1):
        worst = max(worst, float(np.max(np.abs(x - np.swapaxes(x, t, t + 1)), initial=0.0)))
    return worst


def n_from_packed(length: int, k: int) -> int | None:
    """The n with C(n+k-1, k) == length, or None."""
    n = 1
    while packed_size(n, k) < length:
        n += 1
    return n if packed_size(n, k) == length else None
