"""PIGDreamer: privileged-information guided world models for safe partially observable RL (Huang et al.,
ICML 2025): HazardNav-PO / PointGoal-PO, the tabular bound, the DreamerV3 RSSMs with the oracle posterior and
L_align, Twisted Imagination, SafeDreamer's augmented Lagrangian, and the ablations/baselines."""

from paperkit.methods.pigdreamer.bound import TigerCPOMDP, observability_check, tabular_bound
from paperkit.methods.pigdreamer.envs import (
           CoreEnv,
           HazardNavCore,
           PointGoalCore,
           SafetyGymnasiumAdapter,
           register_envs,
)
from paperkit.methods.pigdreamer.lagrangian import AugmentedLagrangian

__all__ = ["AugmentedLagrangian", "CoreEnv", "HazardNavCore", "PointGoalCore", "SafetyGymnasiumAdapter", "TigerCPOMDP",
           "observability_check", "register_envs", "tabular_bound"]
