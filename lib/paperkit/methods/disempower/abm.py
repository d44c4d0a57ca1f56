"""The agent-based mode of disempower-sim: firms, households and parties as numpy arrays, built so that its
mean-field limit is the ODE of ``dynamics`` (our formalisation of Kulveit et al., ICML 2025).

Agents (one scenario, arrays over agents; no per-agent Python objects):

- **firms** ``[3, n_firms]`` (booleans: the unit runs on AI): the producers of each system (companies,
  cultural producers, state agencies). Adoption is stochastic imitation (claim 3): every step each firm
  meets a random firm of its system; a human-run firm that meets an AI-run one copies it with probability
  ``p_up``, an AI-run firm that meets a human-run one reverts with ``p_down``. With the share ``a``, the
  expected new share is ``a + (1 - a) a p_up - a (1 - a) p_down``; the probabilities are chosen so that this
  equals the ODE's Euler step of the replicator (taxes, caps and skills included), so the AI share of a
  large population follows the ODE.
- **households** ``[n_households]`` (their party): every step each household votes and chooses culture.
  Its vote is heard with probability ``(1 - a_state)^nu_state`` (AI staffing of the state dilutes voter
  leverage) and its cultural choice is human-curated with probability ``(1 - a_culture)^nu_culture``
  (claim 2, the explicit channels).
- **parties** ``[n_parties]``: votes become seats by proportional representation; a party responds to
  the share of its voters that was heard, and the state's explicit channel is the democracy level times
  the seat-weighted responsiveness, ``X_state = D sum_p seats_p heard_p``. Its expectation is the ODE's
  ``D (1 - a_state)^nu_state``.

Everything else (the economy's CES output and labour share, the implicit channels, alignment with proxy
gap and spillover, response capacity, skills, interventions, monitoring triggers) is the ODE's equations
driven by the agents' realised shares, integrated with the same Euler step. One ``numpy.random.Generator``
seeded by ``seed`` draws everything, so the same seed gives the same run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperkit.core.errors import UsageError
from paperkit.methods.disempower.dynamics import (
    CULTURE,
    EPS,
    RECORD,
    STATE,
    Model,
    Result,
    _step_share,
    _summarise,
    _trigger,
    derivatives,
    initial_state,
    update_crossing,
)
from paperkit.methods.disempower.registry import N_SYSTEMS, SYSTEMS


@dataclass(frozen=True)
class Population:
    """Sizes of the agent populations (the command's defaults are in ``run.SimSettings``)."""

    households: int
    firms: int  # per system
    parties: int

    def check(self) -> None:
        for name, v, lo in (("households", self.households, 1), ("firms", self.firms, 1),
                            ("parties", self.parties, 1)):
            if int(v) < lo:
                raise UsageError(f"--{name} {v}; expected at least {lo}")
        if self.parties > self.households:
            raise UsageError(f"--parties {self.parties} is more than --households {self.households}")


def imitation_probabilities(a: np.ndarray, a_next: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-meeting switching probabilities whose expected share after one step is ``a_next``:
    E[a'] = a + (1 - a) a p_up - a (1 - a) p_down. Clipped to [0, 1] (only reached in a step far larger than
    the default's)."""
    meet = np.maximum(a * (1.0 - a), EPS)
    p_up = np.clip((a_next - a) / meet, 0.0, 1.0)
    p_down = np.clip((a - a_next) / meet, 0.0, 1.0)
    return p_up, p_down


class Agents:
    """The agent arrays of one scenario run and their stochastic updates."""

    def __init__(self, model: Model, pop: Population, rng: np.random.Generator):
        if model.n != 1:
            raise UsageError("the agent-based mode runs one parameter set at a time")
        self.P, self.pop, self.rng = model.P, pop, rng
        nf = pop.firms
        self.firms = np.zeros((N_SYSTEMS, nf), dtype=bool)
        for s in range(N_SYSTEMS):
            k = int(round(float(model.P["a0"][0, s]) * nf))
            self.firms[s, rng.permutation(nf)[:k]] = True
        self.party = rng.integers(0, pop.parties, size=pop.households).astype(np.int32)
        self.party_votes = np.bincount(self.party, minlength=pop.parties).astype(float)

    def shares(self) -> np.ndarray:
        """The AI share of each system's firms, [1, 3], kept off 0 and 1 for the logit step."""
        return np.clip(self.firms.mean(axis=1), EPS, 1 - EPS)[None, :]

    def vote_and_choose(self, a: np.ndarray) -> np.ndarray:
        """Households vote and choose culture; returns the realised leverage [1, 3] (state and culture columns:
        the parties' seat-weighted heard share, the human-curated share of cultural choices)."""
        P, rng, n = self.P, self.rng, self.pop.households
        h = 1.0 - a[0]
        heard = rng.random(n) < h[STATE] ** float(P["nu_state"][0])
        human_culture = rng.random(n) < h[CULTURE] ** float(P["nu_culture"][0])
        heard_by_party = np.bincount(self.party[heard], minlength=self.pop.parties)
        seats = self.party_votes / n
        responsive = heard_by_party / np.maximum(self.party_votes, 1.0)
        lev = np.zeros((1, N_SYSTEMS))
        lev[0, STATE] = float(np.sum(seats * responsive))
        lev[0, CULTURE] = float(human_culture.mean())
        return lev

    def adopt(self, a: np.ndarray, da: np.ndarray, dt: float) -> None:
        """One step of stochastic imitation whose mean is the ODE's Euler step of the shares."""
        p_up, p_down = imitation_probabilities(a[0], _step_share(a, da, dt)[0])
        nf = self.pop.firms
        partner = self.rng.integers(0, nf, size=(N_SYSTEMS, nf))
        u = self.rng.random((N_SYSTEMS, nf))
        other = np.take_along_axis(self.firms, partner, axis=1)
        up = ~self.firms & other & (u < p_up[:, None])
        down = self.firms & ~other & (u < p_down[:, None])
        self.firms ^= up | down


def simulate_abm(model: Model, horizon: float, dt: float = 0.25, *, population: Population, seed: int = 0,
                 extend: float = 30.0) -> Result:
    """The agent-based run over ``horizon`` years at step ``dt``, then ``extend`` years with capability frozen
    (the irreversibility test), as a ``Result`` with the ODE's fields (``a`` is the agents' realised share)."""
    pop = population
    pop.check()
    if not dt > 0:
        raise UsageError(f"dt = {dt!r}; expected a positive step")
    steps = int(round(horizon / dt))
    if steps < 1 or abs(steps * dt - horizon) > 1e-9 * max(1.0, horizon):
        raise UsageError(f"the horizon {horizon:g} is not a whole number of steps of dt = {dt:g}")
    ext_steps = int(round(extend / dt))
    rng = np.random.default_rng(seed)
    agents = Agents(model, pop, rng)
    s = initial_state(model)
    c, A, K, q = s["c"], s["A"], s["K"], s["q"]
    n_iv = len(model.interventions)
    t_on = np.full((1, n_iv), np.nan)
    for i, iv in enumerate(model.interventions):
        if iv.start is not None:
            t_on[:, i] = iv.start
    hii_hist = np.empty((1, steps + 1))
    traj: dict[str, list] = {k: [] for k in RECORD}
    theta = model.P["theta"]
    omega = model.P["omega"]
    hii_min, crossing, prev_hii, first, next_check = np.full(1, np.inf), np.full(1, np.nan), None, None, [0.0]
    obs = hii = None
    for step in range(steps + 1):
        t = step * dt
        a = agents.shares()
        lev = agents.vote_and_choose(a)
        dc, da, dA, dK, dq, obs, eff = derivatives(model, t, c, a, A, K, q, s["X0"], s["A_state0"], t_on,
                                                   leverage=lev)
        hii = obs["HII"]
        hii_hist[:, step] = hii
        first = obs if first is None else first
        hii_min = np.minimum(hii_min, hii)
        crossing = update_crossing(crossing, prev_hii, hii, theta, t, dt)
        prev_hii = hii
        for k, v in (("c", obs["c"]), ("a", a), ("A", A), ("K", K), ("q", q), ("force", eff.force)):
            traj[k].append(v.copy())
        for k in ("X", "I", "LS", "Y", "C_H", "HII", "elite"):
            traj[k].append(obs[k])
        if step == steps:
            break
        _trigger(model, t, step, dt, hii_hist, t_on, rng, next_check)
        dc, da, dA, dK, dq, obs, eff = derivatives(model, t, c, a, A, K, q, s["X0"], s["A_state0"], t_on,
                                                   leverage=lev)
        agents.adopt(a, da, dt)
        c, A, K, q = c + dt * dc, A + dt * dA, K + dt * dK, np.clip(q + dt * dq, EPS, 1.0)
    final, a_final = obs, agents.shares()
    ext_max = hii.copy()
    for step in range(ext_steps):
        t = horizon + step * dt
        a = agents.shares()
        lev = agents.vote_and_choose(a)
        dc, da, dA, dK, dq, _, _ = derivatives(model, t, c, a, A, K, q, s["X0"], s["A_state0"], t_on,
                                               freeze_all=True, leverage=lev)
        agents.adopt(a, da, dt)
        c, A, K, q = c + dt * dc, A + dt * dA, K + dt * dK, np.clip(q + dt * dq, EPS, 1.0)
        ext_max = np.maximum(ext_max, (omega * A).sum(axis=1) / omega.sum(axis=1))
    summary = _summarise(first, final, hii_min, crossing, ext_max, theta)
    for j, sname in enumerate(SYSTEMS):
        summary[f"a_{sname}_final"] = a_final[:, j]
    out = {k: np.stack(v, axis=1) for k, v in traj.items()}
    return Result(t=np.arange(steps + 1) * dt, traj=out, summary=summary, trigger_times=t_on,
                  labels=[iv.label for iv in model.interventions])
