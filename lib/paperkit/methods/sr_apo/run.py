"""What ``paperkit sr-apo-search`` runs: settings, input checks, and the search into a run directory.

:class:`SearchSettings` holds every default; :func:`prepare_search` reads and checks the table, the
options, the output names and a Dask scheduler's address before any run dir exists;
:func:`execute_search` fits every expression (one ``run.cached`` stage per chunk, so ``--resume``
continues at the last finished chunk) and writes the summaries, the front and its plot with
``RunDir.file`` (nothing outside the run dir).
Kept in the library (no click) so that scripts can drive a run directory too.
"""

from __future__ import annotations

import math
import os
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from paperkit.core import resources, tables
from paperkit.core.errors import InputError, PaperkitError, UsageError
from paperkit.core.validate import check_file_name
from paperkit.methods.sr_apo.data import check_data, select_columns
from paperkit.methods.sr_apo.formula import STANDARDISATION_FILE, Standardisation, write_standardisation
from paperkit.methods.sr_apo.front import (
    DEFAULT_TOLERANCE,
    apo_front,
    check_tolerance,
    front_metadata,
    front_rows,
    summary_filename,
    write_summary,
)
from paperkit.methods.sr_apo.grammar import Expressions, enumerate_expressions
from paperkit.methods.sr_apo.search import (
    DEFAULT_LIMIT,
    NUMBA_METHOD,
    FitOptions,
    all_expression_rows,
    check_methods,
    check_seeds,
    check_shard,
    search,
)

# The paper's ten seeds are PAPER_SEEDS; one run with its first seed is the default.
DEFAULT_SEEDS = (11284,)


@dataclass(frozen=True)
class SearchSettings:
    """Every parameter of ``sr-apo-search`` with its default."""

    target: str = "target"
    features: str = "all"
    head: int = 3
    engine: str = "numba"
    optimizers: str = "auto"
    seeds: tuple[int, ...] = DEFAULT_SEEDS
    restarts: int = 0
    max_iter: int = 200
    shard: tuple[int, int] = (1, 1)
    scheduler: str | None = None
    name: str | None = None
    all_expressions: bool = False
    latex: bool = False
    tolerance: float = DEFAULT_TOLERANCE
    max_expressions: int = DEFAULT_LIMIT
    chunk_size: int | None = None
    jobs: int = 0


@dataclass
class Inputs:
    X: np.ndarray
    y: np.ndarray
    columns: list[str]
    expressions: Expressions
    target: str = "target"


@dataclass
class SearchInputs:
    settings: SearchSettings
    data: Inputs
    methods: tuple[str, ...]
    name: str


class SchedulerError(PaperkitError):
    """The Dask scheduler cannot be reached (exit 1: a known runtime problem, not a bad option)."""


def methods_for(engine: str, optimizers: str) -> tuple[str, ...]:
    if optimizers.strip() in ("", "auto"):
        return (NUMBA_METHOD,) if engine == "numba" else ("BFGS",)
    return check_methods(engine, [m.strip() for m in optimizers.split(",") if m.strip()])


