"""Tables in, prediction sets and a per-method summary out: what ``paperkit conformal-cv`` runs.

Regression rows: ``row, method, lower, upper, length, n_segments, segments[, y, covered]`` where
``segments`` is the JSON list of ``[lower, upper]`` pairs when the set is not a single interval and
``null`` marks an unbounded end. Classification rows: ``row, method, set, size[, y, covered]``.
``row`` is the data row of the test file (1 = the first row after the header).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from paperkit.core.errors import InputError, UsageError
from paperkit.core.tables import Table
from paperkit.methods.conformal.baselines import jackknife_plus, split_conformal
from paperkit.methods.conformal.classification import CLASS_METHODS, CrossConformalClassifier
from paperkit.methods.conformal.combiners import (
    DEFAULT_METHODS,
    METHODS,
    check_alpha,
    guarantee,
    parse_methods,
)
from paperkit.methods.conformal.models import make_model
from paperkit.methods.conformal.regression import CrossConformalRegressor, cross_conformal_sets, fold_pvalues
from paperkit.methods.conformal.sets import PredictionSets


@dataclass
class Prediction:
    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    pvalues: np.ndarray | None  # (T, K) fold p-values at the observed test targets


def _features(train: Table, test: Table, target: str, features: Sequence[str] | None) -> list[str]:
    train.column(target)
    cols = list(features) if features else [c for c in train.columns if c != target]
    if target in cols:
        raise UsageError(f"the target column '{target}' cannot also be a feature")
    if not cols:
        raise InputError(f"{train.source}: no feature columns besides the target '{target}'")
    for c in cols:
        train.column(c)
    missing = [c for c in cols if not test.has(c)]
    if missing:
        raise InputError(f"{test.source}: missing feature column(s) {', '.join(repr(c) for c in missing)} "
                         f"that {train.source} has; expected the same feature columns")
    return cols


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def predict_table(train: Table, test: Table, *, target: str, features: Sequence[str] | None = None,
                  task: str = "regression", model: str = "ridge", model_params: dict[str, Any] | None = None,
                  n_folds: int = 5, alpha: float = 0.1, methods: Sequence[str] | str | None = None,
                  score: str | None = None, sigma_model: str = "rf", seed: int = 0, jobs: int | None = None,
                  progress: Callable[..., Any] | None = None) -> Prediction:
    alpha = check_alpha(alpha)
    if n_folds < 2:
        raise UsageError(f"folds = {n_folds} is out of range; expected at least 2")
    cols = _features(train, test, target, features)
    X = train.numeric(cols)
    Xt = test.numeric(cols)
    if len(Xt) == 0:
        raise InputError(f"{test.source}: no data rows; expected at least one test row")
    has_y = test.has(target)
    estimator = make_model(model, model_params, task=task, seed=seed, jobs=jobs)
    if task == "classification":
        methods = methods or [m for m in CLASS_METHODS if not m.startswith("bonferroni")]
        return _classify(train, test, target, X, Xt, has_y, estimator, n_folds, alpha, methods, score or "lac",
                         seed, progress)
    if task != "regression":
        raise UsageError(f"task = {task!r} is unknown; expected regression or classification")
    y = train.numeric([target])[:, 0]
    yt = test.numeric([target])[:, 0] if has_y else None
    methods = parse_methods(methods or DEFAULT_METHODS)
    if len(y) < n_folds:
        raise InputError(f"{train.source}: {len(y)} rows cannot be split into {n_folds} folds; "
                         "need at least one row per fold")
    sigma = make_model(sigma_model, None, seed=seed, jobs=jobs) if score == "normalized" else None
    est = CrossConformalRegressor(estimator, n_folds=n_folds, alpha=alpha, score=score or "absolute",
                                  sigma_estimator=sigma, random_state=seed).fit(X, y, progress=progress)
    mu, scale = est.fold_predictions(Xt)
    u = est.draw_u(len(Xt))
    cc = [m for m in methods if METHODS[m].kind == "combiner" or m == "cvplus"]
    sets: dict[str, PredictionSets] = cross_conformal_sets(mu, scale, est.fold_scores_, cc, alpha, u) if cc else {}
    if "jackknife+" in methods:
        if score == "normalized":
            raise UsageError("jackknife+ is implemented for the absolute score only; drop it or use --score absolute")
        sets["jackknife+"] = jackknife_plus(estimator, X, y, Xt, alpha, progress=progress)
    splits = [(m, a) for m, a in (("split", alpha), ("split-2a", 2 * alpha)) if m in methods]
    if splits:
        if score == "normalized":
            raise UsageError("split is implemented for the absolute score only; drop it or use --score absolute")
        rng = np.random.default_rng(np.random.SeedSequence([int(seed), 1]))
        for (m, _), s in zip(splits, split_conformal(estimator, X, y, Xt, [a for _, a in splits], rng), strict=True):
            sets[m] = s
    rows: list[dict[str, Any]] = []
    summary_methods: dict[str, Any] = {}
    n, K = len(y), n_folds
    for m in methods:
        s = sets[m]
        lengths = s.length
        covered = s.contains(yt) if yt is not None else None
        nseg = s.n_segments
        lo, hi = s.hull()
        for t in range(len(Xt)):
            segs = s.segments(t)
            row = {"row": t + 1, "method": m, "lower": _finite(lo[t]) if segs else None,
                   "upper": _finite(hi[t]) if segs else None, "length": float(lengths[t]),
                   "n_segments": int(nseg[t]),
                   "segments": json.dumps([[_finite(a), _finite(b)] for a, b in segs]) if len(segs) != 1 else ""}
            if yt is not None:
                row["y"] = float(yt[t])
                row["covered"] = bool(covered[t])
            rows.append(row)
        summary_methods[m] = {
            "label": METHODS[m].label, "guarantee": round(guarantee(m, alpha, n, K), 6),
            "coverage": float(covered.mean()) if covered is not None else None,
            "mean_length": float(lengths.mean()), "median_length": float(np.median(lengths)),
            "mean_segments": float(nseg.mean()), "infinite_sets": int(np.sum(~np.isfinite(lengths))),
        }
    p = fold_pvalues(mu, scale, est.fold_scores_, yt) if yt is not None else None
    summary = {"task": "regression", "n_train": n, "n_test": len(Xt), "folds": K, "alpha": alpha, "model": model,
               "score": score or "absolute", "features": cols, "methods": summary_methods}
    return Prediction(rows, summary, p)


def _classify(train: Table, test: Table, target: str, X: np.ndarray, Xt: np.ndarray, has_y: bool, estimator: Any,
              n_folds: int, alpha: float, methods: Sequence[str] | str, score: str, seed: int,
              progress: Callable[..., Any] | None) -> Prediction:
    methods = parse_methods(methods, allowed=CLASS_METHODS)
    y = train.column(target)
    if len(y) < n_folds:
        raise InputError(f"{train.source}: {len(y)} rows cannot be split into {n_folds} folds; "
                         "need at least one row per fold")
    if y.dtype == object:
        labels = np.array([str(v) for v in y])
    else:
        if not np.isfinite(y).all():
            raise InputError(f"{train.source}: column '{target}' has missing values; expected a label in every row")
        labels = y.astype(np.int64) if np.all(y == np.round(y)) else y
    est = CrossConformalClassifier(estimator, n_folds=n_folds, alpha=alpha, score=score,
                                   random_state=seed).fit(X, labels, progress=progress)
    sets = est.predict_sets(Xt, methods)
    yt = None
    if has_y:
        col = test.column(target)
        if labels.dtype.kind in "UO":
            yt = np.array([str(v) for v in col])
        else:
            yt = test.numeric([target])[:, 0]
            yt = yt.astype(labels.dtype) if np.all(yt == np.round(yt)) else yt
    classes = est.classes_

    def plain(c: Any) -> Any:
        return c.item() if isinstance(c, np.generic) else c

    rows, summary_methods = [], {}
    for m in methods:
        s = sets[m]
        covered = None
        if yt is not None:
            idx = np.searchsorted(classes, yt)
            known = (idx < len(classes)) & (classes[np.minimum(idx, len(classes) - 1)] == yt)
            covered = np.zeros(len(yt), dtype=bool)
            covered[known] = s[np.flatnonzero(known), idx[known]]
        for t in range(len(Xt)):
            row = {"row": t + 1, "method": m, "set": json.dumps([plain(c) for c in classes[s[t]]]),
                   "size": int(s[t].sum())}
            if yt is not None:
                row["y"] = plain(yt[t])
                row["covered"] = bool(covered[t])
            rows.append(row)
        sizes = s.sum(axis=1)
        summary_methods[m] = {
            "label": METHODS[m].label, "guarantee": round(guarantee(m, alpha, len(y), n_folds), 6),
            "coverage": float(covered.mean()) if covered is not None else None,
            "mean_size": float(sizes.mean()), "median_size": float(np.median(sizes)),
            "empty_sets": int(np.sum(sizes == 0)),
        }
    summary = {"task": "classification", "n_train": len(y), "n_test": len(Xt), "folds": n_folds, "alpha": alpha,
               "score": score, "classes": [plain(c) for c in classes], "methods": summary_methods}
    return Prediction(rows, summary, None)


def format_summary(summary: dict[str, Any]) -> str:
    """The per-method table printed on stderr: guarantee next to empirical coverage, size of the sets."""
    reg = summary["task"] == "regression"
    head = f"{'method':<14}{'guarantee':>10}{'coverage':>10}" + (
        f"{'mean len':>12}{'median len':>12}{'segments':>10}" if reg else f"{'mean size':>11}{'median':>8}")
    lines = [head]
    for m, r in summary["methods"].items():
        cov = "-" if r["coverage"] is None else f"{r['coverage']:.3f}"
        line = f"{m:<14}{r['guarantee']:>10.3f}{cov:>10}"
        if reg:
            line += f"{r['mean_length']:>12.4g}{r['median_length']:>12.4g}{r['mean_segments']:>10.2f}"
        else:
            line += f"{r['mean_size']:>11.3f}{r['median_size']:>8.1f}"
        lines.append(line)
    return "\n".join(lines)
