"""Orchestration of the mvml commands, and the repeated random splits they score.

Repeated random splits: TMvML, its penalty ablations and the baselines on the same data and mapping.

Each split s draws its own train/test partition from ``spawn_seeds(seed, n_splits)[s]``, so split s is the
same whichever other splits are run (and a resumed run continues with identical splits).

:func:`select_params` is the grid search of the paper's protocol done without touching test data: it
holds out part of the *training* data, scores every grid point there and returns the best.

The commands: ``mvml-fit`` (:class:`FitSettings`, :func:`prepare_fit`, :func:`execute_fit`; each --cv
split is a stage of the run dir) and ``mvml-make`` (:class:`MakeSettings`, :func:`prepare_make`,
:func:`execute_make`). ``prepare_*`` reads and checks every input before a run dir exists.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from paperkit.core.errors import InputError, UsageError
from paperkit.core.progress import progress as default_progress
from paperkit.core.resources import MEMORY_FLAG, check_memory
from paperkit.core.seeding import spawn_seeds
from paperkit.core.validate import check_range
from paperkit.datasets import train_test_indices
from paperkit.methods.mvml.baselines import BASELINES, run_baseline
from paperkit.methods.mvml.estimator import SCORES_ARE, TMvML
from paperkit.methods.mvml.metrics import LOWER_IS_BETTER, METRICS, evaluate

# "tmvml" is the configured model; "tnn" / "ridge" are the same model with the tensor nuclear norm
# (λ_tnn = λ/δ, LTR's slope at σ = 0, unless given) or without a tensor penalty (plain per-view ridge).
ABLATIONS = ("tnn", "ridge")
METHODS = ("tmvml",) + ABLATIONS + BASELINES
# What each method's scores are (metrics.json): only br-logistic and mlknn give probabilities.
SCORE_KINDS = {
    "tmvml": SCORES_ARE, "tnn": "least-squares scores, as tmvml (tensor nuclear norm penalty); not probabilities",
    "ridge": "least-squares scores, as tmvml without a tensor penalty; not probabilities",
    "ridge-view": "least-squares scores (mean of per-view ridge fits to the 0/1 labels); not probabilities",
    "ridge-concat": "least-squares scores (one ridge fit on the concatenated views); not probabilities",
    "br-logistic": "probabilities (one logistic regression per label)",
    "mlknn": "posterior probabilities (ML-kNN)",
}


@contextmanager
def each_warning_once(logger: logging.Logger | None = None) -> Iterator[None]:
    """Within the block, a message of the estimator's logger (or ``logger``) repeated word for word — such
    as "label column(s) 1 are constant", which every fit of every split and method would log — is
    emitted only the first time."""
    target = logger or logging.getLogger(TMvML.__module__)
    seen: set[str] = set()

    def once(record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        if msg in seen:
            return False
        seen.add(msg)
        return True

    target.addFilter(once)
    try:
        yield
    finally:
        target.removeFilter(once)


def check_methods(methods: list[str]) -> list[str]:
    bad = [m for m in methods if m not in METHODS]
    if bad:
        raise UsageError(f"unknown method(s) {', '.join(bad)}; expected some of {', '.join(METHODS)}")
    return list(dict.fromkeys(["tmvml", *methods]))


def check_setup(model: TMvML, methods: list[str], lam_tnn: float | None = None) -> None:
    """Check the hyperparameters of every model ``methods`` will fit, before anything is fitted or written."""
    if lam_tnn is not None:
        if not np.isfinite(lam_tnn):
            raise UsageError(f"lam_tnn = {float(lam_tnn)!r} is not finite; expected a number > 0")
        check_range("lam_tnn", lam_tnn, 0.0, low_open=True)
    for method in methods:
        if method in ABLATIONS:
            variant(model, method, lam_tnn)  # constructing the variant validates it


def variant(model: TMvML, method: str, lam_tnn: float | None = None) -> TMvML:
    if method == "tnn":
        lam = lam_tnn if lam_tnn is not None else (model.lam / model.delta if model.penalty == "ltr" else model.lam)
        return replace(model, penalty="tnn", lam=lam)
    if method == "ridge":
        return replace(model, penalty="none")
    return replace(model)


def fit_and_score(model: TMvML, methods: list[str], train: list[np.ndarray], Ytr: np.ndarray,
                  test: list[np.ndarray], *, lam_tnn: float | None = None, seed: int = 0,
                  callback: Callable | None = None) -> tuple[TMvML, dict[str, np.ndarray]]:
    """Fit the configured model and every requested method; scores on ``test`` per method.

    Native thread pools are limited to ``model.n_jobs`` for the baselines too (same footing)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=int(model.n_jobs) if model.n_jobs else None):
        return _fit_and_score(model, methods, train, Ytr, test, lam_tnn=lam_tnn, seed=seed, callback=callback)


