"""Cross-conformal classification: the paper's combiners over a finite label set.

For a test point ``x`` and each class ``c`` the fold p-value is
``p_k(c) = (1 + #{i in S_k : s_i >= s_k(x, c)}) / (m_k + 1)`` with the fold model's score:

* ``lac``: ``1 - phat_c(x)`` (least ambiguous set-valued classifier, Sadinle et al. 2019);
* ``aps``: the probability mass of the classes ranked at or above ``c`` (adaptive prediction sets,
  Romano et al. 2020, non-randomised).

The set keeps every class whose combined value exceeds the method's level (same combiners and
guarantees as in regression; no breakpoints are needed since the candidates are the classes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone

from paperkit.core.errors import InputError, UsageError
from paperkit.datasets.splits import kfold_indices
from paperkit.methods.conformal.combiners import (
    METHODS,
    check_alpha,
    combine,
    in_set,
    method_level,
    parse_methods,
    vovk_from_pvalues,
)
from paperkit.methods.conformal.regression import FoldScores

CLASS_SCORES = ("lac", "aps")
CLASS_METHODS = tuple(n for n, m in METHODS.items() if m.kind == "combiner")


def class_scores(proba: np.ndarray, score: str) -> np.ndarray:
    """Non-conformity score of every class (T, C) from predicted probabilities (T, C)."""
    proba = np.asarray(proba, dtype=np.float64)
    if score == "lac":
        return 1.0 - proba
    if score == "aps":
        # mass of classes strictly more probable than c, plus c's own mass
        higher = (proba[:, None, :] > proba[:, :, None]) * proba[:, None, :]
        return higher.sum(axis=2) + proba
    raise UsageError(f"score = {score!r} is unknown; expected one of {', '.join(CLASS_SCORES)}")


def class_fold_pvalues(test_scores: np.ndarray, fold_scores: FoldScores) -> np.ndarray:
    """Fold p-values (T, C, K) from per-fold test scores (T, C, K) and the sorted calibration scores."""
    T, C, K = test_scores.shape
    out = np.empty((T, C, K))
    for k in range(K):
        r = fold_scores.fold(k)
        ge = len(r) - np.searchsorted(r, test_scores[:, :, k], side="left")
        out[:, :, k] = (1 + ge) / (len(r) + 1)
    return out


def class_sets(pvalues: np.ndarray, fold_sizes: np.ndarray, methods: Sequence[str], alpha: float,
               u: np.ndarray | None) -> dict[str, np.ndarray]:
    """Boolean sets (T, C) per method from fold p-values (T, C, K)."""
    alpha = check_alpha(alpha)
    n, K = int(np.sum(fold_sizes)), pvalues.shape[2]
    out = {}
    for m in methods:
        meth = METHODS[m]
        if meth.kind != "combiner":
            raise UsageError(f"method '{m}' is not available for classification; expected one of "
                             + ", ".join(CLASS_METHODS))
        if meth.combiner == "vovk":
            value = vovk_from_pvalues(pvalues, fold_sizes)
        else:
            value = combine(pvalues, meth.combiner, None if u is None else np.asarray(u)[:, None])
        out[m] = in_set(value, method_level(m, alpha, n, K))
    return out


def check_labels(y: np.ndarray, n_folds: int, random_state: Any) -> list[np.ndarray]:
    """The folds of ``fit`` for these labels, after refusing labels a classifier cannot be fitted on: one
    class, continuous numbers, or a fold whose training part holds a single class (a rare class whose rows
    all fall in one fold). InputError naming the problem, before anything is fitted."""
    y = np.asarray(y).ravel()
    if y.dtype.kind == "f":
        shown = ", ".join(f"{v:g}" for v in y[y != np.round(y)][:3])
        raise InputError(f"the labels are continuous numbers ({shown}, ...); classification needs integer or "
                         "text labels (or use the regression task)")
    classes, counts = np.unique(y, return_counts=True)
    if len(classes) < 2:
        raise InputError(f"every label is {classes[0] if len(classes) else 'missing'}; classification needs at "
                         "least two classes")
    fold_seed, _ = np.random.SeedSequence(random_state).spawn(2)
    folds = kfold_indices(len(y), int(n_folds), np.random.default_rng(fold_seed))
    for k in range(len(folds)):
        train = np.concatenate([f for j, f in enumerate(folds) if j != k])
        left = np.unique(y[train])
        if len(left) < 2:
            rare = ", ".join(f"{c} ({n} row{'s' if n > 1 else ''})" for c, n in zip(classes, counts, strict=True)
                             if c not in left)
            raise InputError(f"fold {k + 1} of {len(folds)} would train on class {left[0]} alone: every row of "
                             f"{rare} falls in that fold; give more rows of it or use fewer folds")
    return folds


class CrossConformalClassifier(ClassifierMixin, BaseEstimator):
    """Cross-conformal prediction sets over classes for any scikit-learn classifier with predict_proba."""

    def __init__(self, estimator: Any = None, n_folds: int = 5, method: str = "e-mod", alpha: float = 0.1,
                 score: str = "lac", random_state: int | None = None):
        self.estimator = estimator
        self.n_folds = n_folds
        self.method = method
        self.alpha = alpha
        self.score = score
        self.random_state = random_state

    def _base(self) -> Any:
        if self.estimator is None:
            from sklearn.linear_model import LogisticRegression

            return LogisticRegression(max_iter=1000)
        return self.estimator

    def _proba(self, model: Any, X: np.ndarray) -> np.ndarray:
        """Probabilities over all training classes (a class absent from a fold's training part gets 0)."""
        p = np.asarray(model.predict_proba(X), dtype=np.float64)
        out = np.zeros((len(X), len(self.classes_)))
        out[:, np.searchsorted(self.classes_, model.classes_)] = p
        return out

    def fit(self, X: Any, y: Any, *, progress: Any = None) -> CrossConformalClassifier:
        if self.score not in CLASS_SCORES:
            raise UsageError(f"score = {self.score!r} is unknown; expected one of {', '.join(CLASS_SCORES)}")
        parse_methods([self.method], allowed=CLASS_METHODS)
        check_alpha(self.alpha)
        X = np.asarray(X)
        if X.ndim != 2:
            raise InputError(f"X has shape {X.shape}; expected a 2-D array (rows x features)")
        if X.dtype.kind in "fiub" and not np.isfinite(X.astype(np.float64)).all():
            raise InputError("X contains NaN or infinite values; expected finite numbers")
        y = np.asarray(y).ravel()
        if len(y) != len(X):
            raise InputError(f"X has {len(X)} rows but y has {len(y)}; expected the same")
        K = int(self.n_folds)
        folds = check_labels(y, K, self.random_state)
        self.classes_ = np.unique(y)
        _, u_seed = np.random.SeedSequence(self.random_state).spawn(2)
        self.folds_ = folds
        self.estimators_ = []
        per_fold = []
        ks = range(K) if progress is None else progress(range(K), desc="fold fits", unit="fold")
        for k in ks:
            train = np.concatenate([folds[j] for j in range(K) if j != k])
            model = clone(self._base()).fit(X[train], y[train])
            self.estimators_.append(model)
            s = class_scores(self._proba(model, X[folds[k]]), self.score)
            per_fold.append(s[np.arange(len(folds[k])), np.searchsorted(self.classes_, y[folds[k]])])
        self.fold_scores_ = FoldScores.from_folds(per_fold)
        self._u_rng = np.random.default_rng(u_seed)
        return self

    def fold_pvalues(self, X: Any) -> np.ndarray:
        """Fold p-values (T, C, K) of every class at the test points."""
        if not hasattr(self, "fold_scores_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("CrossConformalClassifier is not fitted; call fit(X, y) first")
        X = np.asarray(X)
        s = np.stack([class_scores(self._proba(m, X), self.score) for m in self.estimators_], axis=2)
        return class_fold_pvalues(s, self.fold_scores_)

    def predict(self, X: Any) -> np.ndarray:
        proba = np.mean([self._proba(m, np.asarray(X)) for m in self.estimators_], axis=0)
        return self.classes_[np.argmax(proba, axis=1)]

    def predict_sets(self, X: Any, methods: Sequence[str] | str | None = None, alpha: float | None = None,
                     u: np.ndarray | None = None) -> dict[str, np.ndarray]:
        p = self.fold_pvalues(X)
        methods = parse_methods(methods if methods is not None else [self.method], allowed=CLASS_METHODS)
        if u is None and any(METHODS[m].randomized for m in methods):
            u = self._u_rng.random(len(p))
        return class_sets(p, self.fold_scores_.fold_sizes, methods, self.alpha if alpha is None else alpha, u)

    def predict_set(self, X: Any, alpha: float | None = None, u: np.ndarray | None = None) -> np.ndarray:
        """Boolean (T, C): class ``classes_[c]`` is in the set of test point t."""
        return self.predict_sets(X, [self.method], alpha, u)[self.method]