def dataset_name(path: str | os.PathLike) -> str:
    """The data file's stem, made safe for file names (other characters become '_')."""
    if str(path) == "-":
        return "stdin"
    name = Path(path).name
    for suffix in (".gz", ".csv", ".tsv", ".jsonl"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    name = re.sub(r"[^A-Za-z0-9._+=@-]", "_", name).lstrip(".")[:100]
    return name or "data"


def check_scheduler_support() -> None:
    import importlib.util

    if importlib.util.find_spec("distributed") is None:
        raise UsageError("--scheduler needs Dask's 'distributed' package (pip install 'paperkit-icml25[dask]')")


def check_scheduler(address: str, *, timeout: float = 5.0) -> None:
    """Refuse an address nothing listens on, before any run dir exists (tcp/tls addresses are probed)."""
    check_scheduler_support()
    scheme, sep, rest = address.partition("://")
    if not sep:
        scheme, rest = "tcp", address
    if scheme not in ("tcp", "tls"):
        return
    host, colon, port = rest.rstrip("/").rpartition(":")
    if not colon or not port.isdigit() or not host:
        raise UsageError(f"--scheduler {address!r} is not HOST:PORT or tcp://HOST:PORT")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except OSError as e:
        raise SchedulerError(f"--scheduler {address}: cannot connect ({e.strerror or e})") from None


def dask_executor(address: str) -> Any:
    check_scheduler_support()
    from distributed import Client

    try:
        return Client(address, timeout="10s")
    except (OSError, TimeoutError) as e:
        raise SchedulerError(f"--scheduler {address}: cannot connect ({e})") from None


def load_inputs(table: tables.Table, *, target: str, features: str, head: int, limit: int) -> Inputs:
    """Validate the table and enumerate the expressions before anything is written."""
    columns = select_columns(list(table.columns), target, features, table.source)
    X = table.numeric(columns)
    y = table.numeric([target])[:, 0]
    X, y = check_data(X, y, columns, target, table.source)
    exprs = enumerate_expressions(head, len(columns), limit=limit)
    kmax = int(exprs.n_const.max())
    if y.shape[0] < kmax:
        raise InputError(f"{table.source}: {y.shape[0]} rows but expressions of head length {head} have up to "
                         f"{kmax} constants; expected at least {kmax} rows")
    return Inputs(X, y, columns, exprs, target)


def prepare_search(settings: SearchSettings, data: str | os.PathLike | tables.Table) -> SearchInputs:
    """Options, names, the scheduler and the table, all checked before a run dir exists."""
    s = settings
    methods = methods_for(s.engine, s.optimizers)
    check_seeds(s.seeds)
    check_shard(s.shard)
    check_tolerance(s.tolerance)
    name = check_file_name(s.name, "--name") if s.name is not None else \
        dataset_name(data if not isinstance(data, tables.Table) else data.source)
    if s.scheduler:
        check_scheduler(s.scheduler)
    table = data if isinstance(data, tables.Table) else tables.read_table(data)
    return SearchInputs(s, load_inputs(table, target=s.target, features=s.features, head=s.head,
                                       limit=s.max_expressions), methods, name)


FAILED_NOTE = ("failed: expressions whose value is NaN or infinite on the data (a division by zero, "
               "|a|^b overflowing, 0 to a negative power) at the start constants of every start, so they "
               "were never fitted (scipy engine: also non-finite after the optimiser or an optimiser error). "
               "A fit that stops at --max-iter without converging is not a failure: its last constants count.")


def plan(inputs: SearchInputs) -> dict[str, Any]:
    """What a search will do: expressions, this shard's share, runs and fits."""
    s = inputs.settings
    exprs = inputs.data.expressions
    n_shard = len(exprs.shard(*s.shard))
    runs = len(inputs.methods) * len(s.seeds)
    return {"dataset": inputs.name, "features": inputs.data.columns, "rows": int(inputs.data.y.shape[0]),
            "head": s.head, "expressions": len(exprs), "shard": f"{s.shard[0]}/{s.shard[1]}",
            "expressions_in_shard": n_shard, "runs": runs, "fits": n_shard * runs,
            "by_length": exprs.counts_by_length()}


def dry_run(inputs: SearchInputs, *, sample: int = 2000) -> dict[str, Any]:
    """Count the work and estimate its time and memory by fitting a strided sample of this shard's
    expressions (after a warm-up, so numba's compile time is left out). Nothing is written."""
    import time

    from paperkit.methods.sr_apo.data import prepare
    from paperkit.methods.sr_apo.search import fit_expressions

    s = inputs.settings
    out = plan(inputs)
    exprs = inputs.data.expressions
    index = exprs.shard(*s.shard)
    take = index[np.linspace(0, len(index) - 1, min(sample, len(index))).astype(np.int64)] if len(index) else index
    data = prepare(inputs.data.X, inputs.data.y, s.seeds[0])
    options = FitOptions(max_iter=s.max_iter, jobs=resources.jobs(), restarts=s.restarts)
    method = inputs.methods[0]
    fit_expressions(exprs.tokens[take[:8]], data, s.engine, method, s.seeds[0], options)  # compile / warm up
    t0 = time.perf_counter()
    fit_expressions(exprs.tokens[take], data, s.engine, method, s.seeds[0], options)
    per_fit = (time.perf_counter() - t0) / max(len(take), 1)
    n, F, width = data.n_rows, data.n_features, exprs.tokens.shape[1]
    chunk = s.chunk_size or (20_000 if s.engine == "numba" else 2_000)
    kmax = int(exprs.n_const.max()) if len(exprs) else 0
    threads = max(1, resources.jobs())
    memory = (exprs.tokens.nbytes + 3 * exprs.length.nbytes  # the expressions
              + 8 * n * (F + 1) * 3  # the data and its standardised copy
              + 8 * threads * (6 * width + kmax + 1) * n  # per-thread work buffers of the kernel
              + 8 * min(chunk, len(index)) * (kmax + 5))  # one chunk's results
    if s.all_expressions:
        memory += 8 * len(index) * (kmax + 5) * out["runs"]
    out.update({"dry_run": True, "sampled": int(len(take)), "seconds_per_fit": per_fit,
                "estimated_seconds": round(per_fit * out["fits"], 1),
                "estimated_memory_mb": round(memory / 2**20, 1), "jobs": threads})
    return out


def execute_search(inputs: SearchInputs, run: Any, *, progress: Callable[..., Any] | None = None) -> dict:
    """Run the search into ``run`` (a RunDir); returns the JSON summary the command prints."""
    import logging
    import time

    log = logging.getLogger("paperkit.sr_apo")
    s, name = inputs.settings, inputs.name
    X, y, columns, exprs = inputs.data.X, inputs.data.y, inputs.data.columns, inputs.data.expressions
    n_shard = len(exprs.shard(*s.shard))
    executor = dask_executor(s.scheduler) if s.scheduler else None
    total = n_shard * len(inputs.methods) * len(s.seeds)
    bar = progress(total=total, desc="sr-apo-search", unit="expr") if progress is not None else None
    done = [0]
    t0 = time.perf_counter()

    def advance(k: int) -> None:
        done[0] += k
        if bar is not None:
            bar.update(k)
        elapsed = time.perf_counter() - t0
        eta = elapsed / done[0] * (total - done[0]) if done[0] else math.nan
        log.info("%s/%s fits (%.0f%%), %.0f s elapsed, about %.0f s left", f"{done[0]:,}", f"{total:,}",
                 100 * done[0] / max(total, 1), elapsed, eta)

    try:
        result = search(X, y, head=s.head, engine=s.engine, methods=inputs.methods, seeds=s.seeds, shard=s.shard,
                        options=FitOptions(max_iter=s.max_iter, jobs=resources.jobs(), restarts=s.restarts),
                        chunk_size=s.chunk_size, keep_all=s.all_expressions, stage=run.cached,
                        feature_names=columns, expressions=exprs, executor=executor, on_progress=advance)
    finally:
        if executor is not None:
            executor.close()
        if bar is not None:
            bar.close()
    rows = []
    for r in result.runs:
        write_summary(run.file(summary_filename(name, r.method, s.head, r.seed)), r.summary)
        rows.extend(dict(row, method=r.method, seed=r.seed, head=s.head, dataset=name) for row in r.summary.values())
        if s.all_expressions and r.all_rows is not None:
            tables.write_table(run.file(f"all_expressions/{name}_{r.method}_{s.head}_{r.seed}.csv.gz"),
                               all_expression_rows(result, r), fmt="csv")
    scaling = Standardisation.of(X, y, columns, inputs.data.target)
    write_standardisation(run.file(STANDARDISATION_FILE), scaling)
    front = apo_front(rows, s.tolerance)
    table = front_rows(front, columns, latex=s.latex, standardisation=scaling)
    tables.write_table(run.file("front.csv"), table, fmt="csv")
    from paperkit.methods.sr_apo.plots import plot_front

    shard = s.shard
    plot_front(run.file("front.png"), {L: r["R2"] for L, r in front.items()},
               {f"{r.method} seed {r.seed}": {L: v["R2"] for L, v in r.summary.items()} for r in result.runs},
               title=f"{name}: APO front (h = {s.head}, shard {shard[0]}/{shard[1]})" if shard[1] > 1 else
               f"{name}: APO front (h = {s.head})")
    reasons: dict[str, int] = {}
    for r in result.runs:
        for k, v in r.failed_reasons.items():
            reasons[k] = reasons.get(k, 0) + v
    return {"run_dir": str(run.path), "dataset": name, "features": columns, "expressions": len(exprs),
            "fitted": n_shard, "runs": len(result.runs), "failed": sum(r.n_failed for r in result.runs),
            "failed_reasons": reasons, "failed_note": FAILED_NOTE, "front_rule": front_metadata(s.tolerance),
            "front": [{"length": row["length"], "R2": _round(row["R2"]), "expression": row["expression"],
                       "formula": row["formula"]} for row in table]}


def _round(v: float) -> float | None:
    return round(v, 10) if math.isfinite(v) else None