def _fit_and_score(model: TMvML, methods: list[str], train: list[np.ndarray], Ytr: np.ndarray,
                   test: list[np.ndarray], *, lam_tnn: float | None, seed: int, callback: Callable | None
                   ) -> tuple[TMvML, dict[str, np.ndarray]]:
    fitted = replace(model).fit(train, Ytr, callback=callback)
    scores = {"tmvml": fitted.decision_function(test)}
    mapped_tr = mapped_te = None
    for method in methods:
        if method == "tmvml":
            continue
        if method in ABLATIONS:
            scores[method] = variant(model, method, lam_tnn).fit(train, Ytr).decision_function(test)
            continue
        if mapped_tr is None:
            mapped_tr = fitted.view_map_.transform(train)
            mapped_te = fitted.view_map_.transform(test)
        scores[method] = run_baseline(method, mapped_tr, Ytr, mapped_te, seed=seed)
    return fitted, scores


def run_split(model: TMvML, views: list[np.ndarray], Y: np.ndarray, split_seed: int, *, methods: list[str],
              test_fraction: float = 0.3, lam_tnn: float | None = None, select: Selection | None = None,
              selected: dict[str, Any] | None = None) -> dict[str, dict[str, float]]:
    """Metrics of every method on one random split. With ``select`` the hyperparameters are first chosen by
    inner cross-validation of the split's *training* part (nested; the test part is never seen) and the
    record of that choice is put into ``selected``."""
    rng = np.random.default_rng(int(split_seed))
    tr, te = train_test_indices(len(Y), test_fraction, rng)
    m = replace(model, seed=int(split_seed) % (2**31))
    if select is not None:
        record = select.run(m, [X[tr] for X in views], Y[tr], seed=int(split_seed))
        m = replace(m, **record["chosen"])
        if selected is not None:
            selected.update(record)
    _, scores = fit_and_score(m, methods, [X[tr] for X in views], Y[tr], [X[te] for X in views],
                              lam_tnn=lam_tnn, seed=int(split_seed) % (2**31))
    return {name: evaluate(Y[te], F, model.threshold) for name, F in scores.items()}


def run_splits(model: TMvML, views: list[np.ndarray], Y: np.ndarray, *, n_splits: int, seed: int,
               methods: list[str], test_fraction: float = 0.3, lam_tnn: float | None = None) -> list[dict]:
    """Metrics per split (list over splits of {method: {metric: value}})."""
    if n_splits < 1:
        raise UsageError(f"number of splits = {n_splits} is out of range; expected at least 1")
    return [run_split(model, views, Y, int(split_seed), methods=methods, test_fraction=test_fraction,
                      lam_tnn=lam_tnn) for split_seed in spawn_seeds(seed, n_splits)]


