"""Fold p-values from a file, combined row by row (what ``paperkit conformal-combine`` runs)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from paperkit.core import io
from paperkit.core.errors import InputError, UsageError
from paperkit.core.readers import read_numeric
from paperkit.methods.conformal.combiners import check_alpha, combine, in_set

TABLE_COMBINERS = ("mean", "e", "u", "eu", "min")


def read_pvalues(path: str | os.PathLike) -> np.ndarray:
    """A (rows, K) matrix of p-values in (0, 1] from .npy/.npz or a numeric table."""
    name = io.display_name(path)
    p = read_numeric(path, "p-values", ndim=(1, 2), finite=False, fmt=None)
    if p.ndim == 1:
        p = p.reshape(1, -1)
    if p.shape[0] == 0 or p.shape[1] == 0:
        raise InputError(f"{name}: p-values have shape {p.shape}; expected (rows, K folds) with at least one of each")
    p = p.astype(np.float64)
    bad = ~(np.isfinite(p) & (p > 0) & (p <= 1))
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise InputError(f"{name}: {int(bad.sum())} value(s) outside (0, 1], e.g. row {r + 1}, column {c + 1} = "
                         f"{float(p[r, c])!r}; expected p-values in (0, 1]")
    return p


def combine_rows(p: np.ndarray, combiners: Sequence[str], alpha: float, seed: int) -> list[dict[str, Any]]:
    alpha = check_alpha(alpha)
    if not combiners:
        raise UsageError("no combiner given; expected some of " + ", ".join(TABLE_COMBINERS))
    for c in combiners:
        if c not in TABLE_COMBINERS:
            raise UsageError(f"unknown combiner '{c}'; expected one of {', '.join(TABLE_COMBINERS)}")
    K = p.shape[1]
    u = np.random.default_rng(seed).random(len(p))
    rows = []
    values = {c: combine(p, c, u) for c in combiners}
    for i in range(len(p)):
        for c in combiners:
            v = float(values[c][i])
            factor, level = (K, alpha / K) if c == "min" else (2, alpha)
            rows.append({"row": i + 1, "combiner": c, "value": v, "pvalue": min(1.0, factor * v),
                         "keep": bool(in_set(np.array([v]), level)[0])})
    return rows
