"""Cross-conformal regression with the paper's combiners (Gasparin & Ramdas 2025, Sections 2-4).

Split the n training rows at random into K folds S_1..S_K (their random order is part of the method:
the e/eu combiners read the folds in that order). For each fold fit ``mu_k`` on the other folds and
score the fold, ``R_i = |Y_i - mu_k(X_i)|`` (or ``|Y_i - mu_k(X_i)| / sigma_k(X_i)`` with a second,
scale model fitted on the same training folds). For a test point ``x`` and candidate ``y`` the fold
p-value is ``p_k(y) = (1 + #{i in S_k : R_i >= |y - mu_k(x)| / sigma_k(x)}) / (m_k + 1)`` and each method
keeps the ``y`` whose combined value exceeds its level; the sets are computed exactly
(:mod:`~paperkit.methods.conformal.kernels`).

* :func:`cross_conformal_sets` — the functional core: fold predictions and scores in, sets out.
* :class:`CrossConformalRegressor` — a scikit-learn estimator around any regressor or pipeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, clone

from paperkit.core.errors import InputError, UsageError
from paperkit.datasets.splits import kfold_indices
from paperkit.methods.conformal.baselines import cv_plus
from paperkit.methods.conformal.combiners import (
    COMBINER_CODE,
    METHODS,
    check_alpha,
    method_level,
    parse_methods,
)
from paperkit.methods.conformal.sets import PredictionSets

SCORES = ("absolute", "normalized")


@dataclass(frozen=True)
class FoldScores:
    """Calibration scores, fold after fold (each fold sorted), and where each fold starts."""

    scores: np.ndarray  # (n,)
    fold_start: np.ndarray  # (K + 1,)

    @property
    def n(self) -> int:
        return len(self.scores)

    @property
    def n_folds(self) -> int:
        return len(self.fold_start) - 1

    @property
    def fold_sizes(self) -> np.ndarray:
        return np.diff(self.fold_start)

    @classmethod
    def from_folds(cls, per_fold: Sequence[np.ndarray]) -> FoldScores:
        sizes = [len(s) for s in per_fold]
        start = np.zeros(len(per_fold) + 1, dtype=np.int64)
        start[1:] = np.cumsum(sizes)
        return cls(np.concatenate([np.sort(np.asarray(s, dtype=np.float64)) for s in per_fold]), start)

    def fold(self, k: int) -> np.ndarray:
        return self.scores[self.fold_start[k]:self.fold_start[k + 1]]


def cross_conformal_sets(mu: np.ndarray, scale: np.ndarray | None, fold_scores: FoldScores,
                         methods: Sequence[str], alpha: float, u: np.ndarray | None = None,
                         *, levels: dict[str, float] | None = None) -> dict[str, PredictionSets]:
    """Exact sets of every combiner method (and ``cvplus``) for the test points.

    mu, scale: (T, K) fold-model predictions and score scales at the test points (scale None = 1).
    u: (T,) the U ~ Unif(0, 1) of each test point, needed by the u/eu methods.
    levels: optional explicit threshold per combiner method (default: the method's own level).
    """
    from paperkit.methods.conformal.kernels import run_sweep

    alpha = check_alpha(alpha)
    mu = np.asarray(mu, dtype=np.float64)
    if mu.ndim != 2 or mu.shape[1] != fold_scores.n_folds:
        raise UsageError(f"fold predictions have shape {mu.shape}; expected (test points, {fold_scores.n_folds})")
    scale = np.ones_like(mu) if scale is None else np.asarray(scale, dtype=np.float64)
    n, K = fold_scores.n, fold_scores.n_folds
    out: dict[str, PredictionSets] = {}
    comb = [m for m in methods if METHODS[m].kind == "combiner"]
    if comb:
        if any(METHODS[m].randomized for m in comb):
            if u is None:
                raise UsageError("u/eu methods need one U ~ Unif(0, 1) per test point")
            u = np.asarray(u, dtype=np.float64).ravel()
            if len(u) != len(mu):
                raise UsageError(f"{len(u)} U values for {len(mu)} test points")
        else:
            u = np.zeros(len(mu))
        codes = np.array([COMBINER_CODE[METHODS[m].combiner] for m in comb], dtype=np.int64)
        lv = np.array([(levels or {}).get(m, method_level(m, alpha, n, K)) for m in comb])
        offsets, lowers, uppers = run_sweep(mu, scale, fold_scores.scores, fold_scores.fold_start, u, codes, lv)
        for j, m in enumerate(comb):
            out[m] = PredictionSets(offsets[j], lowers[j], uppers[j])
    if "cvplus" in methods:
        out["cvplus"] = cv_plus(mu, scale, fold_scores.scores, fold_scores.fold_start, alpha)
    unknown = [m for m in methods if m not in out]
    if unknown:
        raise UsageError(f"method(s) {', '.join(unknown)} need refits; use CrossConformalRegressor or the baselines")
    return {m: out[m] for m in methods}


def fold_pvalues(mu: np.ndarray, scale: np.ndarray | None, fold_scores: FoldScores, y: np.ndarray) -> np.ndarray:
    """Fold p-values (T, K) at candidates ``y`` (T,), e.g. the observed test targets."""
    mu = np.asarray(mu, dtype=np.float64)
    scale = np.ones_like(mu) if scale is None else np.asarray(scale, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).ravel()
    out = np.empty_like(mu)
    for k in range(fold_scores.n_folds):
        # Same predicate as the sweep: y is counted by score i when mu - s R_i <= y <= mu + s R_i.
        r = fold_scores.fold(k)
        lo = mu[:, k:k + 1] - scale[:, k:k + 1] * r[None, :]
        hi = mu[:, k:k + 1] + scale[:, k:k + 1] * r[None, :]
        c = ((lo <= y[:, None]) & (y[:, None] <= hi)).sum(axis=1)
        out[:, k] = (1 + c) / (len(r) + 1)
    return out


def _as_xy(X: Any, y: Any | None = None, *, what: str = "X") -> tuple[np.ndarray, np.ndarray | None]:
    X = np.asarray(X)
    if X.ndim == 1:
        X = X.reshape(-1, 1)
    if X.ndim != 2:
        raise InputError(f"{what} has shape {X.shape}; expected a 2-D array (rows x features)")
    if X.dtype.kind in "fiub" and not np.isfinite(X.astype(np.float64)).all():
        raise InputError(f"{what} contains NaN or infinite values; expected finite numbers")
    if y is None:
        return X, None
    y = np.asarray(y, dtype=np.float64).ravel()
    if len(y) != len(X):
        raise InputError(f"{what} has {len(X)} rows but y has {len(y)}; expected the same")
    if not np.isfinite(y).all():
        raise InputError("y contains NaN or infinite values; expected finite numbers")
    return X, y


class CrossConformalRegressor(RegressorMixin, BaseEstimator):
    """Cross-conformal prediction sets for any scikit-learn regressor (or pipeline).

    Parameters
    ----------
    estimator : regressor, default LinearRegression()
    n_folds : int, default 5 — K, the number of folds.
    method : str, default "e-mod" — the set returned by :meth:`predict_set` / :meth:`predict_interval`;
        any of mod, e-mod, u-mod, eu-mod, cross, e-cross, u-cross, eu-cross, bonferroni, bonferroni-2a, cvplus.
    alpha : float, default 0.1 — the paper's alpha; mod-cross style sets guarantee 1 - 2 alpha.
    score : "absolute" | "normalized" — ``|y - mu|`` or ``|y - mu| / sigma`` with ``sigma_estimator``.
    sigma_estimator : regressor fitted on each training part to predict ``|y - mu_k(x)|``
        (default a 50-tree random forest); used only with ``score="normalized"``.
    beta : float, default 0.01 — sigma is floored at ``beta`` times the mean training residual.
    random_state : int or None — seeds the fold split and the U draws.
    """

    def __init__(self, estimator: Any = None, n_folds: int = 5, method: str = "e-mod", alpha: float = 0.1,
                 score: str = "absolute", sigma_estimator: Any = None, beta: float = 0.01,
                 random_state: int | None = None):
        self.estimator = estimator
        self.n_folds = n_folds
        self.method = method
        self.alpha = alpha
        self.score = score
        self.sigma_estimator = sigma_estimator
        self.beta = beta
        self.random_state = random_state

    # -------------------------------------------------------------------------------------- fit
    def _base(self) -> Any:
        if self.estimator is None:
            from sklearn.linear_model import LinearRegression

            return LinearRegression()
        return self.estimator

    def _sigma_base(self) -> Any:
        if self.sigma_estimator is None:
            from sklearn.ensemble import RandomForestRegressor

            return RandomForestRegressor(n_estimators=50, min_samples_leaf=5, random_state=0)
        return self.sigma_estimator

    def fit(self, X: Any, y: Any, *, progress: Any = None) -> CrossConformalRegressor:
        if self.score not in SCORES:
            raise UsageError(f"score = {self.score!r} is unknown; expected one of {', '.join(SCORES)}")
        parse_methods([self.method], allowed=(*(n for n, m in METHODS.items() if m.kind == "combiner"), "cvplus"))
        check_alpha(self.alpha)
        X, y = _as_xy(X, y)
        K = int(self.n_folds)
        seq = np.random.SeedSequence(self.random_state)
        fold_seed, u_seed = seq.spawn(2)
        folds = kfold_indices(len(y), K, np.random.default_rng(fold_seed))
        self.folds_ = folds
        self.estimators_: list[Any] = []
        self.sigma_estimators_: list[Any] = []
        self.sigma_floor_ = np.ones(K)
        per_fold = []
        ks = range(K) if progress is None else progress(range(K), desc="fold fits", unit="fold")
        for k in ks:
            test = folds[k]
            train = np.concatenate([folds[j] for j in range(K) if j != k])
            model = clone(self._base()).fit(X[train], y[train])
            r = np.abs(y[test] - np.asarray(model.predict(X[test]), dtype=np.float64).ravel())
            if self.score == "normalized":
                r_train = np.abs(y[train] - np.asarray(model.predict(X[train]), dtype=np.float64).ravel())
                sigma = clone(self._sigma_base()).fit(X[train], r_train)
                mean_r = float(r_train.mean())
                self.sigma_floor_[k] = self.beta * mean_r if mean_r > 0 else 1.0
                self.sigma_estimators_.append(sigma)
                r = r / self._sigma(k, X[test])
            self.estimators_.append(model)
            per_fold.append(r)
        self.fold_scores_ = FoldScores.from_folds(per_fold)
        self.n_train_ = len(y)
        self._u_rng = np.random.default_rng(u_seed)
        return self

    def _sigma(self, k: int, X: np.ndarray) -> np.ndarray:
        g = np.asarray(self.sigma_estimators_[k].predict(X), dtype=np.float64).ravel()
        return np.maximum(g, 0.0) + self.sigma_floor_[k]

    def _check_fitted(self) -> None:
        if not hasattr(self, "fold_scores_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("CrossConformalRegressor is not fitted; call fit(X, y) first")

    # ---------------------------------------------------------------------------------- predict
    def fold_predictions(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """``mu`` (T, K) and ``scale`` (T, K) of the fold models at the test points."""
        self._check_fitted()
        X, _ = _as_xy(X, what="X_test")
        K = len(self.estimators_)
        mu = np.empty((len(X), K))
        scale = np.ones((len(X), K))
        for k, model in enumerate(self.estimators_):
            mu[:, k] = np.asarray(model.predict(X), dtype=np.float64).ravel()
            if self.score == "normalized":
                scale[:, k] = self._sigma(k, X)
        return mu, scale

    def predict(self, X: Any) -> np.ndarray:
        """Point predictions: the mean of the K fold models."""
        return self.fold_predictions(X)[0].mean(axis=1)

    def draw_u(self, n: int) -> np.ndarray:
        """n independent U ~ Unif(0, 1) (one per test point) from the estimator's seeded stream."""
        self._check_fitted()
        return self._u_rng.random(n)

    def predict_sets(self, X: Any, methods: Sequence[str] | str | None = None, alpha: float | None = None,
                     u: np.ndarray | None = None) -> dict[str, PredictionSets]:
        """Exact sets (unions of intervals) of several methods at once, sharing fits and U draws."""
        mu, scale = self.fold_predictions(X)
        methods = parse_methods(methods if methods is not None else [self.method],
                                allowed=(*(n for n, m in METHODS.items() if m.kind == "combiner"), "cvplus"))
        if u is None and any(METHODS[m].randomized for m in methods):
            u = self.draw_u(len(mu))
        return cross_conformal_sets(mu, scale, self.fold_scores_, methods, self.alpha if alpha is None else alpha, u)

    def predict_set(self, X: Any, alpha: float | None = None, u: np.ndarray | None = None) -> PredictionSets:
        return self.predict_sets(X, [self.method], alpha, u)[self.method]

    def predict_interval(self, X: Any, alpha: float | None = None, u: np.ndarray | None = None) -> np.ndarray:
        """(T, 2) [lower, upper]: the smallest interval holding each set (NaN for an empty set)."""
        lo, hi = self.predict_set(X, alpha, u).hull()
        return np.column_stack([lo, hi])

    def fold_pvalues(self, X: Any, y: Any) -> np.ndarray:
        """Fold p-values (T, K), folds in their random order, at candidate targets ``y``."""
        mu, scale = self.fold_predictions(X)
        return fold_pvalues(mu, scale, self.fold_scores_, y)
