"""Check 1 of the spec (Theorem 3.3 in the tabular case) and check 2 (partial observability is real).

Tabular bound: on a 2-state tiger-style CPOMDP with a cost signal, the POMDP is solved by value iteration
on a belief grid (linear interpolation between grid points) and the underlying MDP exactly. For every
belief the state-value average Σ_s b(s) V*_MDP(s) bounds the belief value: from above for reward (≥), and
from below for the minimal expected cost (≤). Critics that see the state (V_asym) therefore never
underestimate reward nor overestimate safety the way a belief-only critic can.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LISTEN, OPEN_LEFT, OPEN_RIGHT = 0, 1, 2


@dataclass(frozen=True)
class TigerCPOMDP:
    """States 0 = tiger left, 1 = tiger right. Listening hears the tiger's side with ``accuracy``; opening a
    door ends the round (state resampled uniformly, uninformative observation). Reward: −1 to listen, +10 for
    the treasure door, −100 for the tiger door. Cost: 1 for the tiger door, ``listen_cost`` per listen, and
    ``right_cost`` per step in state 1 (an unavoidable hazard, so the MDP's cost is not zero)."""

    accuracy: float = 0.85
    gamma: float = 0.95
    listen_cost: float = 0.05
    right_cost: float = 0.1

    def tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """R[s, a], C[s, a], P[a, s, s'], O[a, s', o] (observation 0 = hear left, 1 = hear right)."""
        reward = np.array([[-1.0, -100.0, 10.0], [-1.0, 10.0, -100.0]])
        cost = np.array([[self.listen_cost, 1.0, 0.0], [self.listen_cost, 0.0, 1.0]]) + np.array([[0.0], [self.right_cost]])
        trans = np.stack([np.eye(2), np.full((2, 2), 0.5), np.full((2, 2), 0.5)])
        acc = self.accuracy
        obs = np.stack([np.array([[acc, 1 - acc], [1 - acc, acc]]), np.full((2, 2), 0.5), np.full((2, 2), 0.5)])
        return reward, cost, trans, obs


def mdp_values(model: TigerCPOMDP, tol: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """Exact optimal state values of the fully observable MDP: max reward and min cost (value iteration to
    a fixed point; the 2-state system converges geometrically)."""
    reward, cost, trans, _ = model.tables()
    v_r, v_c = np.zeros(2), np.zeros(2)
    while True:
        new_r = (reward + model.gamma * np.einsum("ast,t->sa", trans, v_r)).max(1)
        new_c = (cost + model.gamma * np.einsum("ast,t->sa", trans, v_c)).min(1)
        if max(np.abs(new_r - v_r).max(), np.abs(new_c - v_c).max()) < tol:
            return new_r, new_c
        v_r, v_c = new_r, new_c


def pomdp_values(model: TigerCPOMDP, step: float = 0.01, tol: float = 1e-10) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Belief-grid value iteration. Returns the grid of b = P(tiger right) and the max-reward and min-cost
    belief values on it (the value at an updated belief is interpolated linearly between grid points)."""
    reward, cost, trans, obs = model.tables()
    grid = np.linspace(0.0, 1.0, int(round(1.0 / step)) + 1)
    belief = np.stack([1 - grid, grid], 1)                              # (G, 2)
    pred = np.einsum("gs,ast->agt", belief, trans)                      # (A, G, 2) before the observation
    joint = np.einsum("agt,ato->agot", pred, obs)                       # P(s', o | b, a)
    p_obs = joint.sum(-1)                                               # (A, G, O)
    post = np.where(p_obs > 0, joint[..., 1] / np.maximum(p_obs, 1e-300), 0.0)   # P(right | b, a, o)
    exp_r, exp_c = belief @ reward, belief @ cost                       # (G, A)
    v_r, v_c = np.zeros(grid.size), np.zeros(grid.size)
    while True:
        cont_r = np.einsum("ago,ago->ga", p_obs, np.interp(post, grid, v_r))
        cont_c = np.einsum("ago,ago->ga", p_obs, np.interp(post, grid, v_c))
        new_r = (exp_r + model.gamma * cont_r).max(1)
        new_c = (exp_c + model.gamma * cont_c).min(1)
        if max(np.abs(new_r - v_r).max(), np.abs(new_c - v_c).max()) < tol:
            return grid, new_r, new_c
        v_r, v_c = new_r, new_c


def tabular_bound(model: TigerCPOMDP | None = None, step: float = 0.01) -> dict:
    """Check 1: both inequalities on every grid belief, with the largest violation of each."""
    model = model or TigerCPOMDP()
    mdp_r, mdp_c = mdp_values(model)
    grid, pomdp_r, pomdp_c = pomdp_values(model, step)
    belief = np.stack([1 - grid, grid], 1)
    asym_r, asym_c = belief @ mdp_r, belief @ mdp_c
    viol_r = float((pomdp_r - asym_r).max())          # ≤ 1e-6 when Σ b V_MDP ≥ V_POMDP everywhere
    viol_c = float((asym_c - pomdp_c).max())          # ≤ 1e-6 when Σ b C_MDP ≤ C_POMDP everywhere
    return {"model": {"accuracy": model.accuracy, "gamma": model.gamma, "listen_cost": model.listen_cost,
                      "right_cost": model.right_cost, "belief_step": step},
            "mdp_reward": mdp_r.tolist(), "mdp_cost": mdp_c.tolist(), "belief_right": grid.tolist(),
            "reward_pomdp": pomdp_r.tolist(), "reward_asym": asym_r.tolist(),
            "cost_pomdp": pomdp_c.tolist(), "cost_asym": asym_c.tolist(),
            "reward_max_violation": viol_r, "cost_max_violation": viol_c,
            "reward_holds": viol_r <= 1e-6, "cost_holds": viol_c <= 1e-6}


def observability_check(core: object, n_transitions: int = 5000, seed: int = 0) -> dict:
    """Check 2 on random actions: is cost a function of (privileged vector, action), and what share of the
    (observation, action) groups holding a cost event also hold a cost-free one?"""
    rng = np.random.default_rng(seed)
    batch = core.reset(np.arange(core.n) + seed * 1_000_003)
    by_priv: dict[tuple, set] = {}
    by_obs: dict[tuple, set] = {}
    seen = 0
    while seen < n_transitions:
        actions = rng.integers(0, core.n_actions, core.n)
        nxt = core.step(actions)
        for i in np.flatnonzero(~nxt.is_first):
            a, c = int(actions[i]), float(nxt.cost[i])
            by_priv.setdefault((batch.privileged[i].tobytes(), a), set()).add(c)
            by_obs.setdefault((batch.obs[i].tobytes(), a), set()).add(c)
            seen += 1
        batch = nxt
    risky = [costs for costs in by_obs.values() if any(c > 0 for c in costs)]
    ambiguous = sum(any(c == 0 for c in costs) for costs in risky)
    return {"transitions": seen, "cost_deterministic_given_privileged": all(len(v) == 1 for v in by_priv.values()),
            "obs_action_groups_with_cost": len(risky), "ambiguous_groups": ambiguous,
            "ambiguous_share": ambiguous / max(len(risky), 1)}
