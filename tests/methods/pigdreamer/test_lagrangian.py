"""Check 3 of the spec: SafeDreamer's augmented Lagrangian, against the update rule written out here."""

import pytest

from paperkit.methods.pigdreamer.lagrangian import AugmentedLagrangian


def test_lambda_strictly_increases_above_the_limit():
    lag = AugmentedLagrangian(cost_limit=2.0)
    lams, cs = [lag.lam], [lag.c]
    for _ in range(100):
        row = lag.update(3.0)                         # limit + 1
        assert row["gap"] == pytest.approx(1.0)
        assert row["penalty"] == pytest.approx(row["lambda"] * 1.0 + 0.5 * row["c"])
        lams.append(lag.lam)
        cs.append(lag.c)
    assert all(b > a for a, b in zip(lams, lams[1:], strict=False))
    assert all(b >= a and b <= 1.0 for a, b in zip(cs, cs[1:], strict=False))


def test_lambda_reaches_zero_below_the_limit_and_the_penalty_is_minus_lambda_sq_over_2c():
    lag = AugmentedLagrangian(cost_limit=2.0, lam=0.5, c=0.05)
    seen_branch = False
    for _ in range(100):
        lam, c = lag.lam, lag.c
        row = lag.update(1.0)                          # limit − 1
        if lam + c * -1.0 <= 0:
            assert row["penalty"] == pytest.approx(-lam * lam / (2 * c))
            assert row["penalty_weight"] == 0.0
            seen_branch = True
        else:
            assert row["penalty"] == pytest.approx(-lam + 0.5 * c)
    assert lag.lam == 0.0 and seen_branch
    assert lag.update(1.0)["penalty"] == 0.0           # λ = 0: −λ²/(2c) = 0


def test_safedreamer_defaults_take_lambda_to_zero_too():
    lag = AugmentedLagrangian(cost_limit=2.0)          # λ₀ = 1e-6, c₀ = 5e-9: 200 updates of gap −1
    for _ in range(400):
        lag.update(1.0)
    assert lag.lam == 0.0


def test_c_grows_geometrically_and_is_capped_at_one():
    lag = AugmentedLagrangian(cost_limit=0.0, lam=0.0, c=0.999, growth=1e-3)
    values = []
    for _ in range(5):
        lag.update(0.0)
        values.append(lag.c)
    assert values[0] == pytest.approx(0.999 * 1.001) and values[0] <= 1.0
    assert values[1:] == [1.0] * 4
