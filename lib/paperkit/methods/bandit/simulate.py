"""Simulation harness for DR-MAB (Wang et al., ICML 2025, Section 6): many independent runs of each
algorithm in parallel, regret curves at log-spaced rounds, summaries, and the paper's sweeps.

Every run i of every algorithm gets the i-th child seed of ``seed`` (common random numbers across
algorithms), so the same seed gives the same numbers whatever the thread count or batch size.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from paperkit.core.errors import InputError, UsageError
from paperkit.core.seeding import spawn_seeds
from paperkit.core.validate import check_range
from paperkit.methods.bandit import kernels
from paperkit.methods.bandit.instances import (
    PREFERENCE_GAPS,
    REWARD_GAPS,
    TOL,
    Instance,
    preference_gap_instance,
    reward_gap_instance,
)

ALGORITHMS = tuple(kernels.ALGORITHMS)
PAPER_ALGORITHMS = ("decofusion", "elimfusion", "elim-nofusion", "med-nofusion")
LABELS = {"decofusion": "DecoFusion", "elimfusion": "ElimFusion", "elim-nofusion": "ElimNoFusion",
          "med-nofusion": "MED-NoFusion", "ucb": "UCB1", "klucb": "KL-UCB", "rucb": "RUCB"}
DEFAULT_F_COEF = 0.05  # β_t = log t + 0.05·K^1.01, the official code's choice (RMED uses 0.3)


def parse_algorithms(spec: str | Sequence[str]) -> list[str]:
    """``"decofusion,elimfusion"`` → a checked list (UsageError naming the unknown entry)."""
    names = [s.strip().lower() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    if not names:
        raise UsageError(f"--algos is empty; expected a comma-separated list of {', '.join(ALGORITHMS)}")
    for n in names:
        if n not in kernels.ALGORITHMS:
            raise UsageError(f"unknown algorithm {n!r}; expected one of {', '.join(ALGORITHMS)}")
    if len(set(names)) != len(names):
        raise UsageError(f"--algos lists an algorithm twice: {','.join(names)}")
    return names


def log_checkpoints(horizon: int, points: int = 100) -> np.ndarray:
    """About ``points`` distinct rounds, log-spaced from 1 to ``horizon`` (both included)."""
    grid = np.unique(np.round(np.logspace(0.0, math.log10(horizon), max(int(points), 2))).astype(np.int64))
    return np.unique(np.concatenate([grid[(grid >= 1) & (grid <= horizon)], [horizon]]))


@dataclass
class SimResult:
    """Cumulative regret parts at the checkpoint rounds ``t`` for every run (runs × len(t))."""

    algo: str
    t: np.ndarray
    reward: np.ndarray
    duel: np.ndarray

    def regret(self, alpha: float) -> np.ndarray:
        return alpha * self.reward + (1.0 - alpha) * self.duel


def check_common(horizon: int, runs: int, alpha: float) -> None:
    if not isinstance(horizon, (int, np.integer)) or horizon <= 0:
        raise UsageError(f"T = {horizon!r}; expected a positive number of rounds")
    if not isinstance(runs, (int, np.integer)) or runs <= 0:
        raise UsageError(f"runs = {runs!r}; expected a positive number of runs")
    check_range("alpha", alpha, 0.0, 1.0)  # NaN fails every comparison, so it is rejected too


def check_settings(horizon: int, runs: int, alpha: float, *, delta: float | None = None,
                   f_coef: float = DEFAULT_F_COEF) -> float:
    """Check the run settings (UsageError naming the bad one) and return the resolved ``delta``.

    Commands call this before they create a run dir, so a bad value leaves nothing behind.
    ``delta`` defaults to 1/T and may be 1 (at T = 1): the elimination radius log(K·t/δ) stays positive.
    """
    check_common(horizon, runs, alpha)
    delta = 1.0 / horizon if delta is None else float(delta)
    check_range("delta", delta, 0.0, 1.0, low_open=True)
    f_coef = float(f_coef)
    if not math.isfinite(f_coef):
        raise UsageError(f"f_coef = {f_coef!r}; expected a finite number ≥ 0")
    check_range("f_coef", f_coef, 0.0)
    return delta


def simulate(instance: Instance, algo: str, horizon: int, runs: int, *, alpha: float = 0.5, seed: int = 0,
             delta: float | None = None, f_coef: float = DEFAULT_F_COEF, checkpoints: Sequence[int] | None = None,
             batch: int | None = None, on_batch: Callable[[int], None] | None = None) -> SimResult:
    """Run ``runs`` independent simulations of ``algo`` for ``horizon`` rounds (numba, parallel over runs).

    ``delta`` is the elimination confidence in (0, 1] (default 1/T); ``f_coef`` sets DecoFusion's threshold
    β_t = log t + f_coef·K^1.01. ``on_batch(n)`` is called after each batch of n runs (progress).
    """
    delta = check_settings(horizon, runs, alpha, delta=delta, f_coef=f_coef)
    parse_algorithms([algo])
    ckpts = log_checkpoints(horizon) if checkpoints is None else np.asarray(checkpoints, dtype=np.int64)
    if ckpts.size == 0 or np.any(np.diff(ckpts) < 0) or ckpts[0] < 1 or ckpts[-1] > horizon:
        raise UsageError(f"checkpoints must be increasing rounds in [1, {horizon}]")
    seeds = spawn_seeds(seed, runs)
    out_r = np.zeros((runs, ckpts.size))
    out_d = np.zeros((runs, ckpts.size))
    mu = np.ascontiguousarray(instance.means, dtype=np.float64)
    nu = np.ascontiguousarray(instance.preference, dtype=np.float64)
    code = kernels.ALGORITHMS[algo]
    step = runs if batch is None else max(1, int(batch))
    for start in range(0, runs, step):
        stop = min(runs, start + step)
        kernels.simulate_runs(code, mu, nu, instance.best, int(horizon), float(alpha), delta, float(f_coef),
                              seeds[start:stop], ckpts, out_r[start:stop], out_d[start:stop])
        if on_batch is not None:
            on_batch(stop - start)
    return SimResult(algo, ckpts, out_r, out_d)


def curve_rows(result: SimResult, alpha: float) -> list[dict]:
    """regret.csv rows: per checkpoint, mean/std of the aggregated regret and mean of both parts."""
    reg = result.regret(alpha)
    mean, std = reg.mean(axis=0), reg.std(axis=0)
    rm, dm = result.reward.mean(axis=0), result.duel.mean(axis=0)
    return [{"algo": result.algo, "t": int(t), "regret_mean": float(mean[i]), "regret_std": float(std[i]),
             "reward_regret_mean": float(rm[i]), "duel_regret_mean": float(dm[i])}
            for i, t in enumerate(result.t)]


def final_summary(result: SimResult, alpha: float) -> dict:
    reg = result.regret(alpha)[:, -1]
    runs = reg.size
    return {"algo": result.algo, "label": LABELS[result.algo], "regret_mean": float(reg.mean()),
            "regret_std": float(reg.std()), "regret_sem": float(reg.std(ddof=1) / math.sqrt(runs)) if runs > 1 else 0.0,
            "reward_regret_mean": float(result.reward[:, -1].mean()),
            "duel_regret_mean": float(result.duel[:, -1].mean()), "runs": int(runs)}


def rank(summaries: list[dict]) -> list[dict]:
    """Summaries sorted by mean final regret (lowest first), with a 1-based ``rank``."""
    ordered = sorted(summaries, key=lambda s: (s["regret_mean"], s["algo"]))
    return [{"rank": i + 1, **s} for i, s in enumerate(ordered)]


# --------------------------------------------------------------------------------------------- sweeps
SWEEPS = ("alpha", "reward-gap", "pref-gap")
DEFAULT_SWEEP_VALUES = {"alpha": tuple(round(0.02 * i, 2) for i in range(51)), "reward-gap": REWARD_GAPS,
                        "pref-gap": PREFERENCE_GAPS}


def sweep_instance(kind: str, value: float, base: Instance) -> Instance:
    """The instance at one sweep value: the base instance's matrix with μ_k = 0.9 − k·gap (reward gap,
    arms 0-based), the base instance's means with the linear preference-gap matrix (pref gap), or the base
    itself. Arm names carry over.

    Both gap families make arm 0 the best arm, so the base instance must have it first (InputError otherwise).
    """
    from dataclasses import replace

    where = base.files[0] if base.files else base.name
    if kind == "reward-gap":
        if base.best != 0:
            raise InputError(f"{where}: a reward-gap sweep sets mu_0 > mu_1 > ..., so arm 0 must be the Condorcet "
                             f"winner of the base instance's preference matrix, but {base.label(base.best)} is; "
                             "reorder the arms so the best comes first")
        return replace(reward_gap_instance(value, n_arms=base.n_arms, preference=base.preference), names=base.names)
    if kind == "pref-gap":
        top = int(np.argmax(base.means))
        if base.means[0] < base.means[top] - TOL:
            raise InputError(f"{where}: a pref-gap sweep makes arm 0 the Condorcet winner, so arm 0 must have the "
                             f"largest mean of the base instance, but {base.label(top)} has "
                             f"({float(base.means[top])!r} > {float(base.means[0])!r}); reorder the arms so the best "
                             "comes first")
        return replace(preference_gap_instance(value, means=base.means), names=base.names)
    return base


def sweep_point(kind: str, value: float, base: Instance, algos: Sequence[str], horizon: int, runs: int, *,
                alpha: float = 0.5, seed: int = 0, f_coef: float = DEFAULT_F_COEF,
                on_batch: Callable[[int], None] | None = None, batch: int | None = None) -> list[dict]:
    """Final regrets of each algorithm at one sweep value (one row per algorithm)."""
    if kind not in SWEEPS:
        raise UsageError(f"unknown sweep {kind!r}; expected one of {', '.join(SWEEPS)}")
    a = float(value) if kind == "alpha" else alpha
    inst = sweep_instance(kind, value, base)
    from paperkit.methods.bandit.bounds import lower_bound

    lb = lower_bound(inst, a)
    rows = []
    for algo in algos:
        res = simulate(inst, algo, horizon, runs, alpha=a, seed=seed, f_coef=f_coef, checkpoints=[horizon],
                       on_batch=on_batch, batch=batch)
        s = final_summary(res, a)
        rows.append({"sweep": kind, "value": float(value), "algo": algo, "alpha": a, "T": int(horizon),
                     "regret_mean": s["regret_mean"], "regret_std": s["regret_std"], "regret_sem": s["regret_sem"],
                     "reward_regret_mean": s["reward_regret_mean"], "duel_regret_mean": s["duel_regret_mean"],
                     "lower_bound": lb.at(horizon), "runs": s["runs"]})
    return rows
