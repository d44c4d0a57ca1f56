"""SafeDreamer's augmented Lagrangian (spec, Method 5), shared by every Dreamer variant and PPO-Lagrangian.

g = mean(cost return estimate) − b. The actor's penalty is ψ(λ, c, g) = λg + (c/2)g² when λ + cg > 0, else
−λ²/(2c); its slope in g, max(0, λ + cg), weights the cost advantage. Then λ ← max(0, λ + cg) and
c ← min(1, c·(1 + growth)). Every update is logged (λ, c, the estimate, the gap, the penalty).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class AugmentedLagrangian:
    cost_limit: float
    lam: float = 1e-6            # SafeDreamer's λ₀
    c: float = 5e-9              # SafeDreamer's c₀
    growth: float = 1e-5

    def update(self, cost_estimate: float) -> dict:
        """One update from the current cost-return estimate: the penalty and its slope (computed with the
        multipliers before the update), then the new λ and c."""
        gap = float(cost_estimate) - self.cost_limit
        lam, c = self.lam, self.c
        if lam + c * gap > 0:
            penalty, weight = lam * gap + 0.5 * c * gap * gap, lam + c * gap
        else:
            penalty, weight = -lam * lam / (2 * c), 0.0
        self.lam = max(0.0, lam + c * gap)
        self.c = min(1.0, c * (1.0 + self.growth))
        return {"lambda": lam, "c": c, "cost_estimate": float(cost_estimate), "gap": gap, "penalty": penalty,
                "penalty_weight": weight}

    def state(self) -> dict:
        return {"cost_limit": self.cost_limit, "lam": self.lam, "c": self.c, "growth": self.growth}