def summarize_splits(results: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, dict[str, float]]]:
    """{method: {metric: {"mean", "std"}}} over splits (population std)."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for method in results[0]:
        out[method] = {}
        for metric in results[0][method]:
            vals = np.array([r[method][metric] for r in results], dtype=float)
            out[method][metric] = {"mean": float(vals.mean()), "std": float(vals.std())}
    return out


def select_params(model: TMvML, views: list[np.ndarray], Y: np.ndarray, grid: dict[str, Sequence[float]], *,
                  val_fraction: float = 0.3, seed: int = 0, metric: str = "average_precision"
                  ) -> tuple[dict[str, float], list[dict[str, float]]]:
    """Best grid point for ``model`` by an inner validation split of the training data it is given.

    Pass training data only: ``val_fraction`` of it is held out (drawn from ``seed``), ``model`` with each
    combination of ``grid`` (field name → values, e.g. ``{"lam": [...], "delta": [...]}``) is fitted on the
    rest and scored by ``metric`` on the held-out part. Returns the best combination (the first in grid
    order on ties) and one row per grid point (the values and the validation score).
    """
    _check_grid(grid, metric)
    tr, va = train_test_indices(len(Y), val_fraction, np.random.default_rng(int(seed)))
    train, val = [X[tr] for X in views], [X[va] for X in views]
    sign = -1.0 if metric in LOWER_IS_BETTER else 1.0
    rows: list[dict[str, float]] = []
    best: tuple[float, dict[str, float]] | None = None
    for values in itertools.product(*grid.values()):
        point = dict(zip(grid, values, strict=True))
        fitted = replace(model, **point).fit(train, Y[tr])
        score = evaluate(Y[va], fitted.decision_function(val), model.threshold)[metric]
        rows.append({**point, metric: score})
        if best is None or sign * score > sign * best[0]:
            best = (score, point)
    return best[1], rows  # type: ignore[index]


# The default grid of mvml-fit --select (λ, δ); --grid-m / --grid-gamma add the width and the ridge weight.
SELECT_GRID: dict[str, tuple[float, ...]] = {"lam": (0.1, 1.0, 10.0), "delta": (1.0, 10.0)}
SELECT_FOLDS = 3


def _check_grid(grid: dict[str, Sequence[float]], metric: str) -> None:
    names = {f.name for f in fields(TMvML)}
    bad = [k for k in grid if k not in names]
    if bad or not grid:
        raise UsageError(f"grid names {', '.join(bad) or 'nothing'}; expected some of the TMvML parameters")
    empty = [k for k, v in grid.items() if len(v) == 0]
    if empty:
        raise UsageError(f"grid has no values for {', '.join(empty)}; expected at least one each")
    if metric not in METRICS:
        raise UsageError(f"metric = {metric!r} is unknown; expected one of {', '.join(METRICS)}")


def inner_folds(n: int, folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (train, validation) row indices of the inner cross-validation: scikit-learn's KFold, shuffled
    with ``seed``."""
    from sklearn.model_selection import KFold

    if folds < 2:
        raise UsageError(f"inner folds = {folds}; expected at least 2")
    if n < 2 * folds:
        raise UsageError(f"{n} training samples are too few for {folds} inner folds; expected at least {2 * folds}")
    return list(KFold(n_splits=int(folds), shuffle=True, random_state=int(seed) % (2**32)).split(np.arange(n)))


def select_cv(model: TMvML, views: list[np.ndarray], Y: np.ndarray, grid: dict[str, Sequence[float]], *,
              folds: int = SELECT_FOLDS, seed: int = 0, metric: str = "average_precision"
              ) -> tuple[dict[str, float], list[dict[str, Any]]]:
    """Hyperparameter selection by inner K-fold cross-validation of the training data it is given.

    Every combination of ``grid`` (TMvML field → values, tried in ``itertools.product`` order) is fitted
    on K − 1 folds and scored by ``metric`` on the held-out fold (:func:`inner_folds`, the same folds for
    every point); the best mean wins (the lowest for loss metrics; the first in grid order on ties).
    Returns the chosen values and one row per grid point: the values, ``scores`` per fold, ``mean``, ``std``.
    """
    _check_grid(grid, metric)
    splits = inner_folds(len(Y), folds, seed)
    sign = -1.0 if metric in LOWER_IS_BETTER else 1.0
    rows: list[dict[str, Any]] = []
    best: tuple[float, dict[str, float]] | None = None
    for values in itertools.product(*grid.values()):
        point = {k: (int(v) if k == "m" else float(v)) for k, v in zip(grid, values, strict=True)}
        candidate = replace(model, **point)
        scores = []
        for tr, va in splits:
            fitted = replace(candidate).fit([X[tr] for X in views], Y[tr])
            scores.append(float(evaluate(Y[va], fitted.decision_function([X[va] for X in views]),
                                         model.threshold)[metric]))
        mean = float(np.mean(scores))
        rows.append({**point, "scores": scores, "mean": mean, "std": float(np.std(scores))})
        if best is None or sign * mean > sign * best[0]:
            best = (mean, point)
    return best[1], rows  # type: ignore[index]


