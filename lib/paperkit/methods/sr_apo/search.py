"""The exhaustive search of one dataset: every expression fitted, best R² per length per run.

A *run* is (engine method, seed), as in the paper's ``<dataset>_<method>_<h>_<seed>_summary.csv``.
For each run the expressions of this shard are fitted in chunks; each chunk is a stage
(``stage(name, compute, fmt)``, e.g. :meth:`paperkit.core.runs.RunDir.cached`): its best rows per
length are saved when computed and loaded instead of refitted when a search resumes.
Ties in R² are broken as the official script sorts: the larger expression string wins. With this
rule the merge of shards equals the unsharded run exactly.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from paperkit.core.errors import UsageError
from paperkit.core.resources import resolve_jobs
from paperkit.methods.sr_apo.baselines import SCIPY_METHODS, fit_scipy
from paperkit.methods.sr_apo.data import Prepared, check_data, prepare, start_point, start_points
from paperkit.methods.sr_apo.front import SUMMARY_COLUMNS, format_parameters
from paperkit.methods.sr_apo.grammar import CONST, Expressions, enumerate_expressions, to_official

log = logging.getLogger(__name__)

ENGINES = ("numba", "scipy")
NUMBA_METHOD = "LM"
PAPER_SEEDS = (11284, 11964, 15795, 21575, 22118, 23654, 29802, 5390, 6265, 860)
DEFAULT_LIMIT = 20_000_000


class Stage(Protocol):
    """``RunDir.cached``: the value of stage ``name``, loaded when saved before, else ``compute()`` saved."""

    def __call__(self, name: str, compute: Callable[[], Any], *, fmt: str = "json") -> Any: ...


def no_stage(name: str, compute: Callable[[], Any], *, fmt: str = "json") -> Any:
    return compute()


@dataclass
class FitOptions:
    max_iter: int = 200
    ftol: float = 1e-12
    abandon: int = 30
    restarts: int = 0
    jobs: int = 1
    block: int = 32


def check_methods(engine: str, methods: Sequence[str]) -> tuple[str, ...]:
    if engine not in ENGINES:
        raise UsageError(f"engine = {engine!r}; expected one of {', '.join(ENGINES)}")
    if engine == "numba":
        bad = [m for m in methods if m != NUMBA_METHOD]
        if bad:
            raise UsageError(f"optimiser(s) {', '.join(bad)} need --engine scipy; the numba engine fits with "
                             f"{NUMBA_METHOD} (Levenberg–Marquardt)")
        return (NUMBA_METHOD,)
    bad = [m for m in methods if m not in SCIPY_METHODS]
    if bad or not methods:
        raise UsageError(f"optimiser(s) {', '.join(bad) or '(none)'} unknown; expected some of "
                         f"{', '.join(SCIPY_METHODS)}")
    return tuple(dict.fromkeys(methods))


def check_seeds(seeds: Iterable[int]) -> tuple[int, ...]:
    out = tuple(dict.fromkeys(int(s) for s in seeds))
    if not out:
        raise UsageError("no seeds given; expected at least one")
    for s in out:
        if not 0 <= s < 2**32:
            raise UsageError(f"seed = {s}; the paper's numpy.random.seed needs 0 <= seed < 2**32")
    return out


def check_shard(shard: tuple[int, int]) -> tuple[int, int]:
    k, n = (int(v) for v in shard)
    if n < 1 or not 1 <= k <= n:
        raise UsageError(f"shard = {k}/{n}; expected K/N with 1 <= K <= N")
    return k, n


# ------------------------------------------------------------------------------------------- fitting
def fit_expressions(tokens: np.ndarray, data: Prepared, engine: str, method: str, seed: int,
                    options: FitOptions | None = None) -> dict[str, np.ndarray]:
    """Fit the constants of every token row; returns ``ssr``, ``params`` (m x kmax), ``nit``, ``ok``."""
    options = options or FitOptions()
    tokens = np.ascontiguousarray(tokens, dtype=np.int8)
    kmax = int((tokens == CONST).sum(axis=1).max()) if tokens.shape[0] else 0
    x0 = start_point(seed, max(kmax, 1))
    if engine == "scipy":
        return _fit_scipy_parallel(tokens, data, x0, method, kmax, options.jobs)
    from paperkit.methods.sr_apo.kernels import OK, fit_many

    _set_threads(options.jobs)
    m = tokens.shape[0]
    ssr = np.empty(m)
    params = np.empty((m, kmax))
    nit = np.empty(m, dtype=np.int32)
    nfev = np.empty(m, dtype=np.int32)
    status = np.empty(m, dtype=np.int8)
    lengths = (tokens != 0).sum(axis=1).astype(np.int64)
    starts = start_points(seed, tokens.shape[1], options.restarts)
    fit_many(tokens, lengths, data.Xt, data.y, starts, options.max_iter, options.ftol, options.abandon, ssr, params, nit, nfev, status,
             options.block)
    ok = (status == OK) & np.isfinite(ssr)
    return {"ssr": np.where(ok, ssr, np.nan), "params": params, "nit": nit.astype(np.float64), "ok": ok,
            "nfev": nfev.astype(np.float64)}


def _set_threads(jobs: int) -> None:
    import numba

    want = min(resolve_jobs(jobs), numba.config.NUMBA_NUM_THREADS)
    numba.set_num_threads(max(1, want))


def _fit_scipy_parallel(tokens: np.ndarray, data: Prepared, x0: np.ndarray, method: str, kmax: int,
                        jobs: int) -> dict[str, np.ndarray]:
    jobs = resolve_jobs(jobs)
    m = tokens.shape[0]
    if jobs == 1 or m < 64:
        return fit_scipy(tokens, data.Xt, data.y, x0, method, kmax)
    from paperkit.core.resources import process_pool

    parts = np.array_split(np.arange(m), jobs * 4)
    with process_pool(jobs, "fork") as pool:
        futures = [pool.submit(fit_scipy, tokens[p], data.Xt, data.y, x0, method, kmax) for p in parts if p.size]
        results = [f.result() for f in futures]
    return {key: np.concatenate([r[key] for r in results]) for key in results[0]}


# ------------------------------------------------------------------------------------------ summaries
def summary_row(tokens_row: np.ndarray, ssr: float, params: np.ndarray, nit: float, data: Prepared) -> dict:
    """One row in the official summary layout (MSE in original units, R² on standardised data)."""
    official = to_official(tokens_row)
    k = official.count("x[")
    return {
        "EquationLength": int((np.asarray(tokens_row) != 0).sum()),
        "EquationStructure": official,
        "EquationLambda": "lambda x,xdata:" + official,
        "EquationParameters": format_parameters(params[:k]),
        "NumericalIterations": float(nit) if k and math.isfinite(nit) else None,
        "MSE": float(ssr / data.n_rows * data.y_std ** 2),
        "R2": float(1.0 - ssr / data.sst),
    }


def _better(a: dict, b: dict | None) -> bool:
    """Row a beats row b: higher R², then (as the official sort) the larger expression string."""
    if b is None:
        return True
    return (a["R2"], a["EquationStructure"]) > (b["R2"], b["EquationStructure"])


def best_by_length(tokens: np.ndarray, fit: dict[str, np.ndarray], data: Prepared) -> dict[int, dict]:
    """Best summary row per length among fitted expressions (failures skipped)."""
    lengths = (tokens != 0).sum(axis=1)
    r2 = np.where(fit["ok"], 1.0 - fit["ssr"] / data.sst, -np.inf)
    out: dict[int, dict] = {}
    for L in np.unique(lengths):
        idx = np.flatnonzero((lengths == L) & fit["ok"])
        if idx.size == 0:
            continue
        top = r2[idx].max()
        tied = idx[r2[idx] == top]
        e = max(tied, key=lambda i: to_official(tokens[i]))
        out[int(L)] = summary_row(tokens[e], fit["ssr"][e], fit["params"][e], fit["nit"][e], data)
    return out


def merge_best(into: dict[int, dict], other: dict[int, dict]) -> dict[int, dict]:
    for L, row in other.items():
        if _better(row, into.get(L)):
            into[L] = row
    return dict(sorted(into.items()))


# ----------------------------------------------------------------------------------------- the search
@dataclass
class RunResult:
    method: str
    seed: int
    summary: dict[int, dict]
    n_expressions: int = 0
    n_failed: int = 0
    failed_reasons: dict[str, int] = field(default_factory=dict)
    all_rows: dict[str, np.ndarray] | None = None
    data: Prepared | None = None


@dataclass
class SearchResult:
    head: int
    n_features: int
    engine: str
    shard: tuple[int, int]
    runs: list[RunResult] = field(default_factory=list)
    expressions: Expressions | None = None
    index: np.ndarray | None = None


def search(X: np.ndarray, y: np.ndarray, *, head: int = 3, engine: str = "numba",
           methods: Sequence[str] = (NUMBA_METHOD,), seeds: Sequence[int] = (PAPER_SEEDS[0],),
           shard: tuple[int, int] = (1, 1), options: FitOptions | None = None, chunk_size: int | None = None,
           limit: int | None = DEFAULT_LIMIT, keep_all: bool = False, stage: Stage = no_stage,
           on_progress: Callable[[int], None] | None = None, feature_names: list[str] | None = None,
           expressions: Expressions | None = None, executor: Any = None) -> SearchResult:
    """Fit every expression of the grammar on (X, y) for each method and seed; best row per length per run.

    ``executor``: anything with ``submit(fn, *args)`` returning futures (a Dask client, a
    ``concurrent.futures`` pool); chunks are then fitted there, the rest stays here. The first chunk
    that is not already saved submits every later chunk, so the executor works on them together.
    ``stage``: saves each chunk's result (``<method>_<seed>_chunk<i>.json``, and ``..._fit.npz`` with
    ``keep_all``) and loads it back on a resumed search.
    """
    options = options or FitOptions()
    methods = check_methods(engine, methods)
    seeds = check_seeds(seeds)
    k, n = check_shard(shard)
    X, y = check_data(X, y, feature_names)
    exprs = expressions or enumerate_expressions(head, X.shape[1], limit=limit)
    kmax_all = int(exprs.n_const.max())
    if y.shape[0] < kmax_all:
        from paperkit.core.errors import InputError

        raise InputError(f"{y.shape[0]} rows but expressions have up to {kmax_all} constants; "
                         "expected at least as many rows as constants")
    index = exprs.shard(k, n)
    tokens = exprs.tokens[index]
    chunk = chunk_size or (20_000 if engine == "numba" else 2_000)
    bounds = [(s, min(s + chunk, len(index))) for s in range(0, len(index), chunk)] or [(0, 0)]
    result = SearchResult(head, X.shape[1], engine, (k, n), expressions=exprs, index=index)
    for method in methods:
        for seed in seeds:
            data = prepare(X, y, seed)
            best: dict[int, dict] = {}
            failed = 0
            reasons: dict[str, int] = {}
            parts: list[dict[str, np.ndarray]] = []
            futures: dict[int, Any] = {}

            def fitted(ci: int, cache: dict, data: Prepared = data, method: str = method, seed: int = seed,
                       futures: dict[int, Any] = futures) -> dict:
                if ci not in cache:
                    if executor is not None:
                        if ci not in futures:  # submit this chunk and every later one not yet submitted
                            for cj in range(ci, len(bounds)):
                                if cj not in futures:
                                    a2, b2 = bounds[cj]
                                    futures[cj] = executor.submit(fit_expressions, tokens[a2:b2], data, engine,
                                                                  method, seed, options)
                        cache[ci] = futures.pop(ci).result()
                    else:
                        a2, b2 = bounds[ci]
                        cache[ci] = fit_expressions(tokens[a2:b2], data, engine, method, seed, options)
                return cache[ci]

            for ci, (a, b) in enumerate(bounds):
                key = f"{method}_{seed}_chunk{ci:05d}"
                cache: dict[int, dict] = {}
                saved = stage(key, lambda ci=ci, a=a, b=b, cache=cache, data=data: _chunk_record(
                    tokens[a:b], fitted(ci, cache), data), fmt="json")
                best = merge_best(best, {int(L): r for L, r in saved["best"].items()})
                failed += int(saved["failed"])
                for why, count in saved.get("failed_reasons", {}).items():
                    reasons[why] = reasons.get(why, 0) + int(count)
                if keep_all:
                    fit = stage(key + "_fit", lambda ci=ci, cache=cache: fitted(ci, cache), fmt="npz")
                    parts.append({k: np.asarray(v) for k, v in fit.items()})
                if on_progress:
                    on_progress(b - a)
            for fut in futures.values():  # submitted ahead but saved already (a resumed search)
                fut.cancel()
            all_rows = None
            if keep_all:
                all_rows = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]} if parts else None
            result.runs.append(RunResult(method, seed, best, len(index), failed, reasons, all_rows, data))
    return result


def _chunk_record(tokens: np.ndarray, fit: dict[str, np.ndarray], data: Prepared) -> dict:
    """What a chunk stage saves: its best row per length (keys as strings, as JSON has them) and failures."""
    bad = ~np.asarray(fit["ok"], dtype=bool)
    with_consts = (tokens == CONST).any(axis=1)
    return {"best": {str(L): r for L, r in best_by_length(tokens, fit, data).items()},
            "failed": int(bad.sum()),
            "failed_reasons": {"non_finite_without_constants": int((bad & ~with_consts).sum()),
                               "non_finite_at_every_start": int((bad & with_consts).sum())}}


def all_expression_rows(result: SearchResult, run: RunResult) -> dict[str, list]:
    """Every fitted expression of one run, in the official full-results columns (shard order)."""
    assert result.expressions is not None and result.index is not None and run.all_rows is not None
    data = run.data
    assert data is not None
    tokens = result.expressions.tokens[result.index]
    fit = run.all_rows
    cols: dict[str, list] = {c: [] for c in SUMMARY_COLUMNS}
    for e in range(tokens.shape[0]):
        if fit["ok"][e]:
            row = summary_row(tokens[e], fit["ssr"][e], fit["params"][e], fit["nit"][e], data)
        else:
            official = to_official(tokens[e])
            row = {"EquationLength": int((tokens[e] != 0).sum()), "EquationStructure": official,
                   "EquationLambda": "lambda x,xdata:" + official, "EquationParameters": "",
                   "NumericalIterations": None, "MSE": None, "R2": None}
        for c in SUMMARY_COLUMNS:
            cols[c].append(row[c])
    return cols

