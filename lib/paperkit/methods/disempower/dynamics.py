"""The coupled-systems ODE (our formalisation of Kulveit et al., ICML 2025; equations in ``mechanisms.yaml``).

Everything is vectorised over parameter sets: a parameter array has shape ``[draws]`` (scalar),
``[draws, 3]`` (per system: econ, culture, state) or ``[draws, 3, 3]`` (W, from row to column). The state
is capability ``c``, AI shares ``a_s``, alignments ``A_s``, response capacity ``K`` and skills ``q_s``.
Integration: Euler at ``dt`` (default 0.25 years), or ``scipy.integrate.solve_ivp`` (RK45) for checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from paperkit.core.errors import UsageError
from paperkit.methods.disempower.registry import N_SYSTEMS, SYSTEMS, broadcast
from paperkit.methods.disempower.scenario import Intervention, Scenario

EPS = 1e-9
GATE_WIDTH = 0.005
ECON, CULTURE, STATE = 0, 1, 2


@dataclass
class Model:
    """A scenario compiled for ``n`` draws: parameter arrays with a leading draw axis."""

    P: dict[str, np.ndarray]
    interventions: list[Intervention] = field(default_factory=list)
    capability_path: str = "logistic"
    monitor_lag: float = 1.0
    monitor_noise: float = 0.02
    monitor_interval: float = 1.0

    @property
    def n(self) -> int:
        return int(self.P["rho"].shape[0])


def compile_model(sc: Scenario, n: int = 1, draws: dict[str, np.ndarray] | None = None) -> Model:
    """``n`` copies of the scenario's parameters, with ``draws`` (arrays [n, ...]) replacing some."""
    P = broadcast(sc.values, n)
    for k, v in (draws or {}).items():
        P[k] = np.asarray(v, dtype=float).reshape(P[k].shape)
    return Model(P=P, interventions=list(sc.interventions), capability_path=sc.capability_path,
                 monitor_lag=sc.monitoring.lag, monitor_noise=sc.monitoring.noise,
                 monitor_interval=sc.monitoring.interval)