@dataclass(frozen=True)
class Selection:
    """What mvml-fit --select searches: the grid, the inner folds and the metric."""

    grid: dict[str, tuple[float, ...]]
    folds: int = SELECT_FOLDS
    metric: str = "average_precision"

    def run(self, model: TMvML, views: list[np.ndarray], Y: np.ndarray, seed: int) -> dict[str, Any]:
        """JSON-ready record: chosen values, the inner-CV scores of every grid point, the settings."""
        chosen, rows = select_cv(model, views, Y, self.grid, folds=self.folds, seed=seed, metric=self.metric)
        return {"chosen": chosen, "metric": self.metric, "folds": self.folds, "seed": int(seed),
                "grid": {k: list(v) for k, v in self.grid.items()}, "inner_cv": rows}


# ---------------------------------------------------------------------------------------- mvml-fit
TABLE_METRICS = ("average_precision", "ranking_loss", "one_error", "coverage", "hamming_loss", "micro_f1", "macro_f1")
DATASET_NAMES = ("digits-mvml", "synthetic", "planted")
# The fields of FitSettings that are TMvML parameters (n_jobs comes from --jobs).
MODEL_FIELDS = ("map", "m", "anchors", "whiten", "intercept", "penalty", "lam", "delta", "gamma", "prox",
                "reweight_passes", "init", "mu0", "rho", "mu_max", "max_iter", "tol", "threshold", "solver", "seed")


@dataclass(frozen=True)
class FitSettings:
    """Every default of mvml-fit; the TMvML parameters equal the estimator's own defaults (a test checks)."""

    dataset: str | None = None
    cv: int = 0
    test_fraction: float = 0.3
    methods: tuple[str, ...] = ("tmvml",)
    map: str = "rbf"
    m: int = 64
    anchors: str = "joint"
    whiten: bool = False
    intercept: bool = True
    penalty: str = "ltr"
    lam: float = 1.0
    delta: float = 10.0
    gamma: float = 1e-5
    lam_tnn: float | None = None
    prox: str = "exact"
    reweight_passes: int = 2
    init: str = "ridge"
    mu0: float = 1e-3
    rho: float = 1.2
    mu_max: float = 1e8
    max_iter: int = 200
    tol: float = 1e-6
    threshold: float = 0.5
    solver: str = "numba"
    calibrate: bool = False
    select: bool = False
    select_folds: int = SELECT_FOLDS
    select_metric: str = "average_precision"
    grid_lam: tuple[float, ...] = SELECT_GRID["lam"]
    grid_delta: tuple[float, ...] = SELECT_GRID["delta"]
    grid_m: tuple[int, ...] | None = None
    grid_gamma: tuple[float, ...] | None = None
    seed: int = 0
    jobs: int = 0

    def model(self) -> TMvML:
        """The configured (unfitted) estimator; UsageError naming a bad hyperparameter."""
        return TMvML(**{k: getattr(self, k) for k in MODEL_FIELDS}, n_jobs=self.jobs)

    def selection(self) -> Selection | None:
        """The --select search (None without --select): λ (and δ for the LTR penalty) from their grids,
        m and γ when their grids are given; the other parameters stay as configured."""
        if not self.select:
            return None
        grid: dict[str, tuple[float, ...]] = {}
        if self.penalty != "none":
            grid["lam"] = tuple(self.grid_lam)
        if self.penalty == "ltr":
            grid["delta"] = tuple(self.grid_delta)
        if self.grid_m:
            grid["m"] = tuple(int(x) for x in self.grid_m)
        if self.grid_gamma:
            grid["gamma"] = tuple(self.grid_gamma)
        if not grid:
            raise UsageError("--select with --penalty none has nothing to choose; give --grid-m or --grid-gamma")
        sel = Selection(grid, int(self.select_folds), self.select_metric)
        _check_grid(sel.grid, sel.metric)
        for values in itertools.product(*grid.values()):  # every grid point must be a valid model
            replace(self.model(), **dict(zip(grid, values, strict=True)))
        return sel


@dataclass(frozen=True)
class FitInputs:
    settings: FitSettings
    model: TMvML
    methods: list[str]
    X: list[np.ndarray]
    Y: np.ndarray
    Xte: list[np.ndarray] | None
    Yte: np.ndarray | None
    files: list[str]
    label_names: list[str] | None = None  # --label-names, the labels file's header, or the dataset's
    selection: Selection | None = None  # --select


