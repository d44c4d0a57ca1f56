"""Sensitivity analysis over the registry's priors: one-at-a-time sweeps, a tornado, Monte Carlo with
P(irreversible), Morris elementary effects and Sobol indices through SALib (its samplers and analysers),
cross-checked on the Ishigami function against the analytic indices and ``scipy.stats.sobol_indices``.

Every design is run as one vectorised simulation (one parameter set per draw).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from paperkit.core.errors import UsageError
from paperkit.methods.disempower.dynamics import compile_model, simulate
from paperkit.methods.disempower.registry import load_registry, set_path, stack
from paperkit.methods.disempower.scenario import Scenario

METRICS = ("hii_final", "hii_min", "theta_crossing", "irreversible", "c_h_final", "c_h_ratio", "ls_final",
           "elite_final")


def prior_paths(sc: Scenario, only: tuple[str, ...] = ()) -> list[tuple[str, tuple[float, float]]]:
    """(path, (lo, hi)) for every scalar entry with a prior; ``only`` restricts to those parameters/paths."""
    reg = load_registry()
    out = []
    for name, (lo, hi) in sc.priors.items():
        for path in reg.parameters[name].paths():
            if not only or name in only or path in only:
                out.append((path, (lo, hi)))
    if only:
        known = {p for p, _ in out} | {p.split(".")[0] for p, _ in out}
        for o in only:
            if o not in known:
                reg.resolve(o)  # unknown path: a usage error naming it
                raise UsageError(f"--params: '{o}' has no prior; give it one in the scenario's priors block")
    return out


# Simulations stepped together (vectorised); each keeps its HII history of horizon/dt + 1 floats.
BATCH = 4096


def run_designs(sc: Scenario, settings_rows: list[dict[str, float]], horizon: float, dt: float, seed: int,
                extend: float, batch: int = BATCH, on_batch: Any = None) -> dict[str, np.ndarray]:
    """Simulate one parameter set per row (path → value on top of the scenario); summaries [rows]."""
    out: dict[str, list] = {}
    for start in range(0, len(settings_rows), batch):
        chunk = settings_rows[start:start + batch]
        values = []
        for row in chunk:
            v = {k: a.copy() for k, a in sc.values.items()}
            for path, x in row.items():
                set_path(v, path, x)
            values.append(v)
        model = compile_model(sc, len(chunk), draws=stack(values))
        res = simulate(model, horizon, dt, seed=seed, record=False, extend=extend)
        for k, a in res.summary.items():
            out.setdefault(k, []).append(a)
        if on_batch is not None:
            on_batch(len(chunk))
    return {k: np.concatenate(v) for k, v in out.items()}


def metric_values(summary: dict[str, np.ndarray], metric: str, horizon: float) -> np.ndarray:
    """A summary metric; a θ-crossing that never happens counts as the horizon (censored)."""
    y = np.asarray(summary[metric], dtype=float)
    if metric == "theta_crossing":
        y = np.where(np.isnan(y), horizon, y)
    return y


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion k/n (95% by default)."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


def problem(paths: list[tuple[str, tuple[float, float]]]) -> dict[str, Any]:
    return {"num_vars": len(paths), "names": [p for p, _ in paths], "bounds": [list(b) for _, b in paths]}


def mc_design(paths, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    lo = np.array([b[0] for _, b in paths])
    hi = np.array([b[1] for _, b in paths])
    return lo + (hi - lo) * rng.random((n, len(paths)))


def morris_design(paths, trajectories: int, seed: int, levels: int = 4) -> np.ndarray:
    from SALib.sample import morris

    return morris.sample(problem(paths), trajectories, num_levels=levels, seed=seed)


def morris_indices(paths, X: np.ndarray, y: np.ndarray, seed: int, levels: int = 4) -> list[dict[str, Any]]:
    from SALib.analyze import morris

    res = morris.analyze(problem(paths), X, y, num_levels=levels, seed=seed, print_to_console=False)
    return [{"param": p, "mu": float(res["mu"][i]), "mu_star": float(res["mu_star"][i]),
             "sigma": float(res["sigma"][i]), "mu_star_conf": float(res["mu_star_conf"][i])}
            for i, (p, _) in enumerate(paths)]


def sobol_design(paths, n: int, seed: int) -> np.ndarray:
    from SALib.sample import sobol

    return sobol.sample(problem(paths), n, calc_second_order=False, scramble=True, seed=seed)


def sobol_indices(paths, y: np.ndarray, seed: int) -> list[dict[str, Any]]:
    from SALib.analyze import sobol

    res = sobol.analyze(problem(paths), y, calc_second_order=False, seed=seed, print_to_console=False)
    return [{"param": p, "S1": float(res["S1"][i]), "S1_conf": float(res["S1_conf"][i]),
             "ST": float(res["ST"][i]), "ST_conf": float(res["ST_conf"][i])} for i, (p, _) in enumerate(paths)]


# ------------------------------------------------------------------------------- Ishigami cross-check
def ishigami(X: np.ndarray, a: float = 7.0, b: float = 0.1) -> np.ndarray:
    return np.sin(X[:, 0]) + a * np.sin(X[:, 1]) ** 2 + b * X[:, 2] ** 4 * np.sin(X[:, 0])


def ishigami_analytic(a: float = 7.0, b: float = 0.1) -> dict[str, np.ndarray]:
    """Closed-form first-order and total Sobol indices of the Ishigami function on [-pi, pi]^3."""
    pi = math.pi
    v1 = 0.5 * (1 + b * pi ** 4 / 5) ** 2
    v2 = a * a / 8
    v13 = b * b * pi ** 8 * (1 / 18 - 1 / 50)
    var = v1 + v2 + v13
    return {"S1": np.array([v1, v2, 0.0]) / var, "ST": np.array([v1 + v13, v2, v13]) / var}


def ishigami_salib(n: int = 4096, seed: int = 0) -> dict[str, np.ndarray]:
    from SALib.analyze import sobol
    from SALib.sample import sobol as sobol_sample

    prob = {"num_vars": 3, "names": ["x1", "x2", "x3"], "bounds": [[-math.pi, math.pi]] * 3}
    X = sobol_sample.sample(prob, n, calc_second_order=False, scramble=True, seed=seed)
    res = sobol.analyze(prob, ishigami(X), calc_second_order=False, seed=seed, print_to_console=False)
    return {"S1": np.asarray(res["S1"]), "ST": np.asarray(res["ST"])}


def ishigami_scipy(n: int = 4096, seed: int = 0) -> dict[str, np.ndarray]:
    from scipy.stats import sobol_indices, uniform

    dists = [uniform(loc=-math.pi, scale=2 * math.pi)] * 3
    res = sobol_indices(func=lambda x: ishigami(x.T)[None, :], n=n, dists=dists, rng=np.random.default_rng(seed))
    return {"S1": np.asarray(res.first_order), "ST": np.asarray(res.total_order)}
