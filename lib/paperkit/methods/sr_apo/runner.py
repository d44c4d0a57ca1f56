"""The search as the command runs it: table in, run directory out (summaries, front, plot, checkpoints).

Kept in the library (no click) so that scripts and the estimator can drive a run directory too.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from paperkit.core import tables
from paperkit.core.errors import InputError, UsageError
from paperkit.methods.sr_apo.data import check_data, select_columns
from paperkit.methods.sr_apo.front import apo_front, front_rows, summary_filename, write_summary
from paperkit.methods.sr_apo.grammar import Expressions, enumerate_expressions
from paperkit.methods.sr_apo.search import (
    NUMBA_METHOD,
    FitOptions,
    all_expression_rows,
    check_methods,
    search,
)


def methods_for(engine: str, optimizers: str) -> tuple[str, ...]:
    if optimizers.strip() in ("", "auto"):
        return (NUMBA_METHOD,) if engine == "numba" else ("BFGS",)
    return check_methods(engine, [m.strip() for m in optimizers.split(",") if m.strip()])


def dataset_name(path: str | os.PathLike) -> str:
    if str(path) == "-":
        return "stdin"
    name = Path(path).name
    for suffix in (".gz", ".csv", ".tsv", ".jsonl"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name or "data"


class RunDirCheckpoint:
    """Chunk checkpoints in a run directory: ``<key>.json`` (best rows) and, with all expressions, ``.npz``."""

    def __init__(self, run: Any, keep_all: bool) -> None:
        self.run = run
        self.keep_all = keep_all

    def get(self, key: str) -> dict | None:
        if not self.run.has_checkpoint(key + ".json"):
            return None
        saved = self.run.load_checkpoint(key + ".json")
        if self.keep_all:
            if not self.run.has_checkpoint(key + ".npz"):
                return None
            saved["fit"] = {k: np.asarray(v) for k, v in self.run.load_checkpoint(key + ".npz").items()}
        return saved

    def put(self, key: str, value: dict) -> None:
        if self.keep_all and "fit" in value:
            self.run.save_checkpoint(key + ".npz", value["fit"])
        self.run.save_checkpoint(key + ".json", {k: v for k, v in value.items() if k != "fit"})


def check_scheduler_support() -> None:
    import importlib.util

    if importlib.util.find_spec("distributed") is None:
        raise UsageError("--scheduler needs Dask's 'distributed' package (pip install 'paperkit[dask]')")


def dask_executor(address: str) -> Any:
    check_scheduler_support()
    from distributed import Client

    try:
        return Client(address, timeout="10s")
    except (OSError, TimeoutError) as e:
        raise UsageError(f"--scheduler {address}: cannot connect ({e})") from None


@dataclass
class Inputs:
    X: np.ndarray
    y: np.ndarray
    columns: list[str]
    expressions: Expressions


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
    return Inputs(X, y, columns, exprs)


def run_search(inputs: Inputs, run: Any, *, head: int, engine: str,
               methods: tuple[str, ...], seeds: tuple[int, ...], restarts: int, max_iter: int,
               shard: tuple[int, int], scheduler: str | None, name: str, all_expressions: bool, latex: bool,
               chunk_size: int | None, jobs: int, bar: Any = None) -> dict:
    """Run the search into ``run`` (a RunDir); returns the JSON summary the command prints."""
    X, y, columns, exprs = inputs.X, inputs.y, inputs.columns, inputs.expressions
    n_shard = len(exprs.shard(*shard))
    if bar is not None:
        bar.total = n_shard * len(methods) * len(seeds)
        bar.refresh()
    executor = dask_executor(scheduler) if scheduler else None
    try:
        result = search(X, y, head=head, engine=engine, methods=methods, seeds=seeds, shard=shard,
                        options=FitOptions(max_iter=max_iter, jobs=jobs, restarts=restarts),
                        chunk_size=chunk_size, keep_all=all_expressions,
                        checkpoint=RunDirCheckpoint(run, all_expressions), feature_names=columns,
                        expressions=exprs, executor=executor, on_progress=bar.update if bar is not None else None)
    finally:
        if executor is not None:
            executor.close()
    rows = []
    for r in result.runs:
        write_summary(run.file(summary_filename(name, r.method, head, r.seed)), r.summary)
        rows.extend(dict(row, method=r.method, seed=r.seed, head=head, dataset=name) for row in r.summary.values())
        if all_expressions and r.all_rows is not None:
            tables.write_table(run.file(f"all_expressions/{name}_{r.method}_{head}_{r.seed}.csv.gz"),
                           all_expression_rows(result, r), fmt="csv")
    front = apo_front(rows)
    tables.write_table(run.file("front.csv"), front_rows(front, columns, latex=latex), fmt="csv")
    from paperkit.methods.sr_apo.plot import plot_front

    plot_front(run.file("front.png"), {L: r["R2"] for L, r in front.items()},
               {f"{r.method} seed {r.seed}": {L: v["R2"] for L, v in r.summary.items()} for r in result.runs},
               title=f"{name}: APO front (h = {head}, shard {shard[0]}/{shard[1]})" if shard[1] > 1 else
               f"{name}: APO front (h = {head})")
    return {"run_dir": str(run.path), "dataset": name, "features": columns, "expressions": len(exprs),
            "fitted": n_shard, "runs": len(result.runs), "failed": sum(r.n_failed for r in result.runs),
            "front": [{"length": L, "R2": _round(r["R2"]), "expression": r["EquationStructure"]}
                      for L, r in front.items()]}


def _round(v: float) -> float | None:
    return round(v, 10) if math.isfinite(v) else None
