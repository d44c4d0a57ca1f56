# ruff: noqa: E741  (k and l are the paper's input and output tensor orders)
"""Orbit basis of the S_n-equivariant maps S^k(R^n) → S^l(R^n).

A pair of multisets (β out, α in), as multiplicity vectors, is fixed up to S_n by its signature: the
multiset of nonzero column pairs (β_i, α_i), a vector partition λ of (l, k) with at most n parts.
X_λ[β, α] = 1 iff sig(β, α) = λ; these are independent and span the equivariant maps."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from paperkit.methods.symeq.symtensor import multiplicities

Label = tuple[tuple[int, int], ...]  # parts (out legs, in legs), in non-increasing order


def vector_partitions(l: int, k: int, max_parts: int | None = None) -> list[Label]:
    """All multisets of nonzero pairs summing to (l, k), parts in non-increasing order, ≤ max_parts parts."""
    parts = sorted(((b, a) for b in range(l + 1) for a in range(k + 1) if b or a), reverse=True)
    out: list[Label] = []

    def grow(rest_l: int, rest_k: int, start: int, acc: list[tuple[int, int]]) -> None:
        if rest_l == 0 and rest_k == 0:
            out.append(tuple(acc))
            return
        if max_parts is not None and len(acc) >= max_parts:
            return
        for i in range(start, len(parts)):
            b, a = parts[i]
            if b <= rest_l and a <= rest_k:
                grow(rest_l - b, rest_k - a, i, acc + [(b, a)])

    grow(l, k, 0, [])
    return out


def orbit_labels(k: int, l: int, n: int | None = None) -> list[Label]:
    """Labels of the orbit basis at n (all of them, the stable set, when n is None or n ≥ k + l)."""
    return vector_partitions(l, k, n)


def pure_input_parts(label: Label) -> int:
    """Parts with input legs only: the indices a map sums over (each costs a factor n)."""
    return sum(1 for b, a in label if b == 0)


def signature(beta, alpha) -> Label:
    return tuple(sorted(((int(b), int(a)) for b, a in zip(beta, alpha, strict=True) if b or a), reverse=True))


def _label_keys(labels: list[Label], k: int, l: int) -> np.ndarray:
    base, width = (l + 1) * (k + 1), k + l
    keys = []
    for lab in labels:
        codes = [b * (k + 1) + a for b, a in lab] + [0] * (width - len(lab))
        keys.append(sum(c * base ** t for t, c in enumerate(codes)))
    return np.asarray(keys, dtype=np.int64)


@lru_cache(maxsize=32)
def gather_indices(k: int, l: int, n: int) -> np.ndarray:
    """int32 [P_out, P_in]: the orbit-label index (into ``orbit_labels(k, l, n)``) of each packed pair."""
    labels = orbit_labels(k, l, n)
    beta, alpha = multiplicities(n, l), multiplicities(n, k)
    base, width = (l + 1) * (k + 1), k + l
    keys = np.zeros((len(beta), len(alpha)), dtype=np.int64)
    for b0 in range(0, len(beta), 256):  # rows in chunks: P_out × P_in × n codes at once would be large
        codes = beta[b0:b0 + 256, None, :] * (k + 1) + alpha[None, :, :]
        top = -np.sort(-codes, axis=-1)[..., :width]
        if top.shape[-1] < width:
            top = np.concatenate([top, np.zeros((*top.shape[:-1], width - top.shape[-1]), np.int64)], -1)
        keys[b0:b0 + 256] = top @ (base ** np.arange(width, dtype=np.int64))
    label_keys = _label_keys(labels, k, l)
    order = np.argsort(label_keys)
    idx = order[np.searchsorted(label_keys[order], keys)]
    return idx.astype(np.int32)


def dense_orbit_basis(k: int, l: int, n: int) -> np.ndarray:
    """[L, P_out, P_in] 0/1 matrices X_λ on packed entries."""
    g = gather_indices(k, l, n)
    L = len(orbit_labels(k, l, n))
    return (g[None] == np.arange(L)[:, None, None]).astype(np.float64)


def label_to_str(label: Label) -> str:
    """'(out,in)(out,in)…', e.g. (1,1)(1,1) for the identity of S^2."""
    return "".join(f"({b},{a})" for b, a in label)