@dataclass(frozen=True)
class FitResult:
    """``tables``: (title, {method: {metric: value or {"mean", "std"}}}) for the human report."""

    summary: dict[str, Any]
    report: dict[str, Any]
    tables: list[tuple[str, dict[str, dict[str, Any]]]]


def _one_stdin(*groups: Sequence[str] | str | None) -> None:
    paths = [p for g in groups if g for p in ([g] if isinstance(g, str) else g)]
    if sum(1 for p in paths if p == "-") > 1:
        raise UsageError("'-' (stdin) is given for more than one input; stdin can feed only one")


def prepare_fit(settings: FitSettings, *, views: Sequence[str] | None = None, labels: str | None = None,
                test_views: Sequence[str] | None = None, test_labels: str | None = None,
                label_names: str | None = None) -> FitInputs:
    """Check the settings and read every input; everything a fit could reject fails here.

    Label names come from ``label_names`` (a text file), else the header of a CSV/TSV/JSONL labels file,
    else the built-in dataset's names; without any, labels are known by their 0-based column index."""
    from paperkit.methods.mvml import data as datasets
    from paperkit.methods.mvml.estimator import check_labels, check_views
    from paperkit.methods.mvml.files import (
        check_label_names,
        header_names,
        read_label_names,
        read_labels,
        read_views,
    )
    from paperkit.methods.mvml.views import check_fit_size

    s = settings
    if s.dataset is None and not (views and labels):
        raise UsageError("give --views and --labels, or --dataset")
    if s.dataset is not None and (views or labels):
        raise UsageError("--dataset and --views/--labels are mutually exclusive")
    if test_labels and not test_views:
        raise UsageError("--test-labels needs --test-views")
    if label_names == "-":
        raise UsageError("--label-names '-': give a file (stdin is for one data input)")
    _one_stdin(views, labels, test_views, test_labels)
    method_list = check_methods(list(s.methods))
    model = s.model()
    check_setup(model, method_list, s.lam_tnn)
    selection = s.selection()
    files: list[str] = []
    names: list[str] | None = None
    if s.dataset is not None:
        d = datasets.load(s.dataset, np.random.default_rng(s.seed))
        X, Y = d.views, d.Y
        names = list(d.label_names)
    else:
        Y = check_labels(read_labels(labels), labels)
        X = check_views(read_views(views), list(views), n_rows=Y.shape[0])
        files += [*views, labels]
        header = header_names(labels)
        if header is not None:
            names = check_label_names(header, Y.shape[1], f"{labels} (header)")
    if label_names:
        names = check_label_names(read_label_names(label_names), Y.shape[1], label_names)
        files.append(label_names)
    Xte = Yte = None
    if test_views:
        tpaths = list(test_views)
        Xte = check_views(read_views(tpaths), tpaths)
        if len(Xte) != len(X):
            raise InputError(f"--test-views has {len(Xte)} views; the training data has {len(X)}")
        for v, (train_view, test_view) in enumerate(zip(X, Xte, strict=True)):
            if train_view.shape[1] != test_view.shape[1]:
                raise InputError(f"{tpaths[v]}: {test_view.shape[1]} columns; training view {v} (0-based) has "
                                 f"{train_view.shape[1]}")
        files += tpaths
        if test_labels:
            Yte = check_labels(read_labels(test_labels), test_labels)
            check_views(Xte, tpaths, n_rows=Yte.shape[0])
            if Yte.shape[1] != Y.shape[1]:
                raise InputError(f"{test_labels}: {Yte.shape[1]} labels; the training labels have {Y.shape[1]}")
            files.append(test_labels)
    # the smallest training set is a --cv split's training part
    n_fit = len(Y)
    if s.cv:
        n_fit = len(train_test_indices(len(Y), s.test_fraction, np.random.default_rng(0))[0])
    if selection is not None:
        inner = len(inner_folds(n_fit, selection.folds, 0)[0][0])  # the smallest fit is an inner fold's
        for m in selection.grid.get("m", (model.m,)):
            check_fit_size(model.map, int(m), [v.shape[1] for v in X], inner)
    else:
        check_fit_size(model.map, int(model.m), [v.shape[1] for v in X], n_fit)
    return FitInputs(s, model, method_list, X, Y, Xte, Yte, files, names, selection)


