"""Metrics against scikit-learn, ML-kNN against a direct loop."""

import numpy as np
import pytest
from sklearn import metrics as skm

from paperkit.methods.mvml import metrics
from paperkit.methods.mvml.baselines import MLkNN


@pytest.mark.parametrize("seed", range(4))
def test_metrics_equal_sklearn(seed):
    rng = np.random.default_rng(seed)
    n, q = 150, 7
    Y = (rng.random((n, q)) < 0.35).astype(int)
    Y[np.arange(n), rng.integers(0, q, n)] = 1  # every sample has a label (classic coverage = sklearn − 1)
    F = rng.normal(size=(n, q))
    if seed % 2:
        F = np.round(F, 1)  # ties
    ev = metrics.evaluate(Y, F, threshold=0.0)
    P = (F > 0).astype(int)
    assert abs(ev["hamming_loss"] - skm.hamming_loss(Y, P)) < 1e-12
    assert abs(ev["ranking_loss"] - skm.label_ranking_loss(Y, F)) < 1e-12
    assert abs(ev["average_precision"] - skm.label_ranking_average_precision_score(Y, F)) < 1e-12
    assert abs(ev["coverage_sklearn"] - skm.coverage_error(Y, F)) < 1e-12
    assert abs(ev["coverage"] + 1 - skm.coverage_error(Y, F)) < 1e-12
    assert abs(ev["micro_f1"] - skm.f1_score(Y, P, average="micro", zero_division=0)) < 1e-12
    assert abs(ev["macro_f1"] - skm.f1_score(Y, P, average="macro", zero_division=0)) < 1e-12
    assert abs(ev["subset_accuracy"] - skm.accuracy_score(Y, P)) < 1e-12
    top = np.argmax(F, axis=1)
    assert ev["one_error"] == pytest.approx(np.mean(Y[np.arange(n), top] == 0))


def test_metrics_edge_rows_follow_sklearn():
    Y = np.array([[0, 0, 0], [1, 1, 1], [1, 0, 0]])
    F = np.array([[0.1, 0.5, 0.2], [0.3, 0.3, 0.9], [0.2, 0.2, 0.1]])
    ev = metrics.evaluate(Y, F)
    assert ev["ranking_loss"] == pytest.approx(skm.label_ranking_loss(Y, F))
    assert ev["average_precision"] == pytest.approx(skm.label_ranking_average_precision_score(Y, F))
    assert ev["coverage_sklearn"] == pytest.approx(skm.coverage_error(Y, F))
    # classic coverage: 0 for the empty row, rank-1 otherwise
    assert ev["coverage"] == pytest.approx((0 + 2 + 1) / 3)
    assert ev["one_error"] == pytest.approx(1 / 3)  # the empty row counts as an error; row 3: tie → first, relevant


def _mlknn_loop(Xtr, Ytr, Xte, k, s):
    n, q = Ytr.shape
    D = ((Xtr[:, None, :] - Xtr[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(D, np.inf)
    prior = (s + Ytr.sum(0)) / (2 * s + n)
    out = np.zeros((len(Xte), q))
    nbr = np.argsort(D, axis=1, kind="stable")[:, :k]
    De = ((Xte[:, None, :] - Xtr[None, :, :]) ** 2).sum(-1)
    nbr_te = np.argsort(De, axis=1, kind="stable")[:, :k]
    for j in range(q):
        c = np.array([Ytr[nbr[i], j].sum() for i in range(n)])
        for t in range(len(Xte)):
            ct = Ytr[nbr_te[t], j].sum()
            k1 = np.sum((Ytr[:, j] == 1) & (c == ct))
            k0 = np.sum((Ytr[:, j] == 0) & (c == ct))
            p1 = prior[j] * (s + k1) / (s * (k + 1) + np.sum(Ytr[:, j] == 1))
            p0 = (1 - prior[j]) * (s + k0) / (s * (k + 1) + np.sum(Ytr[:, j] == 0))
            out[t, j] = p1 / (p1 + p0)
    return out


def test_mlknn_matches_direct_loop():
    rng = np.random.default_rng(0)
    Xtr, Xte = rng.normal(size=(60, 3)), rng.normal(size=(15, 3))
    Ytr = (rng.random((60, 4)) < 0.4).astype(float)
    ours = MLkNN(k=5, s=1.0).fit(Xtr, Ytr).predict_proba(Xte)
    np.testing.assert_allclose(ours, _mlknn_loop(Xtr, Ytr, Xte, 5, 1.0), atol=1e-12)


def test_platt_scaling_matches_logistic_regression_and_handles_one_class():
    """Platt's sigmoid is a logistic regression on the score with smoothed targets: close to sklearn's
    unregularised fit on many samples, finite for a label that is all 0 on the calibration part."""
    from sklearn.linear_model import LogisticRegression

    from paperkit.methods.mvml.calibration import apply_platt, brier, fit_platt, fit_platt_label, log_loss

    rng = np.random.default_rng(0)
    f = rng.normal(size=4000)
    y = (rng.random(4000) < 1 / (1 + np.exp(-(3 * f - 1)))).astype(float)
    a, b = fit_platt_label(f, y)
    ref = LogisticRegression(C=1e6).fit(f[:, None], y)
    assert a == pytest.approx(ref.coef_[0, 0], rel=0.02) and b == pytest.approx(ref.intercept_[0], abs=0.02)
    a0, b0 = fit_platt_label(f[:50], np.zeros(50))
    assert np.isfinite([a0, b0]).all() and apply_platt(f[:50, None], [a0], [b0]).max() < 0.1
    F = np.c_[f, -f]
    Y = np.c_[y, 1 - y]
    pa, pb = fit_platt(F, Y)
    P = apply_platt(F, pa, pb)
    assert ((P > 0) & (P < 1)).all() and pa[1] == pytest.approx(pa[0], rel=0.01)  # -f predicts 1 - y
    assert log_loss(Y, P) < log_loss(Y, np.clip(0.5 + 0.1 * F, 0, 1)) and brier(Y, P) < 0.25
