"""Orchestration of the bandit commands (bandit-sim, bandit-sweep, bandit-bound): settings, input
checks, and the simulation stages of a run dir.

Each command has a frozen settings dataclass (the one source of its defaults), a ``prepare_*`` that
reads and checks every input before a run dir exists, and an ``execute_*`` that runs the stages through
:meth:`paperkit.core.runs.RunDir.cached` (one stage per algorithm, or per sweep value), so an
interrupted run resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from paperkit.core.errors import UsageError
from paperkit.core.progress import progress as default_progress
from paperkit.core.resources import MEMORY_FLAG, check_memory
from paperkit.methods.bandit.bounds import LowerBound, lower_bound
from paperkit.methods.bandit.instances import PRESET_RANGES, Instance, resolve_instance
from paperkit.methods.bandit.simulate import (
    DEFAULT_F_COEF,
    DEFAULT_SWEEP_VALUES,
    PAPER_ALGORITHMS,
    SimResult,
    check_settings,
    curve_rows,
    final_summary,
    log_checkpoints,
    parse_algorithms,
    rank,
    simulate,
    sweep_instance,
    sweep_point,
)

# Rounds per run above this would take days per run even with numba; the option refuses them.
MAX_HORIZON = 10**9
# Rounds simulated by one command (runs × horizon × algorithms, × sweep values): about 2·10^6 rounds per
# CPU-second, so this is days of compute; the largest example (the alpha sweep at the paper's 100 runs)
# is 10^9.
MAX_TOTAL_ROUNDS = 10**12


# ----------------------------------------------------------------------------------------- common
def instance_fingerprint(instance: Instance) -> dict[str, Any]:
    """Config entries pinning the instance for ``--resume``: the sha256 of each file it was read from
    (YAML and the CSVs it names), or of its resolved numbers when it came from stdin."""
    from paperkit.core.io import sha256_file

    if not instance.files:
        return {}
    out = {}
    for f in instance.files:
        if f == "-":
            text = json.dumps(instance.to_dict(), sort_keys=True).encode()
            out[f] = hashlib.sha256(text).hexdigest()
        else:
            out[f] = sha256_file(f)
    return {"instance_sha256": out}


def _check_horizon(horizon: int) -> None:
    if not 1 <= horizon <= MAX_HORIZON:
        raise UsageError(f"--horizon {horizon}: expected 1 to {MAX_HORIZON} rounds")


def _check_total_rounds(runs: int, horizon: int, n_algos: int, n_values: int = 1) -> None:
    total = int(runs) * int(horizon) * int(n_algos) * int(n_values)   # Python ints: no overflow
    if total > MAX_TOTAL_ROUNDS:
        each = f" × {n_values} --values" if n_values > 1 else ""
        raise UsageError(f"--runs {runs} × --horizon {horizon} × {n_algos} algorithm(s){each} means {total:.3g} "
                         f"simulated rounds, over the limit of {MAX_TOTAL_ROUNDS:.0e} (days of compute); use fewer "
                         "--runs or a shorter --horizon")


def simulation_memory_bytes(runs: int, points: int, n_algos: int) -> float:
    """Bytes a simulation keeps: two regret parts (float64) per run, checkpoint round and algorithm,
    plus one seed per run."""
    return 8.0 * int(runs) * (2 * (int(points) + 1) * int(n_algos) + 1)


# ------------------------------------------------------------------------------------- bandit-sim
@dataclass(frozen=True)
class SimSettings:
    alpha: float = 0.5
    horizon: int = 200_000
    runs: int = 100
    algos: tuple[str, ...] = PAPER_ALGORITHMS
    f_coef: float = DEFAULT_F_COEF
    delta: float | None = None
    points: int = 100
    yscale: str = "linear"
    seed: int = 0
    max_memory_gb: float | None = None


@dataclass(frozen=True)
class SimInputs:
    settings: SimSettings
    instance: Instance
    algos: tuple[str, ...]
    delta: float
    bound: LowerBound
    checkpoints: np.ndarray

    @property
    def resume_key(self) -> dict[str, Any]:
        return instance_fingerprint(self.instance)


@dataclass(frozen=True)
class SimOutcome:
    results: list[SimResult]
    ranking: list[dict]
    instance: str
    bound_at_horizon: float
    best_arm: str = "0"  # how tables name the best arm: its 0-based index and, when given, its name


def prepare_sim(settings: SimSettings, *, preset: str | None = None, instance_path: str | None = None) -> SimInputs:
    """Check the settings, estimate the memory, and read the instance (nothing is written)."""
    s = settings
    names = tuple(parse_algorithms(s.algos))
    _check_horizon(s.horizon)
    delta = check_settings(s.horizon, s.runs, s.alpha, delta=s.delta, f_coef=s.f_coef)
    points = min(int(s.points), int(s.horizon))
    check_memory(simulation_memory_bytes(s.runs, points, len(names)),
                 f"{s.runs} runs × {len(names)} algorithms × about {points} regret points", limit_gb=s.max_memory_gb,
                 flag=MEMORY_FLAG)
    _check_total_rounds(s.runs, s.horizon, len(names))   # the memory check bounds runs, not the horizon
    inst = resolve_instance(preset, instance_path)
    return SimInputs(s, inst, names, delta, lower_bound(inst, s.alpha), log_checkpoints(s.horizon, s.points))


def execute_sim(inputs: SimInputs, run: Any, *, progress: Callable[..., Any] = default_progress) -> SimOutcome:
    """Simulate every algorithm (one stage each) and write regret.csv, final.json, instance.yaml and
    regret.png into the run dir."""
    from paperkit.core import io, plots, tables
    from paperkit.methods.bandit.plots import regret_figure

    s, inst = inputs.settings, inputs.instance
    results = []
    with progress(total=len(inputs.algos) * s.runs, desc="bandit-sim", unit="run") as bar:
        for name in inputs.algos:
            bar.set_postfix_str(name)
            done = run.has_checkpoint(f"{name}.npz")  # finished before an interruption: loaded, not rerun

            def compute(name: str = name) -> dict[str, np.ndarray]:
                res = simulate(inst, name, s.horizon, s.runs, alpha=s.alpha, seed=s.seed, delta=inputs.delta,
                               f_coef=s.f_coef, checkpoints=inputs.checkpoints, batch=max(8, s.runs // 10),
                               on_batch=bar.update)
                return {"t": res.t, "reward": res.reward, "duel": res.duel}

            d = run.cached(name, compute, fmt="npz")
            if done:
                bar.update(s.runs)
            results.append(SimResult(name, d["t"], d["reward"], d["duel"]))
    lb = inputs.bound
    rows = [r for res in results for r in curve_rows(res, s.alpha)]
    ranked = rank([final_summary(res, s.alpha) for res in results])
    tables.write_table(run.file("regret.csv"), rows)
    io.write_json(run.file("final.json"), {
        "instance": inst.name, "best_arm": inst.best, **({"best_arm_name": inst.names[inst.best]} if inst.names else {}),
        "alpha": s.alpha, "T": s.horizon, "runs": s.runs, "seed": s.seed,
        "lower_bound_constant": lb.constant, "lower_bound_at_T": lb.at(s.horizon),
        "no_fusion_constant": lb.no_fusion_constant, "ranking": ranked})
    io.write_yaml(run.file("instance.yaml"), inst.to_dict())
    fig = regret_figure(results, s.alpha, lower_bound=lb.constant,
                        title=f"{inst.name}, T = {s.horizon}, {s.runs} runs", yscale=s.yscale)
    plots.save_figure(fig, run.file("regret.png"))
    best = f"{inst.best}" + (f" {inst.names[inst.best]!r}" if inst.names else "")
    return SimOutcome(results, ranked, inst.name, lb.at(s.horizon), best)


# ----------------------------------------------------------------------------------- bandit-sweep
@dataclass(frozen=True)
class SweepSettings:
    sweep: str
    values: tuple[float, ...] | None = None
    algos: tuple[str, ...] | None = None
    alpha: float = 0.5
    horizon: int = 200_000
    runs: int = 20
    f_coef: float = DEFAULT_F_COEF
    yscale: str | None = None  # None: log for the gap sweeps, linear for alpha
    seed: int = 0
    max_memory_gb: float | None = None


@dataclass(frozen=True)
class SweepInputs:
    settings: SweepSettings
    base: Instance
    values: tuple[float, ...]
    algos: tuple[str, ...]

    @property
    def resume_key(self) -> dict[str, Any]:
        return instance_fingerprint(self.base)


def prepare_sweep(settings: SweepSettings, *, preset: str | None = None,
                  instance_path: str | None = None) -> SweepInputs:
    s = settings
    if s.sweep not in DEFAULT_SWEEP_VALUES:
        raise UsageError(f"--sweep {s.sweep!r}: expected one of {', '.join(DEFAULT_SWEEP_VALUES)}")
    if s.yscale not in (None, "linear", "log"):
        raise UsageError(f"--yscale {s.yscale!r}: expected linear or log")
    grid = tuple(float(v) for v in (DEFAULT_SWEEP_VALUES[s.sweep] if s.values is None else s.values))
    if not grid:
        raise UsageError("--values is empty; expected comma-separated numbers")
    for v in grid:
        if s.sweep == "alpha" and not 0.0 <= v <= 1.0:
            raise UsageError(f"--values: alpha = {v!r} is out of range; expected values in [0, 1]")
        if s.sweep != "alpha":
            lo, hi = PRESET_RANGES[s.sweep]   # the ranges of --preset reward-gap:G / pref-gap:G
            if not lo < v <= hi:  # NaN fails too
                raise UsageError(f"--values: {s.sweep} = {v!r} is out of range; expected values in ({lo:g}, {hi:g}]")
    dup = next((v for i, v in enumerate(grid) if v in grid[:i]), None)
    if dup is not None:   # the same point twice would give duplicate rows in sweep.csv
        raise UsageError(f"--values: {dup:g} is given twice; expected distinct values")
    algos = s.algos or (("decofusion",) if s.sweep == "alpha" else PAPER_ALGORITHMS)
    names = tuple(parse_algorithms(algos))
    _check_horizon(s.horizon)
    check_settings(s.horizon, s.runs, s.alpha, f_coef=s.f_coef)
    check_memory(simulation_memory_bytes(s.runs, 0, 1), f"{s.runs} runs", limit_gb=s.max_memory_gb,
                 flag=MEMORY_FLAG)
    _check_total_rounds(s.runs, s.horizon, len(names), len(grid))
    base = resolve_instance(preset, instance_path)
    for v in grid:  # fail on a bad instance before any simulation
        sweep_instance(s.sweep, v, base)
    return SweepInputs(s, base, grid, names)


def execute_sweep(inputs: SweepInputs, run: Any, *, progress: Callable[..., Any] = default_progress) -> list[dict]:
    """Final regrets at every sweep value (one stage each); writes sweep.csv and sweep.png; returns the rows."""
    from paperkit.core import plots, tables
    from paperkit.methods.bandit.plots import sweep_figure

    s = inputs.settings
    rows: list[dict] = []
    total = len(inputs.values) * len(inputs.algos) * s.runs
    with progress(total=total, desc=f"sweep {s.sweep}", unit="run") as bar:
        for i, v in enumerate(inputs.values):
            bar.set_postfix_str(f"{s.sweep}={v:g}")
            done = run.has_checkpoint(f"value{i:03d}.json")

            def compute(v: float = v) -> list[dict]:
                part = sweep_point(s.sweep, v, inputs.base, inputs.algos, s.horizon, s.runs, alpha=s.alpha,
                                   seed=s.seed, f_coef=s.f_coef, on_batch=bar.update, batch=max(8, s.runs // 4))
                return part

            part = run.cached(f"value{i:03d}", compute, fmt="json")
            if done:
                bar.update(len(inputs.algos) * s.runs)
            rows.extend(part)
    tables.write_table(run.file("sweep.csv"), rows)
    plots.save_figure(sweep_figure(rows, s.sweep, yscale=s.yscale), run.file("sweep.png"))
    return rows


def worst_values(rows: list[dict]) -> dict[str, dict[str, float]]:
    """Per algorithm, the sweep value with the largest mean final regret."""
    worst: dict[str, dict] = {}
    for r in rows:
        if r["algo"] not in worst or r["regret_mean"] > worst[r["algo"]]["regret_mean"]:
            worst[r["algo"]] = r
    return {a: {"value": r["value"], "regret_mean": r["regret_mean"]} for a, r in worst.items()}


# ----------------------------------------------------------------------------------- bandit-bound
@dataclass(frozen=True)
class BoundSettings:
    alpha: float = 0.5
    horizon: int | None = None


@dataclass(frozen=True)
class BoundInputs:
    settings: BoundSettings
    instance: Instance


def prepare_bound(settings: BoundSettings, *, preset: str | None = None,
                  instance_path: str | None = None) -> BoundInputs:
    if settings.horizon is not None and not 2 <= settings.horizon <= MAX_HORIZON:
        raise UsageError(f"--horizon {settings.horizon}: expected 2 to {MAX_HORIZON} rounds")
    return BoundInputs(settings, resolve_instance(preset, instance_path))


def _json_inf(row: dict) -> dict:
    return {k: "inf" if isinstance(v, float) and math.isinf(v) else v for k, v in row.items()}


def bound_rows(inputs: BoundInputs) -> list[dict]:
    """One row per suboptimal arm (0-based ``arm``; every row is an arm, so typed readers see one type per
    column); infinities as the string 'inf' (JSON has none). The totals are :func:`bound_summary`."""
    s = inputs.settings
    rows = lower_bound(inputs.instance, s.alpha).rows(inputs.instance.names)
    for r in rows:
        if s.horizon is not None:
            r["bound_at_T"] = r["cost"] * math.log(s.horizon)
    return [_json_inf(r) for r in rows]


def bound_summary(inputs: BoundInputs) -> dict[str, Any]:
    """The totals of :func:`bound_rows` (they used to be a last 'total' row): C(alpha) (the sum of ``cost``),
    the no-fusion constant (the sum of ``no_fusion_cost``), the sums of both costs and, with a horizon,
    C(alpha)·log T; plus the instance, alpha and the best arm."""
    s, inst = inputs.settings, inputs.instance
    lb = lower_bound(inst, s.alpha)
    out = {"instance": inst.name, "n_arms": inst.n_arms, "alpha": s.alpha, "best_arm": inst.best,
           **({"best_arm_name": inst.names[inst.best]} if inst.names else {}),
           "lower_bound_constant": lb.constant, "no_fusion_constant": lb.no_fusion_constant,
           "reward_cost_sum": float(lb.reward_cost.sum()), "duel_cost_sum": float(lb.duel_cost.sum()),
           "horizon": s.horizon, "lower_bound_at_T": None if s.horizon is None else lb.at(s.horizon)}
    return _json_inf(out)
