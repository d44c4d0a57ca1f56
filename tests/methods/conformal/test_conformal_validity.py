"""Coverage and efficiency on the Barber et al. (2021) linear model (nominal coverage over seeds, and interval length), classification."""

import numpy as np
import pytest

from paperkit.methods.conformal import CrossConformalClassifier, guarantee, simulate_dimension, summarize
from paperkit.methods.conformal.classification import class_scores
from paperkit.methods.conformal.simulation import SIM_METHODS, barber_data


@pytest.fixture(scope="module")
def p5_summary():
    rows = simulate_dimension(100, 5, 300, n_folds=5, alpha=0.1, methods=SIM_METHODS, seed=2025)
    return {r["method"]: r for r in summarize(rows, n=100, n_folds=5, alpha=0.1)}


@pytest.mark.slow
def test_validity_barber_p5(p5_summary):
    # Checked: every method >= 0.78 where the bound is 1 - 2 alpha (or more); the methods whose
    # bound is Vovk's (about 0.73) or CV+'s are held to their own bound minus the same slack.
    for m, r in p5_summary.items():
        bound = guarantee(m, 0.1, 100, 5)
        floor = 0.78 if bound >= 0.8 - 1e-12 else bound - 0.02
        assert r["coverage"] >= floor, (m, r["coverage"], floor)
    assert p5_summary["mod"]["coverage"] >= 0.88


@pytest.mark.slow
def test_efficiency_barber_p5(p5_summary):
    # Checked: mean length ratios e-mod/mod < 0.95 and eu-mod/mod < 0.90 (and the improved
    # Vovk variants shrink Vovk's sets).
    mod = p5_summary["mod"]["mean_length"]
    assert p5_summary["e-mod"]["mean_length"] / mod < 0.95
    assert p5_summary["eu-mod"]["mean_length"] / mod < 0.90
    for m in ("e-cross", "u-cross", "eu-cross"):
        assert p5_summary[m]["mean_length"] < p5_summary["cross"]["mean_length"]


def test_barber_data_has_the_stated_signal():
    rng = np.random.default_rng(0)
    X, y = barber_data(20000, 8, rng)
    beta = np.linalg.lstsq(X, y, rcond=None)[0]
    assert np.linalg.norm(beta) == pytest.approx(np.sqrt(10), rel=0.02)
    assert np.var(y - X @ beta) == pytest.approx(1.0, rel=0.05)


def test_simulation_is_reproducible_and_p_seeds_are_independent():
    a = simulate_dimension(40, 3, 4, methods=["mod", "eu-mod", "split"], seed=1)
    b = simulate_dimension(40, 3, 4, methods=["mod", "eu-mod", "split"], seed=1)
    c = simulate_dimension(40, 3, 4, methods=["mod", "eu-mod", "split"], seed=2)
    assert a == b and a != c


def test_classification_sets_cover_and_nest():
    from sklearn.datasets import load_digits
    from sklearn.neighbors import KNeighborsClassifier

    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(y))
    train, test = perm[:1000], perm[1000:]
    for score in ("lac", "aps"):
        est = CrossConformalClassifier(KNeighborsClassifier(10), n_folds=5, score=score, random_state=0)
        est.fit(X[train] / 16, y[train])
        sets = est.predict_sets(X[test] / 16, ["mod", "e-mod", "eu-mod", "cross", "bonferroni"], alpha=0.1)
        idx = np.searchsorted(est.classes_, y[test])
        for m, s in sets.items():
            assert s[np.arange(len(test)), idx].mean() >= 0.85, (score, m)
        assert np.all(sets["e-mod"] <= sets["mod"]) and np.all(sets["eu-mod"] <= sets["e-mod"])
        assert sets["e-mod"].sum() < sets["mod"].sum()


def test_class_scores():
    p = np.array([[0.5, 0.3, 0.2]])
    assert np.allclose(class_scores(p, "lac"), [[0.5, 0.7, 0.8]])
    assert np.allclose(class_scores(p, "aps"), [[0.5, 0.8, 1.0]])