def execute_fit(inputs: FitInputs, run: Any, *, progress: Callable[..., Any] = default_progress) -> FitResult:
    """Score the --cv splits (one stage each), fit the model on all training data, and write model.npz,
    scores.npy, trace.csv, convergence.png, splits.csv and metrics.json into the run dir."""
    with each_warning_once():  # one line per distinct warning, not one per fit
        return _execute_fit(inputs, run, progress)


def _execute_fit(inputs: FitInputs, run: Any, progress: Callable[..., Any]) -> FitResult:
    from paperkit.core import io, tables
    from paperkit.methods.mvml import metrics
    from paperkit.methods.mvml.plots import convergence_figure

    s, model, X, Y, Xte, Yte = inputs.settings, inputs.model, inputs.X, inputs.Y, inputs.Xte, inputs.Yte
    selection = inputs.selection
    report: dict[str, Any] = {"definitions": metrics.DEFINITIONS, "methods": inputs.methods,
                              "n_train": int(len(Y)), "n_labels": int(Y.shape[1]), "n_views": len(X),
                              "label_names": inputs.label_names,
                              "scores": {m: SCORE_KINDS[m] for m in inputs.methods}}
    shown: list[tuple[str, dict]] = []
    if s.cv:
        results, chosen_per_split = [], []
        with progress(total=s.cv, desc="splits") as bar:
            for i, split_seed in enumerate(spawn_seeds(s.seed, s.cv)):
                def compute(split_seed: int = int(split_seed)) -> dict:
                    selected: dict[str, Any] = {}
                    metrics_ = run_split(model, X, Y, split_seed, methods=inputs.methods,
                                         test_fraction=s.test_fraction, lam_tnn=s.lam_tnn, select=selection,
                                         selected=selected)
                    return {"metrics": metrics_, "selected": selected} if selection is not None else metrics_

                done = run.cached(f"split{i}", compute, fmt="json")
                if selection is not None:
                    chosen_per_split.append(done["selected"])
                    done = done["metrics"]
                results.append(done)
                bar.update(1)
        summ = summarize_splits(results)
        report["cv"] = {"splits": s.cv, "test_fraction": s.test_fraction, "summary": summ}
        if selection is not None:
            # nested: each split chose its own values on its training part only
            report["cv"]["selected"] = [{"split": i, "chosen": r["chosen"],
                                         "inner_cv_best": max(r["inner_cv"], key=lambda row: row["mean"]
                                                              if selection.metric not in LOWER_IS_BETTER
                                                              else -row["mean"])["mean"]}
                                        for i, r in enumerate(chosen_per_split)]
        rows = [{"split": i, "method": meth, **vals} for i, r in enumerate(results) for meth, vals in r.items()]
        tables.write_table(run.file("splits.csv"), rows)
        shown.append((f"{s.cv} random splits (test share {s.test_fraction}), mean ± std:", summ))

    if selection is not None:
        # the values of the saved model: chosen by inner cross-validation of all the training data
        record = run.cached("select", lambda: selection.run(model, X, Y, seed=s.seed), fmt="json")
        report["select"] = record
        model = replace(model, **record["chosen"])
    # the model on all training data (the one saved), scored on the test data when given
    with progress(total=model.max_iter, desc="ADMM") as bar:
        def on_iter(state: Any) -> None:
            bar.n = state.iteration
            bar.refresh()

        fitted, scores = fit_and_score(model, inputs.methods if Yte is not None else ["tmvml"], X, Y,
                                       Xte if Xte is not None else X, lam_tnn=s.lam_tnn, seed=s.seed,
                                       callback=on_iter)
    fitted.label_names_ = inputs.label_names
    if s.calibrate:
        report["calibration"] = run.cached("calibration", lambda: calibrate(model, X, Y, seed=s.seed), fmt="json")
        c = report["calibration"]
        fitted.platt_ = (np.array(c["a"]), np.array(c["b"]))
        io.write_array(run.file("probabilities.npy"), fitted.probabilities(scores["tmvml"]))
        if Yte is not None:
            from paperkit.methods.mvml.calibration import brier, log_loss

            P, raw = fitted.probabilities(scores["tmvml"]), np.clip(scores["tmvml"], 0.0, 1.0)
            c["test"] = {"log_loss": log_loss(Yte, P), "brier": brier(Yte, P),
                         "log_loss_raw_clipped": log_loss(Yte, raw), "brier_raw_clipped": brier(Yte, raw)}
    io.write_arrays(run.file("model.npz"), fitted.to_arrays())
    io.write_array(run.file("scores.npy"), scores["tmvml"])
    trace = fitted.state_.trace_table()
    tables.write_table(run.file("trace.csv"), trace)
    if fitted.n_iter_:
        from paperkit.core import plots

        plots.save_figure(convergence_figure(trace), run.file("convergence.png"))
    if Yte is not None:
        test = {meth: metrics.evaluate(Yte, F, model.threshold) for meth, F in scores.items()}
        report["test"] = test
        shown.append((f"test set ({len(Yte)} samples):", test))
    elif Xte is None:
        report["train"] = {"tmvml": metrics.evaluate(Y, scores["tmvml"], model.threshold)}
        if not s.cv:
            shown.append(("training data (no test data given):", report["train"]))
    report["solver"] = {"iterations": fitted.n_iter_, "converged": fitted.converged_,
                        "primal_residual": float(trace["primal_residual"][-1]) if fitted.n_iter_ else 0.0}
    io.write_json(run.file("metrics.json"), report)
    summary: dict[str, Any] = {"run_dir": str(run.path), "iterations": fitted.n_iter_,
                               "converged": fitted.converged_, "methods": inputs.methods,
                               "labels": inputs.label_names or list(range(int(Y.shape[1])))}
    # every method scored, not only TMvML (the scores of each are described in metrics.json)
    if "test" in report:
        summary["test_average_precision"] = {m: v["average_precision"] for m, v in report["test"].items()}
    if "cv" in report:
        summary["cv_average_precision"] = {m: v["average_precision"]["mean"]
                                           for m, v in report["cv"]["summary"].items()}
    if "train" in report:
        summary["train_average_precision"] = {m: v["average_precision"] for m, v in report["train"].items()}
    if "select" in report:
        summary["selected"] = report["select"]["chosen"]
    return FitResult(summary, report, shown)



