"""Regret lower bound of DR-MAB (Wang et al., ICML 2025, Theorem 1) and the no-fusion constant.

For a consistent algorithm, liminf R_T / log T ≥ Σ_{k≠1} min{c^R_k, c^D_k} with

* reward cost  c^R_k = α·Δ^R_k / kl(μ_k, μ_1)                                   (DMED / Lai–Robbins),
* dueling cost c^D_k = (1−α)·min_{l: ν_{k,l} < 1/2} (Δ^D_k + Δ^D_l) / (2·kl(ν_{k,l}, 1/2))   (RMED).

Each suboptimal arm is paid for by the cheaper feedback. Without fusion (reward side and dueling side
each learning from their own feedback only), the optimal constant is the sum of the two separate
bounds, Σ c^R_k + Σ c^D_k (a reward-only learner pays nothing for an arm whose mean ties the best).

Conventions: an arm with the same mean as the best arm cannot be told apart by rewards, so its reward
cost is +∞ (for α > 0); 0·(anything) is 0, so at α = 0 every reward cost is 0 and at α = 1 every
dueling cost is 0 — the bound vanishes at both ends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from paperkit.core.validate import check_range
from paperkit.methods.bandit.instances import Instance


def kl_bernoulli(p: float, q: float) -> float:
    """kl(p, q) = p log(p/q) + (1−p) log((1−p)/(1−q)), with 0 log 0 = 0 and +∞ when q ∈ {0, 1} ≠ p."""
    if p == q:
        return 0.0
    if q <= 0.0 or q >= 1.0:
        return math.inf
    if p <= 0.0:
        return -math.log(1.0 - q)
    if p >= 1.0:
        return -math.log(q)
    return p * math.log(p / q) + (1.0 - p) * math.log((1.0 - p) / (1.0 - q))


@dataclass(frozen=True)
class LowerBound:
    """Per-arm terms (index = arm, 0 for the best arm) and the constants in front of log T."""

    alpha: float
    best: int
    reward_cost: np.ndarray     # c^R_k (with the α factor)
    duel_cost: np.ndarray       # c^D_k (with the 1−α factor)
    duel_partner: np.ndarray    # the l attaining the dueling minimum (−1 for the best arm)
    cost: np.ndarray            # min{c^R_k, c^D_k}
    constant: float             # Σ_k cost_k: the fusion lower-bound constant C(α)
    no_fusion_constant: float   # Σ c^R_k + Σ c^D_k

    def at(self, horizon: int) -> float:
        """C(α)·log T: the asymptotic lower bound evaluated at T (a reference line, not a finite-T bound)."""
        return self.constant * math.log(horizon)

    @property
    def no_fusion_cost(self) -> np.ndarray:
        """Per-arm no-fusion terms c^R_k + c^D_k (an infinite c^R_k, a mean tying the best, counts 0)."""
        rc = np.where(np.isfinite(self.reward_cost), self.reward_cost, 0.0)
        return rc + self.duel_cost

    def rows(self, names: tuple[str, ...] | None = None) -> list[dict]:
        """One row per suboptimal arm (0-based ``arm`` and ``duel_partner``, like every index in paperkit; with
        ``names``, also ``name`` and ``duel_partner_name``): both costs, the dueling partner, the cheaper cost,
        and the arm's no-fusion term; the ``cost`` and ``no_fusion_cost`` columns sum to the two constants."""
        out = []
        nf = self.no_fusion_cost
        for k in range(self.cost.size):
            if k == self.best:
                continue
            cheaper = "reward" if self.reward_cost[k] <= self.duel_cost[k] else "duel"
            partner = int(self.duel_partner[k])
            row = {"arm": k, **({"name": names[k]} if names else {}), "reward_cost": float(self.reward_cost[k]),
                   "duel_cost": float(self.duel_cost[k]), "duel_partner": partner,
                   **({"duel_partner_name": names[partner]} if names else {}),
                   "cost": float(self.cost[k]), "cheaper": cheaper, "no_fusion_cost": float(nf[k])}
            out.append(row)
        return out


def lower_bound(instance: Instance, alpha: float) -> LowerBound:
    """The constant C(α) of Theorem 1 and its per-arm terms."""
    check_range("alpha", alpha, 0.0, 1.0)
    mu, nu, best = instance.means, instance.preference, instance.best
    k_arms = instance.n_arms
    d_r = instance.reward_gaps
    d_d = instance.duel_gaps
    rc = np.zeros(k_arms)
    dc = np.zeros(k_arms)
    partner = np.full(k_arms, -1, dtype=np.int64)
    for k in range(k_arms):
        if k == best:
            continue
        if alpha > 0.0:
            kl = kl_bernoulli(mu[k], mu[best])
            rc[k] = math.inf if d_r[k] <= 0.0 else alpha * d_r[k] / kl
        if alpha < 1.0:
            best_val, best_l = math.inf, -1
            for l_arm in range(k_arms):
                if nu[k, l_arm] < 0.5:
                    val = (d_d[k] + d_d[l_arm]) / (2.0 * kl_bernoulli(nu[k, l_arm], 0.5))
                    if val < best_val:
                        best_val, best_l = val, l_arm
            dc[k] = (1.0 - alpha) * best_val
            partner[k] = best_l
        else:
            partner[k] = _rmed_partner(nu, d_d, k)
    cost = np.minimum(rc, dc)
    # a reward-only learner pays nothing for an arm whose mean ties the best one
    no_fusion = float(np.sum(np.where(np.isfinite(rc), rc, 0.0)) + np.sum(dc))
    return LowerBound(alpha=float(alpha), best=best, reward_cost=rc, duel_cost=dc, duel_partner=partner,
                      cost=cost, constant=float(cost.sum()), no_fusion_constant=no_fusion)


def _rmed_partner(nu: np.ndarray, d_d: np.ndarray, k: int) -> int:
    vals = [((d_d[k] + d_d[j]) / (2.0 * kl_bernoulli(nu[k, j], 0.5)), j) for j in range(nu.shape[0]) if nu[k, j] < 0.5]
    return min(vals)[1]
