"""What the conformal commands run: settings, input checks, and the computation (no click, no printing).

* ``conformal-cv``: :class:`CvSettings`, :func:`prepare_cv` (reads the train/test tables, builds the
  models, checks every option against the data) and :func:`execute_cv` (fits the K fold models and
  returns the prediction sets as rows plus a per-method summary).
* ``conformal-sim``: :class:`SimSettings`, :func:`prepare_sim`, :func:`execute_sim` (one
  ``run.cached`` stage per dimension: an interrupted study resumes at the next dimension).
* ``conformal-combine``: :class:`CombineSettings`, :func:`prepare_combine`, :func:`execute_combine`.

* ``conformal-predict``: :class:`PredictSettings`, :func:`prepare_predict`, :func:`execute_predict`
  (a model file written by ``conformal-cv --save-model``, :func:`save_model` / :func:`load_model`).

Regression rows: ``row, method, y_pred, lower, upper, length, n_segments, segments[, y, covered]`` where
``segments`` is the JSON list of ``[lower, upper]`` pairs when the set is not a single interval (null
otherwise) and ``null`` marks an unbounded end. Classification rows: ``row, method, y_pred, set, size[, y,
covered]``. ``row`` is the 0-based index of the test row (0 = the first data row after the header), as
everywhere in paperkit. ``y_pred`` is the point prediction: the model fitted on every training row (CV+:
the mean of the K fold models; split: the split model, the centre of its interval).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import clone

from paperkit.core import io
from paperkit.core.errors import InputError, UsageError
from paperkit.core.readers import read_numeric
from paperkit.core.resources import MEMORY_FLAG, check_memory
from paperkit.core.tables import Table, read_table
from paperkit.methods.conformal.baselines import jackknife_plus, split_fit, split_sets
from paperkit.methods.conformal.classification import CLASS_METHODS, CrossConformalClassifier, check_labels
from paperkit.methods.conformal.combiners import (
    DEFAULT_METHODS,
    METHODS,
    alpha_for_coverage,
    check_alpha,
    combine,
    guarantee,
    in_set,
    parse_methods,
)
from paperkit.methods.conformal.encoding import FeatureEncoder, fit_encoder
from paperkit.methods.conformal.full import full_conformal, linear_spec
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
    coverage: float | None = None  # when set, each method's alpha makes its guarantee equal this
    methods: tuple[str, ...] | None = None
    score: str | None = None
    sigma_model: str = "rf"
    categorical: str | None = None  # None/"none", "auto" or feature names to one-hot
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
    encoder: FeatureEncoder | None = None
    unseen: dict[str, int] = dataclasses.field(default_factory=dict)


@dataclass
class Prediction:
    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    pvalues: np.ndarray | None  # (T, K) fold p-values at the observed test targets
    fitted: FittedCv | None = None


@dataclass
class FittedCv:
    """Everything ``conformal-predict`` needs to apply a ``conformal-cv`` fit to new rows (saved with joblib)."""

    task: str
    target: str
    encoder: FeatureEncoder
    model: str
    score: str
    n_folds: int
    alpha: float
    coverage: float | None
    methods: list[str]
    estimator: Any             # the fitted CrossConformalRegressor / CrossConformalClassifier
    full_model: Any            # the model fitted on every training row: y_pred
    u_state: dict[str, Any]    # the U stream's state right after the fit (u-/eu- methods)
    n_train: int
    split: tuple[Any, np.ndarray] | None = None  # split conformal's model and calibration scores
    train_xy: tuple[np.ndarray, np.ndarray] | None = None  # for jackknife+ (n refits at predict time)
    format_version: int = 1

    @property
    def features(self) -> list[str]:
        return self.encoder.names


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


def method_alphas(methods: Sequence[str], alpha: float, coverage: float | None, n: int, n_folds: int
                  ) -> dict[str, float]:
    """Each method's alpha: ``alpha`` itself, or (with ``coverage``) the alpha whose guarantee is ``coverage``."""
    if coverage is None:
        return {m: alpha for m in methods}
    return {m: alpha_for_coverage(m, coverage, n, n_folds) for m in methods}


