"""What the conformal commands run: settings, input checks, and the computation (no click, no printing).

* ``conformal-cv``: :class:`CvSettings`, :func:`prepare_cv` (reads the train/test tables, builds the
  models, checks every option against the data) and :func:`execute_cv` (fits the K fold models and
  returns the prediction sets as rows plus a per-method summary).
* ``conformal-sim``: :class:`SimSettings`, :func:`prepare_sim`, :func:`execute_sim` (one
  ``run.cached`` stage per dimension: an interrupted study resumes at the next dimension).
* ``conformal-combine``: :class:`CombineSettings`, :func:`prepare_combine`, :func:`execute_combine`.

Regression rows: ``row, method, lower, upper, length, n_segments, segments[, y, covered]`` where
``segments`` is the JSON list of ``[lower, upper]`` pairs when the set is not a single interval and
``null`` marks an unbounded end. Classification rows: ``row, method, set, size[, y, covered]``.
``row`` is the data row of the test file (1 = the first row after the header).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from paperkit.core import io
from paperkit.core.errors import InputError, UsageError
from paperkit.core.readers import read_numeric
from paperkit.core.resources import check_memory
from paperkit.core.tables import Table, read_table
from paperkit.methods.conformal.baselines import jackknife_plus, split_conformal
from paperkit.methods.conformal.classification import CLASS_METHODS, CrossConformalClassifier
from paperkit.methods.conformal.combiners import (
    DEFAULT_METHODS,
    METHODS,
    check_alpha,
    combine,
    guarantee,
    in_set,
    parse_methods,
)
from paperkit.methods.conformal.models import DEFAULT_MODEL, check_params_at_fit, make_model, parse_params
from paperkit.methods.conformal.regression import CrossConformalRegressor, cross_conformal_sets, fold_pvalues
from paperkit.methods.conformal.sets import PredictionSets
from paperkit.methods.conformal.simulation import SIM_METHODS, simulate_dimension, summarize

TABLE_COMBINERS = ("mean", "e", "u", "eu", "min")
TASKS = ("regression", "classification")


def _identity(x: Any, **_: Any) -> Any:
    return x


# ================================================================================== conformal-cv
@dataclass(frozen=True)
class CvSettings:
    """Every parameter of ``conformal-cv`` with its default (the command's options mirror these)."""

    target: str
    features: tuple[str, ...] | None = None
    task: str = "regression"
    model: str | None = None  # None: the task's default (ridge for regression, logistic for classification)
    model_params: tuple[str, ...] = ()
    n_folds: int = 5
    alpha: float = 0.1
    methods: tuple[str, ...] | None = None
    score: str | None = None
    sigma_model: str = "rf"
    seed: int = 0
    jobs: int = 0


@dataclass
class CvInputs:
    settings: CvSettings
    train: Table
    test: Table
    columns: list[str]
    X: np.ndarray
    X_test: np.ndarray
    has_y: bool
    model: str
    estimator: Any
    sigma: Any
    methods: list[str]


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


def _sklearn_jobs(jobs: int) -> int | None:
    return None if jobs == 1 else (-1 if jobs == 0 else jobs)


def prepare_cv(settings: CvSettings, train: str | os.PathLike | Table, test: str | os.PathLike | Table) -> CvInputs:
    """Read and check everything ``conformal-cv`` needs; nothing is fitted yet."""
    s = settings
    if s.task not in TASKS:
        raise UsageError(f"task = {s.task!r} is unknown; expected regression or classification")
    alpha = check_alpha(s.alpha)
    if s.n_folds < 2:
        raise UsageError(f"n_folds = {s.n_folds} is out of range; expected at least 2")
    if isinstance(train, (str, os.PathLike)) and isinstance(test, (str, os.PathLike)) \
            and io.is_stdio(train) and io.is_stdio(test):
        raise UsageError("--train and --test cannot both be stdin")
    model = s.model or DEFAULT_MODEL[s.task]
    # Options first (exit 2), then the files (exit 3).
    if s.task == "classification":
        methods = parse_methods(list(s.methods) if s.methods else
                                [m for m in CLASS_METHODS if not m.startswith("bonferroni")], allowed=CLASS_METHODS)
    else:
        methods = parse_methods(list(s.methods) if s.methods else list(DEFAULT_METHODS))
        if s.score == "normalized":
            for m, what in (("jackknife+", "jackknife+"), ("split", "split"), ("split-2a", "split")):
                if m in methods:
                    raise UsageError(f"{what} is implemented for the absolute score only; drop it or use "
                                     "--score absolute")
    jobs = _sklearn_jobs(s.jobs)
    estimator = make_model(model, parse_params(s.model_params), task=s.task, seed=s.seed, jobs=jobs)
    sigma = make_model(s.sigma_model, None, seed=s.seed, jobs=jobs) \
        if s.task == "regression" and s.score == "normalized" else None
    train_t = train if isinstance(train, Table) else read_table(train)
    test_t = test if isinstance(test, Table) else read_table(test)
    cols = _features(train_t, test_t, s.target, s.features)
    X = train_t.numeric(cols)
    Xt = test_t.numeric(cols)
    if len(Xt) == 0:
        raise InputError(f"{test_t.source}: no data rows; expected at least one test row")
    if len(X) < s.n_folds:
        raise InputError(f"{train_t.source}: {len(X)} rows cannot be split into {s.n_folds} folds; "
                         "need at least one row per fold")
    if s.task == "regression":
        train_t.numeric([s.target])
        if test_t.has(s.target):
            test_t.numeric([s.target])
    return CvInputs(dataclasses.replace(s, alpha=alpha), train_t, test_t, cols, X, Xt, test_t.has(s.target), model,
                    estimator, sigma, methods)


def execute_cv(inputs: CvInputs, *, progress: Callable[..., Any] | None = None) -> Prediction:
    """Fit the fold models and build every requested method's sets."""
    with check_params_at_fit(inputs.model, parse_params(inputs.settings.model_params)):
        if inputs.settings.task == "classification":
            return _classify(inputs, progress)
        return _regress(inputs, progress)


def _regress(inputs: CvInputs, progress: Callable[..., Any] | None) -> Prediction:
    s, train, test = inputs.settings, inputs.train, inputs.test
    target, X, Xt, methods, estimator = s.target, inputs.X, inputs.X_test, inputs.methods, inputs.estimator
    alpha, n_folds, seed, score = s.alpha, s.n_folds, s.seed, s.score
    y = train.numeric([target])[:, 0]
    yt = test.numeric([target])[:, 0] if inputs.has_y else None
    est = CrossConformalRegressor(estimator, n_folds=n_folds, alpha=alpha, score=score or "absolute",
                                  sigma_estimator=inputs.sigma, random_state=seed).fit(X, y, progress=progress)
    mu, scale = est.fold_predictions(Xt)
    u = est.draw_u(len(Xt))
    cc = [m for m in methods if METHODS[m].kind == "combiner" or m == "cvplus"]
    sets: dict[str, PredictionSets] = cross_conformal_sets(mu, scale, est.fold_scores_, cc, alpha, u) if cc else {}
    if "jackknife+" in methods:
        sets["jackknife+"] = jackknife_plus(estimator, X, y, Xt, alpha, progress=progress)
    splits = [(m, a) for m, a in (("split", alpha), ("split-2a", 2 * alpha)) if m in methods]
    if splits:
        rng = np.random.default_rng(np.random.SeedSequence([int(seed), 1]))
        for (m, _), st in zip(splits, split_conformal(estimator, X, y, Xt, [a for _, a in splits], rng), strict=True):
            sets[m] = st
    rows: list[dict[str, Any]] = []
    summary_methods: dict[str, Any] = {}
    n, K = len(y), n_folds
    for m in methods:
        st = sets[m]
        lengths = st.length
        covered = st.contains(yt) if yt is not None else None
        nseg = st.n_segments
        lo, hi = st.hull()
        for t in range(len(Xt)):
            segs = st.segments(t)
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
    summary = {"task": "regression", "n_train": n, "n_test": len(Xt), "folds": K, "alpha": alpha,
               "model": inputs.model, "score": score or "absolute", "features": inputs.columns,
               "methods": summary_methods}
    return Prediction(rows, summary, p)


def _classify(inputs: CvInputs, progress: Callable[..., Any] | None) -> Prediction:
    s, train, test = inputs.settings, inputs.train, inputs.test
    target, X, Xt, has_y, estimator, methods = s.target, inputs.X, inputs.X_test, inputs.has_y, inputs.estimator, \
        inputs.methods
    n_folds, alpha, seed, score = s.n_folds, s.alpha, s.seed, s.score or "lac"
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


def summary_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The per-method summary as table rows (the command prints them): method, guarantee, coverage, sizes."""
    return [{"method": m, **r} for m, r in summary["methods"].items()]


def summary_columns(summary: dict[str, Any]) -> list[tuple[str, str, str]]:
    """``(key, header, format)`` for :func:`summary_rows`: guarantee next to empirical coverage."""
    head = [("method", "method", ""), ("guarantee", "guarantee", ".3f"), ("coverage", "coverage", ".3f")]
    if summary["task"] == "regression":
        return head + [("mean_length", "mean len", ".4g"), ("median_length", "median len", ".4g"),
                       ("mean_segments", "segments", ".2f")]
    return head + [("mean_size", "mean size", ".3f"), ("median_size", "median", ".1f")]


# ================================================================================= conformal-sim
@dataclass(frozen=True)
class SimSettings:
    """Every parameter of ``conformal-sim`` with its default."""

    n: int = 100
    dims: tuple[int, ...] = (5, 50)
    reps: int = 200
    n_folds: int = 5
    alpha: float = 0.1
    methods: tuple[str, ...] = SIM_METHODS
    test_points: int = 1
    seed: int = 0
    max_memory_gb: float | None = None


@dataclass
class SimInputs:
    settings: SimSettings
    methods: list[str]


@dataclass
class SimResult:
    table: list[dict[str, Any]]   # per (p, method): coverage, lengths, guarantee
    reps: list[dict[str, Any]]    # per (p, repetition, method)
    shortest_median: dict[str, str]


def sim_memory_bytes(n: int, p: int, test_points: int, jackknife: bool) -> float:
    """Largest working set of one repetition, in bytes (Python floats: no overflow for absurd sizes).

    The data and the fold fits hold a few (n + test) x p matrices; jackknife+ keeps the n leave-one-out
    fits, and when p >= n - 1 computes them from n stacked (n - 1) x p designs and their pseudo-inverses.
    """
    n, p, t = float(n), float(p), float(test_points)
    base = 8.0 * (6.0 * (n + t) * p + 4.0 * p * p + 2.0 * t * n)
    if jackknife:
        base += 8.0 * (2.0 * n * p + t * n)
        if p >= n - 1:
            base += 8.0 * 3.0 * n * (n - 1) * p
    return base


def prepare_sim(settings: SimSettings) -> SimInputs:
    """Check the options (sizes against memory too) before a run dir exists."""
    s = settings
    check_alpha(s.alpha)
    methods = parse_methods(list(s.methods), allowed=SIM_METHODS)
    if not s.dims or min(s.dims) < 1:
        raise UsageError(f"--p = {','.join(map(str, s.dims))}: expected positive dimensions")
    if s.n < max(4, 2 * s.n_folds):
        raise UsageError(f"n = {s.n} is too small for {s.n_folds} folds; expected n >= {max(4, 2 * s.n_folds)}")
    need = max(sim_memory_bytes(s.n, p, s.test_points, "jackknife+" in methods) for p in s.dims)
    check_memory(need, f"the simulation with n = {s.n}, p = {max(s.dims)}, {s.test_points} test point(s)",
                 limit_gb=s.max_memory_gb)
    return SimInputs(s, methods)


def execute_sim(inputs: SimInputs, run: Any, *, progress: Callable[..., Any] = _identity) -> SimResult:
    """One ``run.cached`` stage per dimension (``p<p>.json``); the seed of each p comes from (seed, p)."""
    s = inputs.settings
    rows: list[dict[str, Any]] = []
    for p in progress(list(s.dims), desc="dimensions", unit="p"):
        done = run.cached(f"p{p}", lambda p=p: simulate_dimension(
            s.n, p, s.reps, n_folds=s.n_folds, alpha=s.alpha, methods=inputs.methods, seed=s.seed,
            n_test=s.test_points, progress=progress), fmt="json")
        # JSON has no infinity: an unbounded set's length is saved as null
        rows.extend({**r, "length": float("inf") if r["length"] is None else r["length"]} for r in done)
    table = summarize(rows, n=s.n, n_folds=s.n_folds, alpha=s.alpha)
    best = {f"p{p}": min((r for r in table if r["p"] == p), key=lambda r: r["median_length"])["method"]
            for p in s.dims}
    return SimResult(table, rows, best)


# ============================================================================= conformal-combine
@dataclass(frozen=True)
class CombineSettings:
    """Every parameter of ``conformal-combine`` with its default."""

    alpha: float = 0.1
    combiners: tuple[str, ...] = ("mean", "e", "u", "eu")
    seed: int = 0


@dataclass
class CombineInputs:
    settings: CombineSettings
    pvalues: np.ndarray


def read_pvalues(path: str | os.PathLike) -> np.ndarray:
    """A (rows, K) matrix of p-values in (0, 1] from .npy/.npz or a numeric table ('-': stdin, sniffed)."""
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


def _check_combine(settings: CombineSettings) -> None:
    check_alpha(settings.alpha)
    if not settings.combiners:
        raise UsageError("no combiner given; expected some of " + ", ".join(TABLE_COMBINERS))
    for c in settings.combiners:
        if c not in TABLE_COMBINERS:
            raise UsageError(f"unknown combiner '{c}'; expected one of {', '.join(TABLE_COMBINERS)}")


def prepare_combine(settings: CombineSettings, pvalues: str | os.PathLike) -> CombineInputs:
    """Check the options, then read and check the p-values."""
    _check_combine(settings)
    return CombineInputs(settings, read_pvalues(pvalues))


def execute_combine(inputs: CombineInputs) -> list[dict[str, Any]]:
    """One row per input row and combiner: value, pvalue (2 value, K value for min), keep."""
    p, s = inputs.pvalues, inputs.settings
    K = p.shape[1]
    u = np.random.default_rng(s.seed).random(len(p))
    values = {c: combine(p, c, u) for c in s.combiners}
    rows = []
    for i in range(len(p)):
        for c in s.combiners:
            v = float(values[c][i])
            factor, level = (K, s.alpha / K) if c == "min" else (2, s.alpha)
            rows.append({"row": i + 1, "combiner": c, "value": v, "pvalue": min(1.0, factor * v),
                         "keep": bool(in_set(np.array([v]), level)[0])})
    return rows


def combine_rows(p: np.ndarray, combiners: Sequence[str], alpha: float, seed: int) -> list[dict[str, Any]]:
    """:func:`execute_combine` on an array already in memory."""
    s = CombineSettings(alpha=alpha, combiners=tuple(combiners), seed=seed)
    _check_combine(s)
    return execute_combine(CombineInputs(s, np.asarray(p, dtype=np.float64)))
