"""Check 1 of the spec: Σ_s b(s)V*_MDP(s) bounds the POMDP's belief value (≥ for reward, ≤ for cost)."""

import numpy as np
import pytest

from paperkit.methods.pigdreamer.bound import TigerCPOMDP, mdp_values, pomdp_values, tabular_bound


def test_both_inequalities_hold_on_every_belief():
    out = tabular_bound(TigerCPOMDP(), step=0.01)
    assert len(out["belief_right"]) == 101
    assert out["reward_holds"] and out["cost_holds"]
    r_gap = np.array(out["reward_asym"]) - np.array(out["reward_pomdp"])
    c_gap = np.array(out["cost_pomdp"]) - np.array(out["cost_asym"])
    assert r_gap.min() >= -1e-6 and c_gap.min() >= -1e-6
    assert r_gap[50] > 10 and c_gap[50] > 0.01        # strict where the belief is uncertain: the bound is not vacuous
    assert abs(r_gap[0]) < 1e-6 or r_gap[0] >= 0      # known state: no gap forced


def test_mdp_values_match_the_closed_form():
    """Known tiger: always open the treasure door, so V = 10/(1 − γ). Min cost: in state 0 listening forever
    (0.05/(1 − γ) = 0.5) beats restarting; in state 1 open the treasure door, C1 = 0.2 + γ(C0 + C1)/2."""
    m = TigerCPOMDP(gamma=0.9, right_cost=0.2)
    v_r, v_c = mdp_values(m)
    np.testing.assert_allclose(v_r, [100.0, 100.0], atol=1e-8)
    c0 = 0.05 / (1 - 0.9)
    c1 = (0.2 + 0.9 * c0 / 2) / (1 - 0.9 / 2)
    np.testing.assert_allclose(v_c, [c0, c1], atol=1e-8)


def test_pomdp_values_satisfy_bellman_at_certainty_and_are_symmetric():
    m = TigerCPOMDP()
    grid, v_r, v_c = pomdp_values(m, 0.01)
    np.testing.assert_allclose(v_r, v_r[::-1], atol=1e-6)        # left/right symmetric problem
    assert v_r[0] == pytest.approx(10 + m.gamma * v_r[50], abs=1e-6)   # open the treasure door, then b = 0.5
    assert v_r.argmin() == 50                                  # least value at the least certain belief


@pytest.mark.parametrize("accuracy,gamma", [(0.6, 0.9), (0.95, 0.8), (0.85, 0.99)])
def test_bound_holds_across_models(accuracy, gamma):
    out = tabular_bound(TigerCPOMDP(accuracy=accuracy, gamma=gamma), step=0.02)
    assert out["reward_holds"] and out["cost_holds"]