def prepare_cv(settings: CvSettings, train: str | os.PathLike | Table, test: str | os.PathLike | Table) -> CvInputs:
    """Read and check everything ``conformal-cv`` needs; nothing is fitted yet."""
    s = settings
    if s.task not in TASKS:
        raise UsageError(f"task = {s.task!r} is unknown; expected regression or classification")
    alpha = check_alpha(s.alpha)
    if s.coverage is not None and not 0.5 <= s.coverage < 1:
        raise UsageError(f"coverage = {s.coverage!r} is out of range; expected a value in [0.5, 1)")
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
            for m, what in (("jackknife+", "jackknife+"), ("split", "split"), ("split-2a", "split"),
                            ("full", "full conformal")):
                if m in methods:
                    raise UsageError(f"{what} is implemented for the absolute score only; drop it or use "
                                     "--score absolute")
    jobs = _sklearn_jobs(s.jobs)
    estimator = make_model(model, parse_params(s.model_params), task=s.task, seed=s.seed, jobs=jobs)
    if "full" in methods:
        try:
            linear_spec(estimator)
        except UsageError:
            if list(s.methods or []) != ["all"]:
                raise
            methods.remove("full")  # "all" means every method the model allows
    sigma = make_model(s.sigma_model, None, seed=s.seed, jobs=jobs) \
        if s.task == "regression" and s.score == "normalized" else None
    train_t = train if isinstance(train, Table) else read_table(train)
    test_t = test if isinstance(test, Table) else read_table(test)
    cols = _features(train_t, test_t, s.target, s.features)
    encoder = fit_encoder(train_t, cols, s.categorical)
    X, _ = encoder.transform(train_t)
    Xt, unseen = encoder.transform(test_t)
    if len(Xt) == 0:
        raise InputError(f"{test_t.source}: no data rows; expected at least one test row")
    if len(X) < s.n_folds:
        raise InputError(f"{train_t.source}: {len(X)} rows cannot be split into {s.n_folds} folds; "
                         "need at least one row per fold")
    if s.task == "regression":
        train_t.numeric([s.target])
        if test_t.has(s.target):
            test_t.numeric([s.target])
    else:  # labels that no fold's classifier could be fitted on: refused here, not as a fit's crash
        try:
            check_labels(_train_labels(train_t, s.target, s.n_folds), s.n_folds, s.seed)
        except InputError as e:
            raise InputError(f"{train_t.source}: column '{s.target}': {e}") from None
    if s.coverage is not None:  # unreachable coverage is a usage error before anything is fitted
        method_alphas(methods, alpha, s.coverage, len(X), s.n_folds)
    return CvInputs(dataclasses.replace(s, alpha=alpha), train_t, test_t, cols, X, Xt, test_t.has(s.target), model,
                    estimator, sigma, methods, encoder, unseen)


def execute_cv(inputs: CvInputs, *, progress: Callable[..., Any] | None = None, keep_train: bool = False
               ) -> Prediction:
    """Fit the fold models and build every requested method's sets.

    The returned :class:`Prediction` carries the fit (``fitted``) for ``--save-model``; ``keep_train``
    keeps the training arrays in it (jackknife+ refits at predict time).
    """
    with check_params_at_fit(inputs.model, parse_params(inputs.settings.model_params)):
        fitted = _fit(inputs, progress, keep_train or "jackknife+" in inputs.methods or "full" in inputs.methods)
        yt = _test_targets(inputs.test, inputs.settings.target, fitted) if inputs.has_y else None
        return predict_cv(fitted, inputs.X_test, yt, progress=progress, unseen=inputs.unseen)


def _fit(inputs: CvInputs, progress: Callable[..., Any] | None, keep_train: bool) -> FittedCv:
    s, train = inputs.settings, inputs.train
    X, estimator = inputs.X, inputs.estimator
    common = dict(task=s.task, target=s.target, encoder=inputs.encoder, model=inputs.model, n_folds=s.n_folds,
                  alpha=s.alpha, coverage=s.coverage, methods=list(inputs.methods))
    if s.task == "classification":
        labels = _train_labels(train, s.target, s.n_folds)
        est = CrossConformalClassifier(estimator, n_folds=s.n_folds, alpha=s.alpha, score=s.score or "lac",
                                       random_state=s.seed).fit(X, labels, progress=progress)
        u_state = copy.deepcopy(est._u_rng.bit_generator.state)
        full = clone(estimator).fit(X, labels)
        return FittedCv(**common, score=s.score or "lac", estimator=est, full_model=full, u_state=u_state,
                        n_train=len(labels))
    y = train.numeric([s.target])[:, 0]
    est = CrossConformalRegressor(estimator, n_folds=s.n_folds, alpha=s.alpha, score=s.score or "absolute",
                                  sigma_estimator=inputs.sigma, random_state=s.seed).fit(X, y, progress=progress)
    u_state = copy.deepcopy(est._u_rng.bit_generator.state)
    full = clone(estimator).fit(X, y)
    split = None
    if "split" in inputs.methods or "split-2a" in inputs.methods:
        split = split_fit(estimator, X, y, np.random.default_rng(np.random.SeedSequence([int(s.seed), 1])))
    return FittedCv(**common, score=s.score or "absolute", estimator=est, full_model=full, u_state=u_state,
                    n_train=len(y), split=split, train_xy=(X, y) if keep_train else None)


