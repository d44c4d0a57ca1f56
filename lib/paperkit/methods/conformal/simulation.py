"""The linear-model study of Barber et al. (2021) as re-run in the paper (Section 5.1, Figure 2).

Each repetition draws ``beta`` uniformly on the sphere of radius sqrt(10) in R^p, ``X ~ N(0, I)``,
``Y = X beta + N(0, 1)``; fits least squares by the pseudo-inverse (min-norm, no intercept) and
records coverage and length of each method's set for fresh test points (the paper uses one per
repetition). The seed of each ``p`` is derived from ``(seed, p)`` so that adding dimensions leaves the
others unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from paperkit.core.errors import UsageError
from paperkit.datasets.splits import kfold_indices
from paperkit.methods.conformal.baselines import cv_plus, kth_smallest, upper_rank
from paperkit.methods.conformal.combiners import METHODS, check_alpha, guarantee, parse_methods
from paperkit.methods.conformal.full import full_conformal
from paperkit.methods.conformal.models import MinNormOLS
from paperkit.methods.conformal.regression import FoldScores, cross_conformal_sets
from paperkit.methods.conformal.sets import PredictionSets

SIM_METHODS = ("mod", "e-mod", "u-mod", "eu-mod", "cross", "e-cross", "u-cross", "eu-cross", "cvplus",
               "jackknife+", "split", "split-2a", "full")


def barber_data(n: int, p: int, rng: np.random.Generator, *, radius: float = np.sqrt(10.0)) -> tuple[np.ndarray, np.ndarray]:
    beta = rng.standard_normal(p)
    beta *= radius / np.linalg.norm(beta)
    X = rng.standard_normal((n, p))
    return X, X @ beta + rng.standard_normal(n)


def _fit(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.linalg.pinv(X) @ y


def loo_min_norm_ols(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The n leave-one-out min-norm least-squares fits (n, p).

    With full column rank after deleting any row the usual rank-one downdate gives them from one fit
    (``beta_-i = beta - (X'X)^-1 x_i e_i / (1 - h_ii)``); otherwise pinv of the stacked (n, n-1, p)
    design matrices.
    """
    n, p = X.shape
    if p < n - 1:
        gram_inv = np.linalg.pinv(X.T @ X)
        beta = gram_inv @ (X.T @ y)
        resid = y - X @ beta
        G = X @ gram_inv  # row i: (X'X)^-1 x_i
        h = np.einsum("ip,ip->i", G, X)
        if np.linalg.matrix_rank(X) == p and np.all(h < 1 - 1e-8):
            return beta[None, :] - G * (resid / (1 - h))[:, None]
    idx = np.array([np.delete(np.arange(n), i) for i in range(n)])
    return np.einsum("ipn,in->ip", np.linalg.pinv(X[idx]), y[idx])


def one_repetition(X: np.ndarray, y: np.ndarray, X_test: np.ndarray, n_folds: int, alpha: float,
                   methods: Sequence[str], rng: np.random.Generator) -> dict[str, PredictionSets]:
    """Every requested method's sets for the test rows, min-norm OLS as in the paper."""
    n = len(y)
    folds = kfold_indices(n, n_folds, rng)
    mu = np.empty((len(X_test), n_folds))
    per_fold = []
    for k, test in enumerate(folds):
        train = np.concatenate([folds[j] for j in range(n_folds) if j != k])
        beta = _fit(X[train], y[train])
        per_fold.append(np.abs(y[test] - X[test] @ beta))
        mu[:, k] = X_test @ beta
    fs = FoldScores.from_folds(per_fold)
    u = rng.random(len(X_test))
    cc = [m for m in methods if METHODS[m].kind == "combiner" or m == "cvplus"]
    out = cross_conformal_sets(mu, None, fs, cc, alpha, u) if cc else {}
    if "jackknife+" in methods:
        betas = loo_min_norm_ols(X, y)
        loo = np.abs(y - np.einsum("ip,ip->i", X, betas))
        out["jackknife+"] = cv_plus(X_test @ betas.T, np.ones((len(X_test), n)), loo, np.arange(n + 1), alpha)
    if "full" in methods:  # the paper's full-conformal baseline, min-norm OLS refitted for every candidate y
        out["full"] = full_conformal(MinNormOLS(), X, y, X_test, alpha)
    wanted = [a for m, a in (("split", alpha), ("split-2a", 2 * alpha)) if m in methods]
    if wanted:
        perm = rng.permutation(n)
        train, cal = perm[: n // 2], perm[n // 2:]
        beta = _fit(X[train], y[train])
        cal_scores = np.abs(y[cal] - X[cal] @ beta)
        centre = X_test @ beta
        for m, a in (("split", alpha), ("split-2a", 2 * alpha)):
            if m in methods:
                q = kth_smallest(cal_scores[None, :], upper_rank(a, len(cal)), axis=1)[0]
                out[m] = PredictionSets.from_intervals(centre - q, centre + q)
    return {m: out[m] for m in methods}


def simulate_dimension(n: int, p: int, reps: int, *, n_folds: int = 5, alpha: float = 0.1,
                       methods: Sequence[str] = SIM_METHODS, seed: int = 0, n_test: int = 1,
                       progress: Callable[..., Any] | None = None) -> list[dict[str, Any]]:
    """One row per (repetition, method): coverage and mean length over the repetition's test points."""
    alpha = check_alpha(alpha)
    methods = parse_methods(list(methods), allowed=SIM_METHODS)
    if n < 2 * n_folds or n < 4:
        raise UsageError(f"n = {n} is too small for {n_folds} folds; expected n >= {max(4, 2 * n_folds)}")
    if p < 1 or reps < 1 or n_test < 1:
        raise UsageError("p, reps and test points must be at least 1")
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), int(p)]))
    rows: list[dict[str, Any]] = []
    it = range(reps) if progress is None else progress(range(reps), desc=f"p={p}", unit="rep")
    # The matrices are tiny: BLAS threads only add start-up and contention (10x slower on busy machines).
    with threadpool_limits(1):
        for rep in it:
            X, y = barber_data(n + n_test, p, rng)
            sets = one_repetition(X[:n], y[:n], X[n:], n_folds, alpha, methods, rng)
            for m in methods:
                s = sets[m]
                rows.append({"p": p, "rep": rep, "method": m, "coverage": float(s.contains(y[n:]).mean()),
                             "length": float(s.length.mean()), "n_segments": float(s.n_segments.mean())})
    return rows


def summarize(rows: Sequence[dict[str, Any]], *, n: int, n_folds: int, alpha: float) -> list[dict[str, Any]]:
    """Per (p, method): coverage (with its Monte-Carlo standard error), mean and median length, bound."""
    out = []
    keys = sorted({(r["p"], r["method"]) for r in rows}, key=lambda k: (k[0], SIM_METHODS.index(k[1])))
    for p, m in keys:
        cov = np.array([r["coverage"] for r in rows if r["p"] == p and r["method"] == m])
        length = np.array([r["length"] for r in rows if r["p"] == p and r["method"] == m])
        finite = length[np.isfinite(length)]
        out.append({
            "p": p, "method": m, "reps": len(cov), "guarantee": round(guarantee(m, alpha, n, n_folds), 6),
            "coverage": float(cov.mean()), "coverage_se": float(cov.std(ddof=1) / np.sqrt(len(cov))) if len(cov) > 1 else 0.0,
            "mean_length": float(length.mean()), "median_length": float(np.median(length)),
            "infinite_sets": int(np.sum(~np.isfinite(length))),
            "mean_finite_length": float(finite.mean()) if len(finite) else float("nan"),
        })
    return out
