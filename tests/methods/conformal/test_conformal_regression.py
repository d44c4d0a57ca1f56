"""Estimator, nesting of the sets, CV+ against MAPIE, baselines against direct formulas."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LinearRegression, Ridge

from paperkit.core.errors import InputError, UsageError
from paperkit.methods.conformal import (
    CrossConformalRegressor,
    MinNormOLS,
    alpha_prime,
    cross_conformal_sets,
    jackknife_plus,
    split_conformal,
)
from paperkit.methods.conformal.baselines import kth_smallest, lower_rank, upper_rank


def _data(n=200, T=150, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n + T, p))
    y = X @ rng.standard_normal(p) + rng.standard_normal(n + T) * (1 + 0.5 * np.abs(X[:, 0]))
    return X[:n], y[:n], X[n:], y[n:]


def test_nesting_per_test_point():
    # Checked: e/u/eu within mod; eu within e; Vovk = mod at alpha'; improved Vovk within Vovk.
    for seed in range(3):
        X, y, Xt, _ = _data(n=100 + 5 * seed, seed=seed)
        est = CrossConformalRegressor(Ridge(), n_folds=5, alpha=0.1, random_state=seed).fit(X, y)
        mu, scale = est.fold_predictions(Xt)
        u = est.draw_u(len(Xt))
        fs = est.fold_scores_
        sets = cross_conformal_sets(mu, scale, fs, ["mod", "e-mod", "u-mod", "eu-mod", "cross", "e-cross",
                                                     "u-cross", "eu-cross"], 0.1, u)
        for m in ("e-mod", "u-mod", "eu-mod"):
            assert sets[m].subset_of(sets["mod"]).all(), m
        assert sets["eu-mod"].subset_of(sets["e-mod"]).all()
        for m in ("e-cross", "u-cross", "eu-cross"):
            assert sets[m].subset_of(sets["cross"]).all(), m
        # e and eu are never larger than mod (lengths)
        assert np.all(sets["e-mod"].length <= sets["mod"].length)
        if fs.n % 5 == 0:
            a_prime = alpha_prime(0.1, fs.n, 5)
            mod_at = cross_conformal_sets(mu, scale, fs, ["mod"], 0.1, levels={"mod": a_prime})["mod"]
            assert mod_at.to_lists() == sets["cross"].to_lists()


def test_nesting_check_can_fail():
    # mod is not inside e-mod in general: the subset test really looks.
    X, y, Xt, _ = _data(seed=4)
    est = CrossConformalRegressor(Ridge(), n_folds=5, random_state=4).fit(X, y)
    sets = est.predict_sets(Xt, ["mod", "e-mod"])
    assert not sets["mod"].subset_of(sets["e-mod"]).all()


def test_cvplus_equals_mapie_plus_on_the_same_folds():
    # Checked: same folds and model -> MAPIE's "plus" interval to 1e-8; CV+ holds Vovk's set.
    mapie = pytest.importorskip("mapie")
    from mapie.regression import CrossConformalRegressor as MapieCCR
    from sklearn.model_selection import PredefinedSplit

    del mapie
    X, y, Xt, _ = _data(n=200, T=120)
    ours = CrossConformalRegressor(LinearRegression(), n_folds=5, alpha=0.1, random_state=3).fit(X, y)
    test_fold = np.empty(len(y), dtype=int)
    for k, idx in enumerate(ours.folds_):
        test_fold[idx] = k
    theirs = MapieCCR(LinearRegression(), confidence_level=0.9, method="plus", cv=PredefinedSplit(test_fold))
    theirs.fit_conformalize(X, y)
    _, bounds = theirs.predict_interval(Xt)
    sets = ours.predict_sets(Xt, ["cvplus", "cross"])
    lo, hi = sets["cvplus"].hull()
    assert np.allclose(lo, bounds[:, 0, 0], rtol=0, atol=1e-8)
    assert np.allclose(hi, bounds[:, 1, 0], rtol=0, atol=1e-8)
    assert sets["cross"].subset_of(sets["cvplus"]).all()


def test_cvplus_and_jackknife_plus_by_brute_force():
    X, y, Xt, _ = _data(n=40, T=5, seed=2)
    jp = jackknife_plus(LinearRegression(), X, y, Xt, 0.1)
    lows, highs = [], []
    for i in range(40):
        keep = np.arange(40) != i
        m = LinearRegression().fit(X[keep], y[keep])
        r = abs(y[i] - m.predict(X[i:i + 1])[0])
        lows.append(m.predict(Xt) - r)
        highs.append(m.predict(Xt) + r)
    lows, highs = np.sort(np.array(lows), axis=0), np.sort(np.array(highs), axis=0)
    assert np.allclose(jp.lower, lows[int(np.floor(0.1 * 41)) - 1])
    assert np.allclose(jp.upper, highs[int(np.ceil(0.9 * 41)) - 1])


def test_ranks_and_quantiles():
    assert upper_rank(0.1, 99) == 90  # (1 - 0.1) * 100 = 90.00000000000001 in floating point
    assert lower_rank(0.1, 99) == 10
    assert upper_rank(0.1, 200) == 181
    v = np.array([[3.0, 1.0, 2.0]])
    assert kth_smallest(v, 0)[0] == -np.inf and kth_smallest(v, 4)[0] == np.inf and kth_smallest(v, 2)[0] == 2.0


def test_split_conformal_quantile():
    X, y, Xt, _ = _data(n=100, T=3)
    s1, s2 = split_conformal(LinearRegression(), X, y, Xt, [0.1, 0.2], np.random.default_rng(0))
    assert np.all(s1.length >= s2.length)
    # 50 calibration scores: the 46th smallest at alpha = 0.1
    perm = np.random.default_rng(0).permutation(100)
    m = LinearRegression().fit(X[perm[:50]], y[perm[:50]])
    q = np.sort(np.abs(y[perm[50:]] - m.predict(X[perm[50:]])))[45]
    assert np.allclose(s1.upper - s1.lower, 2 * q)


def test_estimator_api_and_reproducibility():
    X, y, Xt, yt = _data()
    a = CrossConformalRegressor(Ridge(), n_folds=4, method="eu-mod", random_state=7).fit(X, y)
    b = clone(a).fit(X, y)
    assert a.get_params()["n_folds"] == 4
    assert np.array_equal(a.predict_interval(Xt), b.predict_interval(Xt))
    assert a.predict(Xt).shape == (len(Xt),)
    p = a.fold_pvalues(Xt, yt)
    assert p.shape == (len(Xt), 4) and np.all((p > 0) & (p <= 1))
    c = CrossConformalRegressor(Ridge(), n_folds=4, method="eu-mod", random_state=8).fit(X, y)
    assert not np.array_equal(a.predict_interval(Xt), c.predict_interval(Xt))


def test_normalized_scores_adapt_to_heteroscedastic_noise():
    X, y, Xt, yt = _data(n=600, T=600, seed=9)
    from sklearn.ensemble import RandomForestRegressor

    sigma = RandomForestRegressor(n_estimators=20, min_samples_leaf=10, random_state=0)
    est = CrossConformalRegressor(LinearRegression(), score="normalized", sigma_estimator=sigma, method="mod",
                                  random_state=0).fit(X, y)
    s = est.predict_set(Xt)
    assert s.contains(yt).mean() >= 0.85
    wide = np.abs(Xt[:, 0]) > 1.0
    assert np.median(s.length[wide]) > np.median(s.length[~wide])


def test_min_norm_ols_interpolates_when_p_exceeds_n():
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((20, 50)), rng.standard_normal(20)
    m = MinNormOLS().fit(X, y)
    assert np.allclose(m.predict(X), y)
    assert np.allclose(m.coef_, np.linalg.lstsq(X, y, rcond=None)[0])


def test_bad_inputs():
    X, y, _, _ = _data(n=20)
    with pytest.raises(InputError, match="cannot be split into 30 folds"):
        CrossConformalRegressor(n_folds=30).fit(X, y)
    y_bad = y.copy()
    y_bad[3] = np.nan
    with pytest.raises(InputError, match="NaN"):
        CrossConformalRegressor().fit(X, y_bad)
    with pytest.raises(UsageError, match="alpha"):
        CrossConformalRegressor(alpha=0.7).fit(X, y)
    with pytest.raises(UsageError, match="unknown method"):
        CrossConformalRegressor(method="split").fit(X, y)


def test_alpha_for_coverage_inverts_every_guarantee():
    from paperkit.methods.conformal.combiners import METHODS, alpha_for_coverage, guarantee

    for m in METHODS:
        for cov in (0.5, 0.8, 0.9, 0.95):
            a = alpha_for_coverage(m, cov, 200, 5)
            assert 0 < a <= 0.5 and guarantee(m, a, 200, 5) == pytest.approx(cov, abs=1e-10), (m, cov)
    with pytest.raises(UsageError, match="out of reach"):
        alpha_for_coverage("cross", 0.99, 20, 10)