def _train_labels(train: Table, target: str, n_folds: int) -> np.ndarray:
    y = train.column(target)
    if len(y) < n_folds:
        raise InputError(f"{train.source}: {len(y)} rows cannot be split into {n_folds} folds; "
                         "need at least one row per fold")
    if y.dtype == object:
        return np.array([str(v) for v in y])
    if not np.isfinite(y).all():
        raise InputError(f"{train.source}: column '{target}' has missing values; expected a label in every row")
    return y.astype(np.int64) if np.all(y == np.round(y)) else y


def _test_targets(test: Table, target: str, fitted: FittedCv) -> np.ndarray:
    if fitted.task == "regression":
        return test.numeric([target])[:, 0]
    classes = fitted.estimator.classes_
    col = test.column(target)
    if classes.dtype.kind in "UO":
        return np.array([str(v) for v in col])
    yt = test.numeric([target])[:, 0]
    return yt.astype(classes.dtype) if np.all(yt == np.round(yt)) else yt


def _u_draws(fitted: FittedCv, n: int) -> np.ndarray:
    """The U ~ Unif(0, 1) of each test row, from the stream as it was right after the fit: the same test
    rows get the same U in conformal-cv and in conformal-predict with the saved model."""
    rng = np.random.Generator(np.random.PCG64())
    rng.bit_generator.state = copy.deepcopy(fitted.u_state)
    return rng.random(n)


def predict_cv(fitted: FittedCv, Xt: np.ndarray, yt: np.ndarray | None, *, methods: Sequence[str] | None = None,
               alpha: float | None = None, coverage: float | None = None,
               progress: Callable[..., Any] | None = None, unseen: dict[str, int] | None = None) -> Prediction:
    """Sets, point predictions and the summary of a fit at test rows ``Xt`` (targets ``yt`` optional).

    ``methods``/``alpha``/``coverage`` default to the fit's own; with ``alpha`` given, ``coverage`` is
    not inherited.
    """
    methods = list(methods) if methods is not None else list(fitted.methods)
    if alpha is None and coverage is None:
        alpha, coverage = fitted.alpha, fitted.coverage
    alpha = check_alpha(alpha if alpha is not None else fitted.alpha)
    alphas = method_alphas(methods, alpha, coverage, fitted.n_train, fitted.n_folds)
    if fitted.task == "classification":
        pred = _classify(fitted, Xt, yt, methods, alphas, alpha, coverage)
    else:
        pred = _regress(fitted, Xt, yt, methods, alphas, alpha, coverage, progress)
    if unseen:
        pred.summary["unseen_categories"] = {c: n for c, n in unseen.items()}
    pred.fitted = fitted
    return pred


def _by_alpha(methods: Sequence[str], alphas: dict[str, float]) -> dict[float, list[str]]:
    groups: dict[float, list[str]] = {}
    for m in methods:
        groups.setdefault(alphas[m], []).append(m)
    return groups


def _summary_head(fitted: FittedCv, n_test: int, alpha: float, coverage: float | None) -> dict[str, Any]:
    return {"task": fitted.task, "n_train": fitted.n_train, "n_test": n_test, "folds": fitted.n_folds,
            "alpha": alpha, "coverage_target": coverage, "model": fitted.model, "score": fitted.score,
            "features": fitted.features}


