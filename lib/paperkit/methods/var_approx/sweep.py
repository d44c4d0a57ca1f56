"""Sweeps over (target, L, width, embed, scales, seed): the grid, its shards, and the log–log slope of test
error against width with a bootstrap interval over seeds."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from paperkit.methods.var_approx.train import Problem

GROUP = ("target", "lipschitz", "embed", "scales")


def grid(base: Problem, targets: Sequence[str], lipschitz: Sequence[float], widths: Sequence[int],
         embeds: Sequence[int], schedules: Sequence[tuple[int, ...]]) -> list[Problem]:
    """Every cell of the sweep, in a fixed order (cell i is the i-th)."""
    return [replace(base, target=t, lipschitz=float(lip), width=int(w), embed=int(e), scales=tuple(s))
            for t, lip, s, e, w in itertools.product(targets, lipschitz, schedules, embeds, widths)]


def shard_cells(n_cells: int, shard: tuple[int, int]) -> list[int]:
    """The cells of shard K of N (1-based K): every N-th cell from the (K−1)-th."""
    k, n = shard
    return list(range(k - 1, n_cells, n))


def cell_rows(index: int, p: Problem, seeds: Sequence[int], metrics: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"cell": index, "target": p.target, "lipschitz": p.lipschitz, "width": p.width, "embed": p.embed,
             "scales": "-".join(map(str, p.scales)), "seed": int(s), **{k: m[k] for k in (
                 "train_rmse", "test_rmse", "test_rel_l2", "test_max_error", "parameters", "tokens")}}
            for s, m in zip(seeds, metrics, strict=True)]


def slope(widths: np.ndarray, errors: np.ndarray) -> float:
    """Least-squares slope of log error against log width."""
    return float(np.polyfit(np.log(widths), np.log(errors), 1)[0])


def slopes(rows: Sequence[dict[str, Any]], *, seed: int = 0, resamples: int = 1000) -> list[dict[str, Any]]:
    """Per (target, L, embed, scales): the slope of log median-over-seeds test RMSE vs log width, with a 95%
    bootstrap interval (seeds resampled with replacement at every width)."""
    from scipy.stats import spearmanr

    rng = np.random.default_rng(seed)
    out = []
    keys = sorted({tuple(r[k] for k in GROUP) for r in rows}, key=lambda t: tuple(map(str, t)))
    for key in keys:
        sel = [r for r in rows if tuple(r[k] for k in GROUP) == key]
        widths = np.array(sorted({r["width"] for r in sel}))
        if len(widths) < 2:
            continue
        per = [np.array([r["test_rmse"] for r in sel if r["width"] == w]) for w in widths]
        med = np.array([np.median(e) for e in per])
        boot = [slope(widths, np.array([np.median(rng.choice(e, len(e))) for e in per])) for _ in range(resamples)]
        lo, hi = np.percentile(boot, [2.5, 97.5])
        out.append({**dict(zip(GROUP, key, strict=True)), "slope": slope(widths, med), "slope_lo": float(lo),
                    "slope_hi": float(hi), "spearman": float(spearmanr(widths, med)[0]),
                    "rmse_first": float(med[0]), "rmse_last": float(med[-1]),
                    "width_first": int(widths[0]), "width_last": int(widths[-1])})
    return out


def merge_rows(parts: Sequence[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Rows of several shards as one sweep, ordered by cell then seed (as an unsharded run writes them)."""
    rows = [r for part in parts for r in part]
    seen = {(r["cell"], r["seed"]) for r in rows}
    if len(seen) != len(rows):
        from paperkit.core.errors import InputError
        raise InputError("the shards overlap: some (cell, seed) rows appear twice")
    return sorted(rows, key=lambda r: (int(r["cell"]), int(r["seed"])))