# ------------------------------------------------------------------------------------- the equations
def _ces(H: np.ndarray, M: np.ndarray, alpha: np.ndarray, rho: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CES output Y and labour share LS; rho = 0 is the Cobb-Douglas limit (LS = alpha exactly)."""
    cd = np.abs(rho) < 1e-12
    r = np.where(cd, 1.0, rho)
    hw = alpha * H ** r
    mw = (1 - alpha) * M ** r
    den = hw + mw
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        Y = np.where(cd, H ** alpha * M ** (1 - alpha), den ** (1 / r))
        LS = np.where(cd, alpha, hw / den)
    return Y, LS


@dataclass
class Effects:
    """What the interventions change at one instant (arrays over draws)."""

    tau_ai: np.ndarray
    cap_force: np.ndarray  # [n, 3] force of the tightest active cap
    cap: np.ndarray  # [n, 3]
    democracy: np.ndarray
    w_x: np.ndarray
    delegates: np.ndarray
    k_boost: np.ndarray
    mu: np.ndarray
    m: np.ndarray
    W: np.ndarray
    freeze: np.ndarray
    force: np.ndarray  # [n, interventions]


def _gate(K: np.ndarray, k_min: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh((K - k_min) / (2 * GATE_WIDTH)))


def effects(model: Model, t: float, K: np.ndarray, A_state_rel: np.ndarray, t_on: np.ndarray,
            freeze_all: bool = False) -> Effects:
    P, n = model.P, model.n
    tau_ai = np.zeros(n)
    cap = np.ones((n, N_SYSTEMS))
    cap_force = np.zeros((n, N_SYSTEMS))
    democracy, w_x, delegates = P["democracy"].copy(), P["w_x"].copy(), P["delegates"].copy()
    k_boost = np.zeros(n)
    mu, m, W = P["mu"].copy(), P["m"].copy(), P["W"].copy()
    freeze = np.ones(n) if freeze_all else np.zeros(n)
    force = np.zeros((n, len(model.interventions)))
    gate = _gate(K, P["k_min"])
    for i, iv in enumerate(model.interventions):
        on = t_on[:, i]
        started = np.isfinite(on) & (t >= on - 1e-12)
        ramp = np.clip((t - on) / iv.ramp, 0.0, 1.0) if iv.ramp > 0 else np.ones(n)
        u = np.where(started, np.nan_to_num(ramp, nan=0.0), 0.0)
        if iv.gated:
            u = u * gate
        force[:, i] = u
        f = iv.fields
        if iv.type == "ai_cap":
            # caps are enforced by the state: their force follows its alignment (lobbying erodes them)
            uc = (u * np.clip(A_state_rel, 0.0, 1.0))[:, None] * (f["cap"] < 1.0)
            tighter = (f["cap"][None, :] < cap) & (uc > 0)
            cap = np.where(tighter, f["cap"][None, :], cap)
            cap_force = np.maximum(cap_force, uc)
        elif iv.type == "ai_tax":
            tau_ai = tau_ai + u * f["rate"]
        elif iv.type == "democratic_upgrade":
            democracy = np.minimum(1.0, democracy + u * f["democracy"])
            w_x = np.minimum(1.0, w_x + u * f["w_x"])
        elif iv.type == "ai_delegates":
            delegates = np.maximum(delegates, u * f["strength"])
        elif iv.type == "response_boost":
            k_boost = k_boost + u * f["amount"]
        elif iv.type == "alignment_research":
            mu = mu * (1 - u * f["mu_cut"])[:, None]
            m = m * (1 - u * f["m_cut"])[:, None]
            W = W * (1 - u * f["w_damp"])[:, None, None]
        elif iv.type == "capability_freeze":
            freeze = np.maximum(freeze, u)
    return Effects(tau_ai=np.minimum(tau_ai, 1.0), cap_force=cap_force, cap=cap, democracy=democracy, w_x=w_x,
                   delegates=delegates, k_boost=k_boost, mu=mu, m=m, W=W, freeze=freeze, force=force)


def observables(P: dict[str, np.ndarray], c: np.ndarray, a: np.ndarray, A: np.ndarray, q: np.ndarray,
                eff: Effects | None, X0: np.ndarray | None, leverage: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Channels, output and indices at one instant (everything but the derivatives). ``leverage`` ([n, 3]; the
    agent-based mode) replaces the expected voter leverage (1 - a_state)^nu_state and human curation share
    (1 - a_culture)^nu_culture by the shares the agents realised (columns state and culture are read)."""
    h = 1.0 - a
    q0 = np.maximum(1.0 - P["a0"], EPS)
    skill = np.maximum(q, EPS) / q0
    tau_ai = eff.tau_ai if eff is not None else 0.0
    democracy = eff.democracy if eff is not None else P["democracy"]
    delegates = eff.delegates if eff is not None else P["delegates"]
    # economy: CES of effective human labour and machine input (non-AI capital + AI)
    H = np.maximum(h[:, ECON] * skill[:, ECON], EPS)
    M = P["k0"] + P["pi"][:, ECON] * c * a[:, ECON]
    Y, LS = _ces(H, np.maximum(M, EPS), P["alpha"], P["rho"])
    tau = np.minimum(1.0, P["tau_redist"] + tau_ai)
    human_capital = (tau + (1 - tau) * P["own"]) * (1 - LS)
    X = np.empty_like(a)
    X[:, ECON] = LS + human_capital
    if leverage is None:
        X[:, STATE] = democracy * h[:, STATE] ** P["nu_state"]
        X[:, CULTURE] = h[:, CULTURE] ** P["nu_culture"]
    else:
        X[:, STATE] = democracy * leverage[:, STATE]
        X[:, CULTURE] = leverage[:, CULTURE]
    if X0 is not None:
        X = (1 - delegates)[:, None] * X + delegates[:, None] * X0
    RH = LS / np.maximum(LS + P["beta_k"] * (1 - LS), EPS)
    Imp = np.empty_like(a)
    Imp[:, ECON] = LS
    Imp[:, STATE] = RH * h[:, STATE] ** P["gamma"] * skill[:, STATE]
    Imp[:, CULTURE] = h[:, CULTURE] * (1 - P["chi"] * a[:, CULTURE]) * skill[:, CULTURE]
    omega = P["omega"]
    hii = (omega * A).sum(axis=1) / omega.sum(axis=1)
    c_h = X[:, ECON] * Y
    elite = P["own"] * (1 - tau) * (1 - LS) / np.maximum(X[:, ECON], EPS)
    return {"X": X, "I": Imp, "LS": LS, "Y": Y, "C_H": c_h, "HII": hii, "elite": elite, "skill": skill}


def capability(model: Model, tau: np.ndarray) -> np.ndarray:
    """The exogenous capability path at capability-time ``tau`` (in closed form, so no step error):
    logistic c_max / (1 + (c_max/c0 - 1) e^(-g tau)), or linear min(c_max, c0 + g_lin tau)."""
    P = model.P
    if model.capability_path == "logistic":
        return P["c_max"] / (1.0 + (P["c_max"] / P["c0"] - 1.0) * np.exp(-P["c_growth"] * tau))
    return np.minimum(P["c_max"], P["c0"] + P["c_linear"] * tau)


def derivatives(model: Model, t: float, tau, a, A, K, q, X0, A_state0, t_on, freeze_all=False, leverage=None):
    """(dtau, da, dA, dK, dq, observables, effects) at time t for every draw. ``tau`` is the capability
    clock: it runs at speed 1 - freeze, so a capability_freeze stops c where it is."""
    P = model.P
    eff = effects(model, t, K, A[:, STATE] / np.maximum(A_state0, EPS), t_on, freeze_all)
    c = capability(model, tau)
    obs = observables(P, c, a, A, q, eff, X0, leverage)
    obs["c"] = c
    dc = 1.0 - eff.freeze
    # replicator with tax, caps and the skill feedback (log advantage)
    adv = np.log(np.maximum(P["pi"] * c[:, None], EPS)) - np.log(obs["skill"]) - eff.tau_ai[:, None]
    over = np.maximum(0.0, a - eff.cap)
    blocked = ((a >= eff.cap) & (adv > 0)).astype(float) * eff.cap_force
    da = P["lam"] * a * (1 - a) * adv * (1 - blocked) - eff.cap_force * P["cap_enforcement"][:, None] * over
    # alignment: channels, proxy optimisation, spillover from the other systems
    w_x = eff.w_x[:, None]
    target = (w_x * obs["X"] + (1 - w_x) * obs["I"]) * (1 - eff.mu * a * eff.m)
    # misalignment spreads from the other systems in proportion to what is left to lose (keeps A >= 0)
    spill = np.einsum("nj,njs->ns", 1 - A, eff.W) * A
    dA = P["k_align"] * (target - spill - A)
    dK = P["kappa"] * (obs["HII"] + eff.k_boost - K)
    h = 1 - a
    dq = P["zeta_down"][:, None] * np.minimum(0.0, h - q) + P["zeta_up"][:, None] * np.maximum(0.0, h - q)
    return dc, da, dA, dK, dq, obs, eff


def initial_state(model: Model) -> dict[str, np.ndarray]:
    """t = 0: c = c0, a = a0, skills q = h(0), alignment at its fixed point (claim 1: aligned today), K = HII(0)."""
    P, n = model.P, model.n
    c = P["c0"].astype(float).copy()
    a = P["a0"].astype(float).copy()
    q = 1.0 - a
    tau = np.zeros(n)
    obs = observables(P, c, a, np.zeros_like(a), q, None, None)
    X0 = obs["X"]
    w_x = P["w_x"][:, None]
    target = (w_x * X0 + (1 - w_x) * obs["I"]) * (1 - P["mu"] * a * P["m"])
    # the fixed point A = target / (1 + sum_j W_js (1 - A_j)): a contraction while W's columns sum below 1
    A = target.copy()
    for _ in range(1000):
        new = target / (1.0 + np.einsum("nj,njs->ns", 1 - A, P["W"]))
        done = np.max(np.abs(new - A)) < 1e-15
        A = new
        if done:
            break
    omega = P["omega"]
    K = (omega * A).sum(axis=1) / omega.sum(axis=1)
    return {"c": tau, "a": a, "A": A, "K": K, "q": q, "X0": X0, "A_state0": A[:, STATE].copy(), "n": n}


# ---------------------------------------------------------------------------------------- integration
RECORD = ("c", "a", "A", "K", "q", "X", "I", "LS", "Y", "C_H", "HII", "elite", "force")


@dataclass
class Result:
    t: np.ndarray  # [T]
    traj: dict[str, np.ndarray] | None  # name -> [n, T, ...]
    summary: dict[str, np.ndarray]  # name -> [n]
    trigger_times: np.ndarray  # [n, interventions] (nan: never)
    labels: list[str]


def _trigger(model: Model, t: float, step: int, dt: float, hii_hist: np.ndarray, t_on: np.ndarray,
             rng: np.random.Generator | None, next_check: list[float]) -> None:
    """Monitoring (family 1): every interval, the lagged, noisy HII; a trigger fires when it is below its level."""
    trig = [i for i, iv in enumerate(model.interventions) if iv.below is not None]
    if not trig or t + 1e-9 < next_check[0]:
        return
    next_check[0] += model.monitor_interval
    lag_steps = int(round(model.monitor_lag / dt))
    observed = hii_hist[:, max(0, step - lag_steps)].copy()
    if model.monitor_noise > 0:
        if rng is None:
            raise UsageError("a scenario with triggers needs a random generator (the seed)")
        observed = observed + rng.normal(0.0, model.monitor_noise, size=observed.shape)
    for i in trig:
        fire = ~np.isfinite(t_on[:, i]) & (observed < model.interventions[i].below)
        t_on[fire, i] = t


def _step_share(a: np.ndarray, da: np.ndarray, dt: float) -> np.ndarray:
    """An Euler step of the shares in logit coordinates: d logit(a)/dt = da / (a (1 - a)). Exact for a constant
    advantage, so the replicator needs no clipping and dt = 0.25 stays accurate."""
    z = np.log(a) - np.log1p(-a) + dt * da / (a * (1 - a))
    return np.clip(1.0 / (1.0 + np.exp(-z)), EPS, 1 - EPS)


def simulate(model: Model, horizon: float, dt: float = 0.25, *, seed: int | None = 0, record: bool = True,
             extend: float = 30.0) -> Result:
    """Euler integration over ``horizon`` years, then ``extend`` years with capability frozen (the
    irreversibility test). ``record`` keeps trajectories ([draws, steps+1, ...]); summaries always."""
    if not dt > 0:
        raise UsageError(f"dt = {dt!r}; expected a positive step")
    steps = int(round(horizon / dt))
    if steps < 1 or abs(steps * dt - horizon) > 1e-9 * max(1.0, horizon):
        raise UsageError(f"the horizon {horizon:g} is not a whole number of steps of dt = {dt:g}")
    ext_steps = int(round(extend / dt))
    rng = np.random.default_rng(seed) if seed is not None else None
    s = initial_state(model)
    c, a, A, K, q = s["c"], s["a"], s["A"], s["K"], s["q"]
    n, n_iv = model.n, len(model.interventions)
    t_on = np.full((n, n_iv), np.nan)
    for i, iv in enumerate(model.interventions):
        if iv.start is not None:
            t_on[:, i] = iv.start
    hii_hist = np.empty((n, steps + 1))
    traj: dict[str, list] | None = {k: [] for k in RECORD} if record else None
    hii_min = np.full(n, np.inf)
    crossing = np.full(n, np.nan)
    theta = model.P["theta"]
    next_check = [0.0]
    prev_hii = None
    first = None
    for step in range(steps + 1):
        t = step * dt
        dc, da, dA, dK, dq, obs, eff = derivatives(model, t, c, a, A, K, q, s["X0"], s["A_state0"], t_on)
        hii = obs["HII"]
        hii_hist[:, step] = hii
        if first is None:
            first = obs
        hii_min = np.minimum(hii_min, hii)
        crossing = update_crossing(crossing, prev_hii, hii, theta, t, dt)
        prev_hii = hii
        if traj is not None:
            for k, v in (("c", obs["c"]), ("a", a), ("A", A), ("K", K), ("q", q), ("force", eff.force)):
                traj[k].append(v.copy())
            for k in ("X", "I", "LS", "Y", "C_H", "HII", "elite"):
                traj[k].append(obs[k])
        if step == steps:
            break
        _trigger(model, t, step, dt, hii_hist, t_on, rng, next_check)
        # the trigger may switch an intervention on now: recompute with it
        dc, da, dA, dK, dq, obs, eff = derivatives(model, t, c, a, A, K, q, s["X0"], s["A_state0"], t_on)
        c, a, A, K, q = c + dt * dc, _step_share(a, da, dt), A + dt * dA, K + dt * dK, np.clip(q + dt * dq, EPS, 1.0)
    final = obs
    a_final = a.copy()
    # irreversibility: freeze capability at c(T), run on, HII stays below theta
    ext_max = hii.copy()
    for step in range(ext_steps):
        t = horizon + step * dt
        dc, da, dA, dK, dq, _, _ = derivatives(model, t, c, a, A, K, q, s["X0"], s["A_state0"], t_on,
                                               freeze_all=True)
        c, a, A, K, q = c + dt * dc, _step_share(a, da, dt), A + dt * dA, K + dt * dK, np.clip(q + dt * dq, EPS, 1.0)
        ext_max = np.maximum(ext_max, (model.P["omega"] * A).sum(axis=1) / model.P["omega"].sum(axis=1))
    summary = _summarise(first, final, hii_min, crossing, ext_max, theta)
    for j, sname in enumerate(SYSTEMS):
        summary[f"a_{sname}_final"] = a_final[:, j]
    out = {k: np.stack(v, axis=1) for k, v in traj.items()} if traj is not None else None
    return Result(t=np.arange(steps + 1) * dt, traj=out, summary=summary, trigger_times=t_on,
                  labels=[iv.label for iv in model.interventions])


SUMMARY_KEYS = ("hii0", "hii_min", "hii_final", "theta_crossing", "irreversible", "c_h0", "c_h_final",
                "c_h_ratio", "ls_final", "elite_final")


def _summarise(first, final, hii_min, crossing, ext_max, theta) -> dict[str, np.ndarray]:
    irreversible = (final["HII"] < theta) & (ext_max < theta)
    return {"hii0": first["HII"], "hii_min": hii_min, "hii_final": final["HII"], "theta_crossing": crossing,
            "irreversible": irreversible.astype(float), "c_h0": first["C_H"], "c_h_final": final["C_H"],
            "c_h_ratio": final["C_H"] / np.maximum(first["C_H"], EPS), "ls_final": final["LS"],
            "elite_final": final["elite"]}


def simulate_rk45(model: Model, horizon: float, dt_out: float = 0.25, *, extend: float = 30.0, rtol: float = 1e-8,
                  atol: float = 1e-10) -> Result:
    """The same equations through ``scipy.integrate.solve_ivp`` (RK45), reported every ``dt_out`` years,
    for checking the Euler scheme. Start-time interventions only (a trigger needs the monitoring loop)."""
    from scipy.integrate import solve_ivp

    from paperkit.core.errors import ConvergenceError

    if any(iv.below is not None for iv in model.interventions):
        raise UsageError("the RK45 integrator does not run triggered interventions; use --integrator euler")
    s = initial_state(model)
    n = model.n
    t_on = np.full((n, len(model.interventions)), np.nan)
    for i, iv in enumerate(model.interventions):
        t_on[:, i] = iv.start

    def unpack(y):
        y = y.reshape(n, -1)
        return y[:, 0], y[:, 1:4], y[:, 4:7], y[:, 7], y[:, 8:11]

    def solve(t0, t1, y0, t_eval, freeze):
        def f(t, y):
            c, a, A, K, q = unpack(y)
            dc, da, dA, dK, dq, _, _ = derivatives(model, t, c, a, A, K, q, s["X0"], s["A_state0"], t_on, freeze)
            return np.concatenate([dc[:, None], da, dA, dK[:, None], dq], axis=1).ravel()

        sol = solve_ivp(f, (t0, t1), y0, method="RK45", t_eval=t_eval, rtol=rtol, atol=atol)
        if not sol.success:  # pragma: no cover - solve_ivp reports why
            raise ConvergenceError(f"RK45 failed: {sol.message}")
        return sol

    y0 = np.concatenate([s["c"][:, None], s["a"], s["A"], s["K"][:, None], s["q"]], axis=1).ravel()
    steps = int(round(horizon / dt_out))
    sol = solve(0.0, horizon, y0, np.arange(steps + 1) * dt_out, False)
    traj: dict[str, list] = {k: [] for k in RECORD}
    for k in range(len(sol.t)):
        c, a, A, K, q = unpack(sol.y[:, k])
        *_, obs, eff = derivatives(model, sol.t[k], c, a, A, K, q, s["X0"], s["A_state0"], t_on)
        for name, v in (("c", obs["c"]), ("a", a), ("A", A), ("K", K), ("q", q), ("force", eff.force)):
            traj[name].append(v.copy())
        for name in ("X", "I", "LS", "Y", "C_H", "HII", "elite"):
            traj[name].append(obs[name])
    out = {k: np.stack(v, axis=1) for k, v in traj.items()}
    hii, theta = out["HII"], model.P["theta"]
    crossing = np.full(n, np.nan)
    for i in range(n):
        below = np.nonzero(hii[i] < theta[i])[0]
        if below.size:
            j = below[0]
            crossing[i] = 0.0 if j == 0 else sol.t[j - 1] + (hii[i, j - 1] - theta[i]) / (hii[i, j - 1] - hii[i, j]) * dt_out
    ext_max = hii[:, -1].copy()
    if extend > 0:
        ext = solve(horizon, horizon + extend, sol.y[:, -1], None, True)
        for k in range(len(ext.t)):
            _, _, A, _, _ = unpack(ext.y[:, k])
            ext_max = np.maximum(ext_max, (model.P["omega"] * A).sum(axis=1) / model.P["omega"].sum(axis=1))
    first = {k: out[k][:, 0] for k in ("HII", "C_H")}
    final = {k: out[k][:, -1] for k in ("HII", "C_H", "LS", "elite")}
    summary = _summarise(first, final, hii.min(axis=1), crossing, ext_max, theta)
    for j, sname in enumerate(SYSTEMS):
        summary[f"a_{sname}_final"] = out["a"][:, -1, j]
    return Result(t=sol.t, traj=out, summary=summary, trigger_times=t_on, labels=[iv.label for iv in model.interventions])


def trajectory_rows(res: Result, draw: int = 0) -> list[dict[str, Any]]:
    """One draw's trajectory as CSV rows (t, c, a_*, I_*, X_*, A_*, q_*, LS, Y, C_H, HII, K, elite, active)."""
    tr = res.traj
    if tr is None:
        raise ValueError("the run was not recorded")
    rows = []
    for k, t in enumerate(res.t):
        r: dict[str, Any] = {"t": round(float(t), 6), "c": float(tr["c"][draw, k])}
        for name, key in (("a", "a"), ("I", "I"), ("X", "X"), ("A", "A"), ("q", "q")):
            for j, sname in enumerate(SYSTEMS):
                r[f"{name}_{sname}"] = float(tr[key][draw, k, j])
        for key in ("LS", "Y", "C_H", "HII", "K"):
            r[key] = float(tr[key][draw, k])
        r["elite_share"] = float(tr["elite"][draw, k])
        active = [lab for lab, u in zip(res.labels, tr["force"][draw, k], strict=True) if u > 0.5]
        r["active"] = "+".join(active)
        rows.append(r)
    return rows


def update_crossing(crossing: np.ndarray, prev_hii: np.ndarray | None, hii: np.ndarray, theta: float, t: float,
                    dt: float) -> np.ndarray:
    """First time HII falls below θ, per draw, interpolated linearly within the step (NaN: not yet)."""
    if prev_hii is None:
        return np.where(hii < theta, 0.0, crossing)
    newly = np.isnan(crossing) & (hii < theta) & (prev_hii >= theta)
    frac = np.where(newly, (prev_hii - theta) / np.maximum(prev_hii - hii, EPS), 0.0)
    return np.where(newly, t - dt + frac * dt, crossing)