CALIBRATION_FRACTION = 0.3


def calibrate(model: TMvML, views: list[np.ndarray], Y: np.ndarray, *, seed: int = 0,
              fraction: float = CALIBRATION_FRACTION) -> dict[str, Any]:
    """Platt sigmoids per label: ``model`` fitted on 1 − ``fraction`` of the training data, its scores on
    the held-out rest (drawn from ``seed``) mapped to the labels. Returns the parameters and the
    held-out size (:mod:`paperkit.methods.mvml.calibration`)."""
    from paperkit.methods.mvml.calibration import fit_platt

    tr, va = train_test_indices(len(Y), fraction, np.random.default_rng(int(seed)))
    inner = replace(model).fit([X[tr] for X in views], Y[tr])
    a, b = fit_platt(inner.decision_function([X[va] for X in views]), Y[va])
    return {"method": "platt", "fraction": fraction, "n_fit": int(len(tr)), "n_calibration": int(len(va)),
            "a": [float(x) for x in a], "b": [float(x) for x in b]}


# --------------------------------------------------------------------------------------- mvml-make
# Float64 columns a generator holds per sample (views, labels, latent factors), times two for its
# temporaries: the memory estimate of mvml-make --n.
_COLUMNS_PER_SAMPLE = {"synthetic": 2 * (150 + 2 * 8 + 4), "planted": 2 * (4 * 40 + 3 * 6)}


@dataclass(frozen=True)
class MakeSettings:
    dataset: str
    n: int | None = None
    seed: int = 0
    max_memory_gb: float | None = None


def prepare_make(settings: MakeSettings) -> MakeSettings:
    """Refuse a sample count whose arrays cannot fit in memory (before anything is generated)."""
    s = settings
    if s.dataset not in DATASET_NAMES:
        raise UsageError(f"--dataset {s.dataset!r}: expected one of {', '.join(DATASET_NAMES)}")
    if s.n is not None and s.dataset in _COLUMNS_PER_SAMPLE:
        check_memory(8.0 * int(s.n) * _COLUMNS_PER_SAMPLE[s.dataset], f"--n {s.n} samples of {s.dataset}",
                     limit_gb=s.max_memory_gb, flag=MEMORY_FLAG)
    return s


