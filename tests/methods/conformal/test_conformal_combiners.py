"""Combiners: definitions against brute force, validity on i.i.d. uniform p-values, levels and bounds."""

import numpy as np
import pytest

from paperkit.core.errors import UsageError
from paperkit.methods.conformal import alpha_prime, combine, e_combine, guarantee, method_level, parse_methods
from paperkit.methods.conformal.combiners import in_set, vovk_from_pvalues


def test_combiners_match_their_definitions():
    rng = np.random.default_rng(1)
    p = rng.random((50, 7))
    u = rng.random(50)
    for i in range(50):
        row = p[i]
        e_ref = min(sum(row[:j]) / j for j in range(1, 8))
        assert combine(p, "mean")[i] == pytest.approx(row.mean(), abs=1e-15)
        assert e_combine(p)[i] == pytest.approx(e_ref, abs=1e-15)
        assert combine(p, "u", u)[i] == pytest.approx(row.mean() / (2 - u[i]), abs=1e-15)
        assert combine(p, "eu", u)[i] == pytest.approx(min(row[0] / (2 - u[i]), e_ref), abs=1e-15)
        assert combine(p, "min")[i] == row.min()
    # e never exceeds the mean (its j = K term); eu never exceeds e
    assert np.all(e_combine(p) <= combine(p, "mean") + 1e-15)
    assert np.all(combine(p, "eu", u) <= e_combine(p))


@pytest.mark.parametrize("name", ["mean", "e", "u", "eu"])
def test_combiner_validity_on_iid_uniform_pvalues(name):
    # Checked: K = 5 i.i.d. uniform p-values, 400k draws: P(2 F(p) <= t) <= t + 0.003.
    rng = np.random.default_rng(20250)
    p = rng.random((400_000, 5))
    u = rng.random(400_000)
    value = 2 * combine(p, name, u)
    for t in (0.05, 0.1, 0.2):
        assert np.mean(value <= t) <= t + 0.003, (name, t, np.mean(value <= t))


def test_combiner_validity_check_can_fail():
    # The same check rejects an invalid combiner (twice the minimum without Bonferroni).
    rng = np.random.default_rng(3)
    value = 2 * combine(rng.random((100_000, 5)), "min")
    assert np.mean(value <= 0.1) > 0.1 + 0.003


def test_vovk_equals_mean_at_alpha_prime_for_equal_folds():
    # p_CC > alpha  <=>  mean_k p_k > alpha'  (n = mK): check on every possible count vector sum.
    K, m, alpha = 5, 20, 0.1
    n = K * m
    rng = np.random.default_rng(4)
    counts = rng.integers(0, m + 1, size=(20_000, K))
    p = (1 + counts) / (m + 1)
    a_prime = alpha_prime(alpha, n, K)
    assert np.array_equal(in_set(vovk_from_pvalues(p, np.full(K, m)), alpha), in_set(p.mean(axis=1), a_prime))
    assert 1 - 2 * a_prime == pytest.approx(guarantee("cross", alpha, n, K))


def test_vovk_from_pvalues_is_the_pooled_count():
    sizes = np.array([3, 4, 5])
    counts = np.array([[0, 4, 2], [3, 0, 5]])
    p = (1 + counts) / (sizes + 1)
    assert np.allclose(vovk_from_pvalues(p, sizes), (1 + counts.sum(axis=1)) / (sizes.sum() + 1))


def test_levels_and_guarantees():
    assert method_level("mod", 0.1, 100, 5) == 0.1
    assert method_level("e-cross", 0.1, 100, 5) == pytest.approx((0.1 * 101 + 4) / 105)
    assert method_level("bonferroni", 0.1, 100, 5) == pytest.approx(0.02)
    assert method_level("bonferroni-2a", 0.1, 100, 5) == pytest.approx(0.04)
    assert guarantee("eu-mod", 0.1, 100, 5) == pytest.approx(0.8)
    assert guarantee("cross", 0.1, 100, 5) == pytest.approx(0.8 - 2 * 0.9 * 4 / 105)
    assert guarantee("split", 0.1, 100, 5) == pytest.approx(0.9)


def test_ties_at_the_level_are_out():
    # mean p exactly alpha (as a rational) is not in the set even if rounding lands a hair above
    assert not in_set(np.array([0.1 + 1e-17]), 0.1)[0]
    assert in_set(np.array([0.1 + 1e-9]), 0.1)[0]


def test_parse_methods():
    assert parse_methods("mod, e-mod,mod") == ["mod", "e-mod"]
    assert "cvplus" in parse_methods("all")
    with pytest.raises(UsageError, match="unknown method 'foo'"):
        parse_methods("mod,foo")
    with pytest.raises(UsageError, match="unknown combiner"):
        combine(np.ones((2, 3)), "bar")