def _regress(fitted: FittedCv, Xt: np.ndarray, yt: np.ndarray | None, methods: list[str],
             alphas: dict[str, float], alpha: float, coverage: float | None,
             progress: Callable[..., Any] | None) -> Prediction:
    est = fitted.estimator
    n, K = fitted.n_train, fitted.n_folds
    mu, scale = est.fold_predictions(Xt)
    u = _u_draws(fitted, len(Xt))
    sets: dict[str, PredictionSets] = {}
    for a, group in _by_alpha([m for m in methods if METHODS[m].kind == "combiner" or m == "cvplus"],
                              alphas).items():
        sets.update(cross_conformal_sets(mu, scale, est.fold_scores_, group, a, u))
    full_pred = np.asarray(fitted.full_model.predict(Xt), dtype=np.float64).ravel()
    point = {m: full_pred for m in methods}
    if "cvplus" in methods:
        point["cvplus"] = mu.mean(axis=1)
    if "jackknife+" in methods:
        if fitted.train_xy is None:
            raise UsageError("jackknife+ needs the training rows, which this model file does not hold; "
                             "refit with conformal-cv --methods ...,jackknife+ --save-model")
        X, y = fitted.train_xy
        sets["jackknife+"] = jackknife_plus(est._base(), X, y, Xt, alphas["jackknife+"], progress=progress)
    if "full" in methods:
        if fitted.train_xy is None:
            raise UsageError("full conformal needs the training rows, which this model file does not hold; "
                             "refit with conformal-cv --methods ...,full --save-model")
        X, y = fitted.train_xy
        sets["full"] = full_conformal(est._base(), X, y, Xt, alphas["full"])
    splits = [(m, alphas[m] * (2 if m == "split-2a" else 1)) for m in ("split", "split-2a") if m in methods]
    if splits:
        if fitted.split is None:
            raise UsageError("split conformal was not fitted in this model file; refit with conformal-cv "
                             "--methods ...,split --save-model")
        model, cal = fitted.split
        split_st, centre = split_sets(model, cal, Xt, [a for _, a in splits])
        for (m, _), st in zip(splits, split_st, strict=True):
            sets[m] = st
            point[m] = centre
    rows: list[dict[str, Any]] = []
    summary_methods: dict[str, Any] = {}
    for m in methods:
        st = sets[m]
        lengths = st.length
        covered = st.contains(yt) if yt is not None else None
        nseg = st.n_segments
        lo, hi = st.hull()
        for t in range(len(Xt)):
            segs = st.segments(t)
            row = {"row": t, "method": m, "y_pred": float(point[m][t]),
                   "lower": _finite(lo[t]) if segs else None,
                   "upper": _finite(hi[t]) if segs else None, "length": float(lengths[t]),
                   "n_segments": int(nseg[t]),
                   "segments": json.dumps([[_finite(a), _finite(b)] for a, b in segs]) if len(segs) != 1 else None}
            if yt is not None:
                row["y"] = float(yt[t])
                row["covered"] = bool(covered[t])
            rows.append(row)
        summary_methods[m] = {
            "label": METHODS[m].label, "alpha": alphas[m], "guarantee": round(guarantee(m, alphas[m], n, K), 6),
            "coverage": float(covered.mean()) if covered is not None else None,
            "mean_length": float(lengths.mean()), "median_length": float(np.median(lengths)),
            "mean_segments": float(nseg.mean()), "infinite_sets": int(np.sum(~np.isfinite(lengths))),
        }
    p = fold_pvalues(mu, scale, est.fold_scores_, yt) if yt is not None else None
    summary = {**_summary_head(fitted, len(Xt), alpha, coverage), "methods": summary_methods}
    return Prediction(rows, summary, p)


def _classify(fitted: FittedCv, Xt: np.ndarray, yt: np.ndarray | None, methods: list[str],
              alphas: dict[str, float], alpha: float, coverage: float | None) -> Prediction:
    est = fitted.estimator
    n, K = fitted.n_train, fitted.n_folds
    u = _u_draws(fitted, len(Xt))
    sets: dict[str, np.ndarray] = {}
    for a, group in _by_alpha(methods, alphas).items():
        sets.update(est.predict_sets(Xt, group, a, u))
    classes = est.classes_
    y_pred = np.asarray(fitted.full_model.predict(Xt))

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
            row = {"row": t, "method": m, "y_pred": plain(y_pred[t]),
                   "set": json.dumps([plain(c) for c in classes[s[t]]]), "size": int(s[t].sum())}
            if yt is not None:
                row["y"] = plain(yt[t])
                row["covered"] = bool(covered[t])
            rows.append(row)
        sizes = s.sum(axis=1)
        summary_methods[m] = {
            "label": METHODS[m].label, "alpha": alphas[m], "guarantee": round(guarantee(m, alphas[m], n, K), 6),
            "coverage": float(covered.mean()) if covered is not None else None,
            "mean_size": float(sizes.mean()), "median_size": float(np.median(sizes)),
            "empty_sets": int(np.sum(sizes == 0)),
        }
    summary = {**_summary_head(fitted, len(Xt), alpha, coverage), "classes": [plain(c) for c in classes],
               "methods": summary_methods}
    return Prediction(rows, summary, None)


# ============================================================================= conformal-predict
MODEL_KIND = "paperkit conformal-cv model"


def save_model(path: str | os.PathLike, fitted: FittedCv) -> None:
    """Write the fit with joblib (atomically); ``conformal-predict --model PATH`` reads it back."""
    import joblib

    with io.atomic_write(path, "wb") as f:
        joblib.dump({"kind": MODEL_KIND, "fitted": fitted}, f)


