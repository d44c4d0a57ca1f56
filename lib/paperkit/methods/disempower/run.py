"""Orchestration of the disempower commands: settings (the single source of defaults), prepare (read and
validate every input before a run dir exists), execute (stages through ``run.cached``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from paperkit.core.errors import UsageError
from paperkit.core.progress import progress as default_progress
from paperkit.core.resources import check_memory
from paperkit.methods.disempower import sensitivity
from paperkit.methods.disempower.abm import Population, simulate_abm
from paperkit.methods.disempower.dynamics import compile_model, simulate, simulate_rk45, trajectory_rows
from paperkit.methods.disempower.registry import load_registry
from paperkit.methods.disempower.scenario import Scenario, builtin_names, load_scenario, value_source

INTEGRATORS = ("euler", "rk45")
MODES = ("ode", "abm")
SWEEP_METRICS = sensitivity.METRICS


# Euler steps of one simulation (horizon plus the irreversibility run-on) above which a run would take hours
# (about 0.5 ms a step) and gigabytes; the defaults take 320 and the examples at most a few thousand.
MAX_STEPS = 1_000_000
# Peak bytes per step of one recorded trajectory: its arrays, rows and JSON stage (measured about 5 KB).
TRAJECTORY_STEP_BYTES = 8_000


def _check_steps(horizon: int, dt: float, extend: float = 0.0) -> int:
    """The Euler steps of the horizon; UsageError for a step count past MAX_STEPS (counted with the
    ``extend`` years of the irreversibility run-on) or a horizon that is not a whole number of steps."""
    total = (horizon + extend) / dt   # a float: 1e-300 must not make a huge int
    if not total <= MAX_STEPS:
        shown = f"{round(total)}" if total < 1e18 else f"{total:.3g}" if total < float("inf") else "over 1e308"
        raise UsageError(f"--dt {dt:g} means {shown} steps over --horizon {horizon} and --irreversibility-years "
                         f"{extend:g}, over the limit of {MAX_STEPS}; use a larger --dt or a shorter --horizon")
    steps = horizon / dt
    if abs(steps - round(steps)) > 1e-9 * max(1.0, steps):
        raise UsageError(f"--horizon {horizon} is not a whole number of steps of --dt {dt:g}")
    return int(round(steps))


def _check_trajectory_memory(horizon: int, dt: float, extend: float, what: str) -> None:
    steps = _check_steps(horizon, dt, extend)
    check_memory(TRAJECTORY_STEP_BYTES * float(steps + 1), f"{what} of {steps} steps (--horizon {horizon}, --dt {dt:g})")


def _summary_dict(res: Any, i: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in res.summary.items():
        x = float(v[i])
        out[k] = None if np.isnan(x) else (bool(x) if k == "irreversible" else x)
    out["triggered_at"] = {lab: (None if np.isnan(tt) else float(tt))
                           for lab, tt in zip(res.labels, res.trigger_times[i], strict=True)}
    return out


# ---------------------------------------------------------------------------------------------- sim
@dataclass(frozen=True)
class SimSettings:
    scenario: str = "baseline_incremental"
    horizon: int = 50
    dt: float = 0.25
    integrator: str = "euler"
    mode: str = "ode"
    households: int = 20_000
    firms: int = 5_000
    parties: int = 5
    overrides: tuple[str, ...] = ()
    irreversibility_years: float = 30.0
    seed: int = 0

    def population(self) -> Population:
        return Population(households=self.households, firms=self.firms, parties=self.parties)


@dataclass
class SimInputs:
    settings: SimSettings
    scenario: Scenario


@dataclass
class SimResult:
    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    theta: float


def prepare_sim(settings: SimSettings) -> SimInputs:
    _check_trajectory_memory(settings.horizon, settings.dt, settings.irreversibility_years, "a trajectory")
    if settings.mode not in MODES:
        raise UsageError(f"--mode {settings.mode!r}; expected one of {', '.join(MODES)}")
    if settings.mode == "abm":
        if settings.integrator != "euler":
            raise UsageError("--mode abm steps the agents at --dt: use --integrator euler")
        settings.population().check()
    sc = load_scenario(settings.scenario, settings.overrides)
    if settings.integrator == "rk45" and sc.triggered:
        raise UsageError(f"{sc.source}: triggered interventions need --integrator euler (RK45 runs start times only)")
    return SimInputs(settings, sc)


def execute_sim(inputs: SimInputs, run: Any, progress: Any = default_progress) -> SimResult:
    s, sc = inputs.settings, inputs.scenario

    def compute() -> dict[str, Any]:
        model = compile_model(sc, 1)
        if s.mode == "abm":
            res = simulate_abm(model, s.horizon, s.dt, population=s.population(), seed=s.seed,
                               extend=s.irreversibility_years)
        elif s.integrator == "rk45":
            res = simulate_rk45(model, s.horizon, s.dt, extend=s.irreversibility_years)
        else:
            res = simulate(model, s.horizon, s.dt, seed=s.seed, extend=s.irreversibility_years)
        return {"rows": trajectory_rows(res), "summary": _summary_dict(res)}

    with progress(total=1, desc=f"simulate {sc.name}", unit="run") as bar:
        out = run.cached("trajectory", compute, fmt="json")
        bar.update(1)
    summary = {"scenario": sc.name, "source": sc.source, "mode": s.mode, "integrator": s.integrator,
               "horizon": s.horizon, "dt": s.dt, "theta": float(sc.values["theta"])}
    if s.mode == "abm":
        summary.update(households=s.households, firms=s.firms, parties=s.parties, seed=s.seed)
    summary.update(out["summary"])
    return SimResult(rows=out["rows"], summary=summary, theta=float(sc.values["theta"]))


# ------------------------------------------------------------------------------------------ compare
@dataclass(frozen=True)
class CompareSettings:
    scenarios: tuple[str, ...] = ()
    horizon: int = 50
    dt: float = 0.25
    overrides: tuple[str, ...] = ()
    irreversibility_years: float = 30.0
    seed: int = 0


@dataclass
class CompareInputs:
    settings: CompareSettings
    scenarios: list[Scenario]


@dataclass
class CompareResult:
    rows: list[dict[str, Any]]
    curves: dict[str, dict[str, list[float]]]
    theta: float


def prepare_compare(settings: CompareSettings) -> CompareInputs:
    _check_trajectory_memory(settings.horizon, settings.dt, settings.irreversibility_years, "a trajectory")
    specs = settings.scenarios or tuple(builtin_names())
    scs = [load_scenario(sp, settings.overrides) for sp in specs]
    names = [sc.name for sc in scs]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise UsageError(f"two scenarios are named '{dup}'; give each a distinct name")
    return CompareInputs(settings, scs)


def execute_compare(inputs: CompareInputs, run: Any, progress: Any = default_progress) -> CompareResult:
    s = inputs.settings
    rows, curves = [], {}
    for i, sc in enumerate(progress(inputs.scenarios, desc="scenarios", unit="scenario")):
        def compute(sc: Scenario = sc) -> dict[str, Any]:
            res = simulate(compile_model(sc, 1), s.horizon, s.dt, seed=s.seed, extend=s.irreversibility_years)
            return {"summary": _summary_dict(res), "t": res.t.tolist(), "HII": res.traj["HII"][0].tolist(),
                    "C_H": res.traj["C_H"][0].tolist()}

        out = run.cached(f"scenario-{i:02d}", compute, fmt="json")
        summ = {k: v for k, v in out["summary"].items() if k != "triggered_at"}
        rows.append({"scenario": sc.name, **summ})
        curves[sc.name] = {"t": out["t"], "HII": out["HII"], "C_H": out["C_H"]}
    return CompareResult(rows=rows, curves=curves, theta=float(inputs.scenarios[0].values["theta"]))


# -------------------------------------------------------------------------------------------- sweep
@dataclass(frozen=True)
class SweepSettings:
    scenario: str = "baseline_incremental"
    param: str | None = None
    values: tuple[float, ...] | None = None
    mc: int = 0
    morris: int = 0
    sobol: int = 0
    tornado: bool = False
    params: tuple[str, ...] | None = None
    metric: str = "hii_final"
    horizon: int = 50
    dt: float = 0.25
    overrides: tuple[str, ...] = ()
    irreversibility_years: float = 30.0
    seed: int = 0
    max_draws: int = 2_000_000


@dataclass
class SweepInputs:
    settings: SweepSettings
    scenario: Scenario
    mode: str
    paths: list[tuple[str, tuple[float, float]]]
    design: list[dict[str, float]]
    X: np.ndarray | None = None


@dataclass
class SweepResult:
    mode: str
    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    metric_values: list[float] = field(default_factory=list)


def prepare_sweep(settings: SweepSettings) -> SweepInputs:
    s = settings
    steps = _check_steps(s.horizon, s.dt, s.irreversibility_years)
    chosen = [m for m, on in (("oat", s.param is not None or bool(s.values)), ("mc", s.mc > 0),
                              ("morris", s.morris > 0), ("sobol", s.sobol > 0), ("tornado", s.tornado)) if on]
    if len(chosen) != 1:
        raise UsageError("choose exactly one of --param with --values, --mc N, --morris R, --sobol N or --tornado")
    mode = chosen[0]
    if mode == "oat" and (s.param is None or not s.values):
        raise UsageError("--param and --values go together (e.g. --param W.econ.state --values 0,0.2,0.4)")
    if s.metric not in SWEEP_METRICS:
        raise UsageError(f"--metric {s.metric!r}; expected one of {', '.join(SWEEP_METRICS)}")
    sc = load_scenario(s.scenario, s.overrides)
    reg = load_registry()
    paths: list[tuple[str, tuple[float, float]]] = []
    X = None
    if mode in ("mc", "morris", "sobol"):
        paths = sensitivity.prior_paths(sc, tuple(s.params or ()))
        if not paths:
            raise UsageError("no parameter has a prior to sample")
    if mode == "sobol" and s.sobol & (s.sobol - 1):
        raise UsageError(f"--sobol {s.sobol}: use a power of 2 (Sobol sequences balance at 2^k points)")
    only = tuple(s.params or ())
    # the number of simulations, counted before a design is built (the design of --mc 10^12 would not fit)
    n_draws = {"oat": len(s.values or ()), "mc": s.mc, "morris": s.morris * (len(paths) + 1),
               "sobol": s.sobol * (len(paths) + 2),
               "tornado": 1 + 2 * sum(1 for n in sc.priors if not only or n in only)}[mode]
    if n_draws > s.max_draws:
        what = ("the sweep" if mode in ("oat", "tornado") else
                f"--{mode} {getattr(s, mode)}" + (f" with {len(paths)} parameters" if mode != "mc" else ""))
        raise UsageError(f"{what} means {n_draws} simulations, over --max-draws {s.max_draws}; use fewer draws"
                         + (", fewer --params" if mode in ("morris", "sobol", "tornado") else "")
                         + " or raise --max-draws")
    check_memory(8.0 * min(n_draws, sensitivity.BATCH) * (steps + 1),
                 f"{min(n_draws, sensitivity.BATCH)} simulations of {steps} steps stepped together")
    if mode == "oat":
        par, _ = reg.resolve(s.param, source="--param")
        for v in s.values:
            reg.check_value(par, v, s.param, source="--values", error=UsageError)
        design = [{s.param: float(v)} for v in s.values]
    elif mode == "tornado":
        names = [n for n in sc.priors if not only or n in only]
        if only:
            sensitivity.prior_paths(sc, only)
        paths = [(n, sc.priors[n]) for n in names]
        design = [{}] + [{n: b[k]} for n, b in paths for k in (0, 1)]
    else:
        if mode == "mc":
            X = sensitivity.mc_design(paths, s.mc, s.seed)
        elif mode == "morris":
            X = sensitivity.morris_design(paths, s.morris, s.seed)
        else:
            X = sensitivity.sobol_design(paths, s.sobol, s.seed)
        design = [{p: float(x) for (p, _), x in zip(paths, row, strict=True)} for row in X]
    return SweepInputs(settings=s, scenario=sc, mode=mode, paths=paths, design=design, X=X)


def execute_sweep(inputs: SweepInputs, run: Any, progress: Any = default_progress) -> SweepResult:
    s, sc, mode = inputs.settings, inputs.scenario, inputs.mode

    def compute() -> dict[str, np.ndarray]:
        with progress(total=len(inputs.design), desc=f"sweep {mode}", unit="sim") as bar:
            return sensitivity.run_designs(sc, inputs.design, s.horizon, s.dt, s.seed, s.irreversibility_years,
                                           on_batch=bar.update)

    summ = {k: np.asarray(v, dtype=float) for k, v in run.cached("simulations", compute, fmt="npz").items()}
    y = sensitivity.metric_values(summ, s.metric, s.horizon)
    n = len(y)
    k_irr = int(np.sum(summ["irreversible"] > 0.5))
    lo, hi = sensitivity.wilson(k_irr, n)
    summary: dict[str, Any] = {"scenario": sc.name, "mode": mode, "metric": s.metric, "simulations": n,
                               "p_irreversible": k_irr / n, "p_irreversible_ci95": [lo, hi]}
    if mode in ("oat", "mc"):
        rows = []
        for i, d in enumerate(inputs.design):
            r: dict[str, Any] = {"draw": i} if mode == "mc" else {"value": d[s.param]}
            if mode == "mc":
                r.update(d)
            r.update({m: (None if np.isnan(summ[m][i]) else float(summ[m][i])) for m in SWEEP_METRICS})
            rows.append(r)
        if mode == "oat":
            summary["param"] = s.param
        else:
            summary["metric_mean"] = float(y.mean())
            summary["metric_sd"] = float(y.std(ddof=1)) if n > 1 else 0.0
    elif mode == "tornado":
        base = float(y[0])
        rows = [{"param": p, "prior_low": b[0], "prior_high": b[1], "low": float(y[1 + 2 * i]),
                 "high": float(y[2 + 2 * i]), "swing": float(abs(y[2 + 2 * i] - y[1 + 2 * i]))}
                for i, (p, b) in enumerate(inputs.paths)]
        rows.sort(key=lambda r: -r["swing"])
        summary["base"] = base
    elif mode == "morris":
        rows = sensitivity.morris_indices(inputs.paths, inputs.X, y, s.seed)
        rows.sort(key=lambda r: -r["mu_star"])
    else:
        rows = sensitivity.sobol_indices(inputs.paths, y, s.seed)
        rows.sort(key=lambda r: -r["ST"])
    return SweepResult(mode=mode, rows=rows, summary=summary, metric_values=y.tolist())


# ------------------------------------------------------------------------------------------ explain
@dataclass(frozen=True)
class ExplainSettings:
    scenario: str | None = None
    overrides: tuple[str, ...] = ()


@dataclass
class ExplainResult:
    equations: list[dict[str, Any]]
    parameters: list[dict[str, Any]]
    interventions: list[dict[str, Any]]
    scenario: str | None


def prepare_explain(settings: ExplainSettings) -> Scenario | None:
    if settings.scenario is None and not settings.overrides:
        return None
    return load_scenario(settings.scenario, settings.overrides)


def execute_explain(sc: Scenario | None) -> ExplainResult:
    reg = load_registry()
    params = []
    for par in reg.parameters.values():
        for path in par.paths():
            _, index = reg.resolve(path)
            values = sc.values if sc is not None else {par.name: par.default}
            v = values[par.name] if index is None else values[par.name][index]
            params.append({"path": path, "symbol": par.symbol, "value": float(v),
                           "source": value_source(sc, path) if sc is not None else "default",
                           "default": float(par.default if index is None else par.default[index]),
                           "range": list(par.range), "prior": list(sc.priors[par.name]) if sc is not None and
                           par.name in sc.priors else (list(par.prior) if par.prior else None),
                           "claim": par.claim, "section": par.section, "anchor": par.anchor,
                           "description": par.description})
    ivs = []
    if sc is not None:
        for iv in sc.interventions:
            ivs.append({"type": iv.type, "name": iv.label, "family": iv.family, "start": iv.start,
                        "trigger_below": iv.below, "ramp": iv.ramp, "gated": iv.gated,
                        "fields": {k: v.tolist() for k, v in iv.fields.items()}})
    return ExplainResult(equations=list(reg.equations), parameters=params, interventions=ivs,
                         scenario=None if sc is None else sc.name)


def format_explain(res: ExplainResult) -> str:
    lines = ["disempower-sim: our formalisation of Kulveit et al. (ICML 2025); every value is an assumption.", "",
             "Equations (claim):"]
    for eq in res.equations:
        lines.append(f"  [{eq['id']}] (claim {eq['claim']}) {eq['text']}")
        if eq.get("note"):
            lines.append(f"      note: {eq['note']}")
    lines += ["", "Parameters" + (f" of scenario {res.scenario}" if res.scenario else "") + ":"]
    for p in res.parameters:
        prior = f" prior [{p['prior'][0]:g}, {p['prior'][1]:g}]" if p["prior"] else ""
        lines.append(f"  {p['path']:<22} {p['symbol']:<12} = {p['value']:<8g} ({p['source']}) range "
                     f"[{p['range'][0]:g}, {p['range'][1]:g}]{prior}; claim {p['claim']}, sec. {p['section']}: "
                     f"{p['description']}; anchor: {p['anchor']}")
    if res.interventions:
        lines += ["", "Interventions:"]
        for iv in res.interventions:
            when = f"from year {iv['start']:g}" if iv["start"] is not None else f"when monitored HII < {iv['trigger_below']:g}"
            fields = ", ".join(f"{k}={v}" for k, v in iv["fields"].items())
            lines.append(f"  {iv['name']} (family {iv['family']}) {when}, ramp {iv['ramp']:g} y, "
                         f"{'gated by K' if iv['gated'] else 'not gated'}: {fields}")
    return "\n".join(lines) + "\n"
