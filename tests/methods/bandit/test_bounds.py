"""Lower bound of Theorem 1: a 3-arm case by hand, its ends, and its two caps."""

import math

import numpy as np
import pytest

from paperkit.methods.bandit import kl_bernoulli, lower_bound, make_instance, official16, reward_gap_instance

MU = [0.9, 0.6, 0.5]
NU = [[0.5, 0.7, 0.8], [0.3, 0.5, 0.6], [0.2, 0.4, 0.5]]


def kl(p, q):  # written out again, independently of the library
    return p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))


def test_three_arm_case_by_hand():
    alpha = 0.3
    inst = make_instance(MU, NU)
    lb = lower_bound(inst, alpha)
    # arm 2: reward 0.3 / kl(0.6, 0.9); duel only l = 1 beats it
    r2 = alpha * 0.3 / kl(0.6, 0.9)
    d2 = (1 - alpha) * (0.2 + 0.0) / (2 * kl(0.3, 0.5))
    # arm 3: l = 1 (ν = 0.2) or l = 2 (ν = 0.4, Δ^D_2 = 0.2)
    r3 = alpha * 0.4 / kl(0.5, 0.9)
    d3 = (1 - alpha) * min(0.3 / (2 * kl(0.2, 0.5)), (0.3 + 0.2) / (2 * kl(0.4, 0.5)))
    assert lb.reward_cost[1] == pytest.approx(r2, abs=1e-9)
    assert lb.duel_cost[2] == pytest.approx(d3, abs=1e-9)
    assert lb.constant == pytest.approx(min(r2, d2) + min(r3, d3), abs=1e-9)
    assert lb.no_fusion_constant == pytest.approx(r2 + d2 + r3 + d3, abs=1e-9)
    assert lb.at(1000) == pytest.approx(lb.constant * math.log(1000))


@pytest.mark.parametrize("inst", [make_instance(MU, NU), official16(), reward_gap_instance(0.16)])
def test_zero_at_the_ends_and_below_both_single_feedback_sums(inst):
    assert lower_bound(inst, 0.0).constant == 0.0
    assert lower_bound(inst, 1.0).constant == 0.0
    full_r = lower_bound(inst, 1.0).reward_cost.sum()
    full_d = lower_bound(inst, 0.0).duel_cost.sum()
    for a in np.linspace(0.01, 0.99, 23):
        c = lower_bound(inst, a).constant
        assert 0 < c <= a * full_r + 1e-12
        assert c <= (1 - a) * full_d + 1e-12


def test_kl_boundaries():
    assert kl_bernoulli(0.3, 0.3) == 0.0
    assert kl_bernoulli(0.0, 0.5) == pytest.approx(math.log(2))
    assert kl_bernoulli(1.0, 0.25) == pytest.approx(math.log(4))
    # the official code returns the reversed divergence here; the Bernoulli divergence is infinite
    assert kl_bernoulli(0.4, 1.0) == math.inf and kl_bernoulli(0.4, 0.0) == math.inf
    assert kl_bernoulli(0.2, 0.7) == pytest.approx(kl(0.2, 0.7))