def execute_make(settings: MakeSettings, run: Any) -> dict[str, Any]:
    """Write view{v}.npy, labels.npy and info.json into the run dir; returns the info."""
    from paperkit.core import io
    from paperkit.methods.mvml import data as datasets

    s = settings
    kwargs = {} if s.n is None or s.dataset == "digits-mvml" else {"n": s.n}
    d = datasets.load(s.dataset, np.random.default_rng(s.seed), **kwargs)
    for v, view in enumerate(d.views):
        io.write_array(run.file(f"view{v + 1}.npy"), view)
    io.write_array(run.file("labels.npy"), d.Y)
    info = {"dataset": d.name, "n_samples": int(len(d.Y)), "views": d.view_names,
            "view_widths": [int(view.shape[1]) for view in d.views], "labels": d.label_names,
            "label_rates": d.Y.mean(axis=0).round(6).tolist()}
    io.write_json(run.file("info.json"), info)
    return info


# ------------------------------------------------------------------------------------ mvml-predict
@dataclass(frozen=True)
class Prediction:
    scores: np.ndarray
    labels: np.ndarray
    metrics: dict[str, float] | None
    label_names: list[str] | None = None  # from the model (or --label-names); None: 0-based columns
    probabilities: np.ndarray | None = None  # calibrated models only (mvml-fit --calibrate)

    def columns(self, what: str = "both") -> dict[str, np.ndarray]:
        """``score_<name>`` / ``label_<name>`` columns (``score_0``, ... without names: 0-based)."""
        q = self.scores.shape[1]
        names = self.label_names or [str(j) for j in range(q)]
        cols: dict[str, np.ndarray] = {}
        if what in ("scores", "both"):
            cols.update({f"score_{n}": self.scores[:, j] for j, n in enumerate(names)})
        if self.probabilities is not None and what in ("probabilities", "both"):
            cols.update({f"prob_{n}": self.probabilities[:, j] for j, n in enumerate(names)})
        if what in ("labels", "both"):
            cols.update({f"label_{n}": self.labels[:, j] for j, n in enumerate(names)})
        return cols


def predict(model_path: str, views: Sequence[str], labels: str | None = None,
            label_names: str | None = None, what: str = "both") -> Prediction:
    """Scores and 0/1 labels of ``views`` under the model in ``model_path``; metrics when ``labels`` is given.

    Views whose values, though finite, are so large that the model's feature map overflows are refused
    (InputError naming the files) rather than scored as NaN."""
    from paperkit.core import io
    from paperkit.methods.mvml.estimator import check_labels
    from paperkit.methods.mvml.files import check_label_names, read_label_names, read_labels, read_views

    _one_stdin(list(views), labels, model_path)
    model = TMvML.from_arrays(io.read_arrays(io.require_file(model_path)), model_path)
    if what == "probabilities" and not model.calibrated:
        raise UsageError(f"--what probabilities: {model_path} is not calibrated (its scores are not probabilities); "
                         "fit it with mvml-fit --calibrate")
    names = model.label_names_
    if label_names:
        names = check_label_names(read_label_names(label_names), model.n_labels_, label_names)
    X = read_views(views)
    if len(X) != model.n_views_:
        raise InputError(f"--views gives {len(X)} views; the model was fitted on {model.n_views_}")
    for v, (path, Xv) in enumerate(zip(views, X, strict=True)):
        width = Xv.shape[1] if Xv.ndim == 2 else 1
        if width != model.view_widths_[v]:
            raise InputError(f"{path}: view {v} (0-based) has {width} columns; the model was fitted with "
                             f"{model.view_widths_[v]}")
    with np.errstate(all="ignore"):  # overflow shows up as non-finite scores, refused below
        F = model.decision_function(X)
    if not np.all(np.isfinite(F)):
        rows = np.flatnonzero(~np.all(np.isfinite(F), axis=1))
        raise InputError(f"{', '.join(views)}: {rows.size} sample(s) (first: row {rows[0]}, 0-based) give non-finite "
                         "scores: their values are too large for the model's feature scale; rescale the views")
    P = (F > model.threshold).astype(np.int64)
    metrics = None
    if labels:
        Y = check_labels(read_labels(labels), labels)
        if Y.shape != F.shape:
            raise InputError(f"{labels}: shape {Y.shape}; the predictions have shape {F.shape}")
        metrics = evaluate(Y, F, model.threshold)
    return Prediction(F, P, metrics, names, model.probabilities(F) if model.calibrated else None)
