"""The exact full-conformal baseline (ridge / OLS residual paths) against brute-force refits on a grid."""

import numpy as np
import pytest

from paperkit.core.errors import UsageError
from paperkit.methods.conformal.combiners import in_set
from paperkit.methods.conformal.full import full_conformal, full_pvalue_bruteforce, linear_spec
from paperkit.methods.conformal.models import MinNormOLS, make_model


@pytest.mark.parametrize("name,params,fit_intercept,n,p", [
    ("ridge", {}, None, 24, 3),                    # StandardScaler + Ridge, the CLI default
    ("ridge", {"alpha": 5.0}, None, 20, 4),
    ("ols", {}, None, 22, 3),
    ("minnorm-ols", {}, False, 18, 5),
    ("minnorm-ols", {}, True, 18, 5),
])
def test_full_conformal_equals_refits_on_a_grid(name, params, fit_intercept, n, p):
    rng = np.random.default_rng([n, p, len(name)])
    X = rng.normal(size=(n, p)) * rng.uniform(0.5, 3.0, p) + rng.normal(size=p)
    y = X @ rng.normal(size=p) + rng.normal(size=n)
    Xt = rng.normal(size=(2, p))
    est = MinNormOLS(fit_intercept=fit_intercept) if fit_intercept is not None else make_model(name, params)
    for alpha in (0.1, 0.3):
        sets = full_conformal(est, X, y, Xt, alpha)
        for t in range(len(Xt)):
            segs = sets.segments(t)
            assert segs, "full conformal sets hold the fitted value here"
            lo, hi = sets.hull()
            span = max(abs(lo[t]), abs(hi[t]))
            ends = np.array([e for s in segs for e in s])
            checked = 0
            for z in np.linspace(-1.5 * span, 1.5 * span, 81):
                if np.min(np.abs(ends - z)) < 1e-7 * span:
                    continue
                brute = bool(in_set(full_pvalue_bruteforce(est, X, y, Xt[t], z), alpha))
                assert brute == any(a <= z <= b for a, b in segs), (z, segs)
                checked += 1
            assert checked > 75


def test_full_conformal_p_value_at_the_set_ends_matches_a_refit():
    # on both sides of each end point the refit's p-value crosses the level
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(30, 2)), rng.normal(size=30)
    est = make_model("ridge", {})
    (a, b), = full_conformal(est, X, y, X[:1], 0.2).segments(0)
    for end, outward in ((a, -1), (b, 1)):
        eps = 1e-6 * max(1.0, abs(end))
        assert in_set(full_pvalue_bruteforce(est, X, y, X[0], end - outward * eps), 0.2)
        assert not in_set(full_pvalue_bruteforce(est, X, y, X[0], end + outward * eps), 0.2)


def test_interpolating_least_squares_gives_the_whole_line():
    # p >= n: every refitted residual is 0, p(z) = 1 for every z
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(8, 12)), rng.normal(size=8)
    sets = full_conformal(MinNormOLS(), X, y, rng.normal(size=(3, 12)), 0.1)
    assert sets.to_lists() == [[(-np.inf, np.inf)]] * 3


def test_full_conformal_needs_a_linear_smoother():
    assert linear_spec(make_model("ridge", {"alpha": 2.0})) == (2.0, True, True)
    assert linear_spec(make_model("ols", {})) == (0.0, True, False)
    with pytest.raises(UsageError, match="linear smoothers"):
        linear_spec(make_model("rf", {}))
    with pytest.raises(UsageError, match="linear smoothers"):
        linear_spec(make_model("lasso", {}))


def test_full_conformal_coverage_on_fresh_draws():
    # marginal coverage >= 1 - alpha: 400 independent (train, test) draws, one test row each
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(400):
        X = rng.normal(size=(21, 2))
        y = X @ np.array([1.0, -2.0]) + rng.standard_t(3, size=21)
        hits += bool(full_conformal(make_model("ols", {}), X[:20], y[:20], X[20:], 0.2).contains(y[20:])[0])
    assert hits / 400 >= 0.8 - 3 * np.sqrt(0.16 / 400)