def load_model(path: str | os.PathLike) -> FittedCv:
    """Read a model file written by ``conformal-cv --save-model`` (a joblib pickle: only load your own)."""
    import pickle

    import joblib

    name = io.display_name(path)
    io.require_file(path)
    try:
        obj = joblib.load(path)
    except (pickle.UnpicklingError, EOFError, ValueError, KeyError, IndexError, AttributeError,
            ModuleNotFoundError, TypeError) as e:
        raise InputError(f"{name}: not a conformal-cv model file ({type(e).__name__}: {e}); expected a file "
                         "written by conformal-cv --save-model") from None
    if not isinstance(obj, dict) or obj.get("kind") != MODEL_KIND or not isinstance(obj.get("fitted"), FittedCv):
        raise InputError(f"{name}: not a conformal-cv model file; expected a file written by conformal-cv "
                         "--save-model")
    return obj["fitted"]


@dataclass(frozen=True)
class PredictSettings:
    """Every parameter of ``conformal-predict`` with its default (None: the saved model's own)."""

    alpha: float | None = None
    coverage: float | None = None
    methods: tuple[str, ...] | None = None


@dataclass
class PredictInputs:
    settings: PredictSettings
    fitted: FittedCv
    test: Table
    X_test: np.ndarray
    y_test: np.ndarray | None
    methods: list[str]
    unseen: dict[str, int]


def prepare_predict(settings: PredictSettings, model: str | os.PathLike, test: str | os.PathLike | Table
                    ) -> PredictInputs:
    """Check the options, load the model file and encode the test rows as at fit time."""
    s = settings
    if s.alpha is not None:
        check_alpha(s.alpha)
    if s.alpha is not None and s.coverage is not None:
        raise UsageError("--alpha and --coverage are exclusive; give one")
    if s.coverage is not None and not 0.5 <= s.coverage < 1:
        raise UsageError(f"coverage = {s.coverage!r} is out of range; expected a value in [0.5, 1)")
    fitted = load_model(model)
    allowed = CLASS_METHODS if fitted.task == "classification" else tuple(METHODS)
    methods = parse_methods(list(s.methods), allowed=allowed) if s.methods else list(fitted.methods)
    if fitted.score == "normalized":
        bad = [m for m in methods if m in ("jackknife+", "split", "split-2a", "full")]
        if bad:
            raise UsageError(f"{', '.join(bad)} is implemented for the absolute score only")
    test_t = test if isinstance(test, Table) else read_table(test)
    Xt, unseen = fitted.encoder.transform(test_t)
    if len(Xt) == 0:
        raise InputError(f"{test_t.source}: no data rows; expected at least one test row")
    yt = _test_targets(test_t, fitted.target, fitted) if test_t.has(fitted.target) else None
    if s.coverage is not None:
        method_alphas(methods, 0.1, s.coverage, fitted.n_train, fitted.n_folds)
    return PredictInputs(s, fitted, test_t, Xt, yt, methods, unseen)


def execute_predict(inputs: PredictInputs, *, progress: Callable[..., Any] | None = None) -> Prediction:
    s = inputs.settings
    return predict_cv(inputs.fitted, inputs.X_test, inputs.y_test, methods=inputs.methods, alpha=s.alpha,
                      coverage=s.coverage, progress=progress, unseen=inputs.unseen)


def summary_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The per-method summary as table rows (the command prints them): method, guarantee, coverage, sizes."""
    return [{"method": m, **r} for m, r in summary["methods"].items()]


def summary_columns(summary: dict[str, Any]) -> list[tuple[str, str, str]]:
    """``(key, header, format)`` for :func:`summary_rows`: guarantee next to empirical coverage."""
    head = [("method", "method", ""), ("alpha", "alpha", ".4g"), ("guarantee", "guarantee", ".3f"),
            ("coverage", "coverage", ".3f")]
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
                 limit_gb=s.max_memory_gb, flag=MEMORY_FLAG)
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
        raise InputError(f"{name}: {int(bad.sum())} value(s) outside (0, 1], e.g. row {r}, column {c} (0-based) = "
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
            rows.append({"row": i, "combiner": c, "value": v, "pvalue": min(1.0, factor * v),
                         "keep": bool(in_set(np.array([v]), level)[0])})
    return rows


def combine_rows(p: np.ndarray, combiners: Sequence[str], alpha: float, seed: int) -> list[dict[str, Any]]:
    """:func:`execute_combine` on an array already in memory."""
    s = CombineSettings(alpha=alpha, combiners=tuple(combiners), seed=seed)
    _check_combine(s)
    return execute_combine(CombineInputs(s, np.asarray(p, dtype=np.float64)))
