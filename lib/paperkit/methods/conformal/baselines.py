"""The baselines the paper compares against: CV+, jackknife+ (Barber et al. 2021) and split conformal.

CV+ and jackknife+: ``[q-{mu_k(i)(x) - R_i}, q+{mu_k(i)(x) + R_i}]`` with ``q-`` the
``floor(alpha (n + 1))``-th smallest value and ``q+`` the ``ceil((1 - alpha)(n + 1))``-th smallest
(an infinite bound when the rank falls outside 1..n). Jackknife+ is CV+ with n folds of one point.
Split conformal: fit on one half, the ``ceil((1 - alpha)(n_cal + 1))``-th smallest calibration score.
Bonferroni (``min_k p_k``) is a combiner (see :mod:`~paperkit.methods.conformal.combiners`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from paperkit.methods.conformal.sets import PredictionSets

# Ranks are computed from products such as 0.9 * 100 = 90.00000000000001; nudge before rounding so
# that an exact integer product gives the exact rank.
_RANK_EPS = 1e-9


def upper_rank(alpha: float, n: int) -> int:
    """``ceil((1 - alpha)(n + 1))``: the rank of the upper conformal quantile among n scores."""
    return int(math.ceil((1 - alpha) * (n + 1) - _RANK_EPS))


def lower_rank(alpha: float, n: int) -> int:
    """``floor(alpha (n + 1))``: the rank of the lower CV+ quantile."""
    return int(math.floor(alpha * (n + 1) + _RANK_EPS))


def kth_smallest(values: np.ndarray, k: int, axis: int = -1) -> np.ndarray:
    """The k-th smallest (1-based) along ``axis``; -inf for k < 1 and +inf for k > n."""
    n = values.shape[axis]
    shape = list(values.shape)
    del shape[axis]
    if k < 1:
        return np.full(shape, -np.inf)
    if k > n:
        return np.full(shape, np.inf)
    return np.take(np.partition(values, k - 1, axis=axis), k - 1, axis=axis)


def cv_plus(mu: np.ndarray, scale: np.ndarray, scores: np.ndarray, fold_start: np.ndarray,
            alpha: float) -> PredictionSets:
    """CV+ intervals from fold predictions ``mu`` (T, K), scales (T, K) and scores fold after fold."""
    K = mu.shape[1]
    fold_of = np.repeat(np.arange(K), np.diff(fold_start))
    n = len(scores)
    centre = mu[:, fold_of]
    spread = scale[:, fold_of] * scores[None, :]
    lo = kth_smallest(centre - spread, lower_rank(alpha, n), axis=1)
    hi = kth_smallest(centre + spread, upper_rank(alpha, n), axis=1)
    return PredictionSets.from_intervals(lo, hi)


def jackknife_plus(estimator: Any, X: np.ndarray, y: np.ndarray, X_test: np.ndarray, alpha: float,
                   *, progress: Any = None) -> PredictionSets:
    """Jackknife+ with n leave-one-out fits of ``estimator`` (absolute residual score)."""
    from sklearn.base import clone

    n = len(y)
    mu = np.empty((len(X_test), n))
    scores = np.empty(n)
    rows = range(n) if progress is None else progress(range(n), desc="jackknife+ fits", unit="fit")
    for i in rows:
        keep = np.ones(n, dtype=bool)
        keep[i] = False
        model = clone(estimator).fit(X[keep], y[keep])
        both = model.predict(np.vstack([X[i:i + 1], X_test]))
        scores[i] = abs(y[i] - both[0])
        mu[:, i] = both[1:]
    return cv_plus(mu, np.ones_like(mu), scores, np.arange(n + 1), alpha)


def split_fit(estimator: Any, X: np.ndarray, y: np.ndarray, rng: np.random.Generator, *,
              train_fraction: float = 0.5) -> tuple[Any, np.ndarray]:
    """Split conformal's fit: the model fitted on one part and the absolute residuals of the other."""
    from sklearn.base import clone

    n = len(y)
    perm = rng.permutation(n)
    n_train = max(1, min(n - 1, int(round(train_fraction * n))))
    train, cal = perm[:n_train], perm[n_train:]
    model = clone(estimator).fit(X[train], y[train])
    return model, np.abs(y[cal] - model.predict(X[cal]))


def split_sets(model: Any, cal_scores: np.ndarray, X_test: np.ndarray, alphas: Sequence[float]
               ) -> tuple[list[PredictionSets], np.ndarray]:
    """Split conformal sets at each level in ``alphas`` and the model's prediction (the centre)."""
    centre = np.asarray(model.predict(X_test), dtype=np.float64).ravel()
    out = []
    for a in alphas:
        q = kth_smallest(cal_scores[None, :], upper_rank(a, len(cal_scores)), axis=1)[0]
        out.append(PredictionSets.from_intervals(centre - q, centre + q))
    return out, centre


def split_conformal(estimator: Any, X: np.ndarray, y: np.ndarray, X_test: np.ndarray, alphas: Sequence[float],
                    rng: np.random.Generator, *, train_fraction: float = 0.5) -> list[PredictionSets]:
    """Split conformal (absolute residual) at each level in ``alphas``, one fit shared by all."""
    model, cal_scores = split_fit(estimator, X, y, rng, train_fraction=train_fraction)
    return split_sets(model, cal_scores, X_test, alphas)[0]
