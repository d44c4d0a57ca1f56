"""Repeated random splits: TMvML, its penalty ablations and the baselines on the same data and mapping.

Each split s draws its own train/test partition from ``spawn_seeds(seed, n_splits)[s]``, so split s is the
same whichever other splits are run (and a resumed run continues with identical splits).

:func:`select_params` is the grid search of the paper's protocol done without touching test data: it
holds out part of the *training* data, scores every grid point there and returns the best.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import fields, replace

import numpy as np

from paperkit.core.errors import UsageError
from paperkit.core.seeding import spawn_seeds
from paperkit.core.validate import check_range
from paperkit.datasets import train_test_indices
from paperkit.methods.mvml.baselines import BASELINES, run_baseline
from paperkit.methods.mvml.estimator import TMvML
from paperkit.methods.mvml.metrics import LOWER_IS_BETTER, METRICS, evaluate

# "tmvml" is the configured model; "tnn" / "ridge" are the same model with the tensor nuclear norm
# (λ_tnn = λ/δ, LTR's slope at σ = 0, unless given) or without a tensor penalty (plain per-view ridge).
ABLATIONS = ("tnn", "ridge")
METHODS = ("tmvml",) + ABLATIONS + BASELINES


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
              test_fraction: float = 0.3, lam_tnn: float | None = None) -> dict[str, dict[str, float]]:
    """Metrics of every method on one random split."""
    rng = np.random.default_rng(int(split_seed))
    tr, te = train_test_indices(len(Y), test_fraction, rng)
    m = replace(model, seed=int(split_seed) % (2**31))
    _, scores = fit_and_score(m, methods, [X[tr] for X in views], Y[tr], [X[te] for X in views],
                              lam_tnn=lam_tnn, seed=int(split_seed) % (2**31))
    return {name: evaluate(Y[te], F, model.threshold) for name, F in scores.items()}


def run_splits(model: TMvML, views: list[np.ndarray], Y: np.ndarray, *, n_splits: int, seed: int,
               methods: list[str], test_fraction: float = 0.3, lam_tnn: float | None = None,
               done: dict[int, dict] | None = None,
               on_split: Callable[[int, dict[str, dict[str, float]]], None] | None = None) -> list[dict]:
    """Metrics per split (list over splits of {method: {metric: value}}); ``done`` holds finished splits."""
    if n_splits < 1:
        raise UsageError(f"number of splits = {n_splits} is out of range; expected at least 1")
    seeds = spawn_seeds(seed, n_splits)
    out = []
    for s in range(n_splits):
        if done and s in done:
            out.append(done[s])
            continue
        res = run_split(model, views, Y, int(seeds[s]), methods=methods, test_fraction=test_fraction, lam_tnn=lam_tnn)
        out.append(res)
        if on_split is not None:
            on_split(s, res)
    return out


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
    names = {f.name for f in fields(TMvML)}
    bad = [k for k in grid if k not in names]
    if bad or not grid:
        raise UsageError(f"grid names {', '.join(bad) or 'nothing'}; expected some of the TMvML parameters")
    empty = [k for k, v in grid.items() if len(v) == 0]
    if empty:
        raise UsageError(f"grid has no values for {', '.join(empty)}; expected at least one each")
    if metric not in METRICS:
        raise UsageError(f"metric = {metric!r} is unknown; expected one of {', '.join(METRICS)}")
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
