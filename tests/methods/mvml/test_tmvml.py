"""TMvML end to end: convergence, rank recovery, the ablation ordering, views and model round trip."""

import time

import numpy as np
import pytest

from paperkit.core.errors import InputError, UsageError
from paperkit.methods.mvml import TMvML, data, experiment
from paperkit.methods.mvml.tensor import fourier_singular_values, rotate


def test_convergence_on_digits():
    """Acceptance 2: residual < 1e-4, objective non-increasing after 20 iterations, < 60 s."""
    d = data.digits_mvml()
    t0 = time.perf_counter()
    model = TMvML().fit(d.views, d.Y)
    elapsed = time.perf_counter() - t0
    tr = model.state_.trace[: model.n_iter_]
    assert tr[-1, 3] < 1e-4
    obj = tr[19:, 0]
    assert np.all(np.diff(obj) <= 1e-6 * np.abs(obj[1:])), np.diff(obj).max()
    assert elapsed < 60


def test_rank_two_tensor_recovered():
    """Acceptance 3: planted rank-2 tensor → the fitted Fourier slices have σ3 < 5% σ1; ridge does not."""
    d = data.planted(np.random.default_rng(0), n=1500, m=12, n_views=3, n_labels=6, rank=2, noise=0.1)
    fit = TMvML(map="none", lam=1.0, delta=1.0, gamma=1e-3).fit(d.views, d.Y)
    s = fourier_singular_values(fit.rotated_tensor())
    assert np.all(s[:, 2] < 0.05 * s[:, 0]), s
    ridge = TMvML(map="none", penalty="none", gamma=1e-3).fit(d.views, d.Y)
    s_r = fourier_singular_values(ridge.rotated_tensor())
    assert np.any(s_r[:, 2] >= 0.05 * s_r[:, 0])
    # and the recovered tensor points where the truth does (labels are a monotone map of X W)
    W, T = fit.W_, d.extra["W_true"]
    cos = np.sum(W * T, axis=(0, 1)) / (np.linalg.norm(W, axis=(0, 1)) * np.linalg.norm(T, axis=(0, 1)))
    assert np.all(cos > 0.8), cos


@pytest.mark.slow
def test_ltr_beats_ridge_and_matches_tnn_on_shared_structure():
    """Acceptance 4: 5 random splits on the shared-structure generator."""
    d = data.planted(np.random.default_rng(0), n=300, m=40, n_views=4, n_labels=6, rank=2)
    model = TMvML(map="none", lam=0.5, delta=0.5, gamma=1e-3)
    res = experiment.run_splits(model, d.views, d.Y, n_splits=5, seed=0, methods=["tmvml", "tnn", "ridge-view"],
                                lam_tnn=0.5)
    summ = experiment.summarize_splits(res)
    ap = {k: v["average_precision"] for k, v in summ.items()}
    assert ap["tmvml"]["mean"] >= ap["ridge-view"]["mean"] + 0.02, ap
    assert ap["tmvml"]["mean"] >= ap["tnn"]["mean"] - ap["tnn"]["std"], ap


def test_predict_and_roundtrip():
    d = data.synthetic(np.random.default_rng(1), n=200, n_labels=4)
    model = TMvML(m=16, max_iter=30).fit(d.views, d.Y)
    F = model.decision_function(d.views)
    assert F.shape == d.Y.shape
    np.testing.assert_array_equal(model.predict(d.views), (F > 0.5).astype(np.int8))
    again = TMvML.from_arrays(model.to_arrays())
    np.testing.assert_array_equal(again.decision_function(d.views), F)


@pytest.mark.parametrize("kind", ["rbf", "pca"])
def test_view_maps_shapes_and_determinism(kind):
    d = data.synthetic(np.random.default_rng(2), n=120, n_labels=3)
    a = TMvML(map=kind, m=8, max_iter=5).fit(d.views, d.Y)
    b = TMvML(map=kind, m=8, max_iter=5).fit(d.views, d.Y)
    assert a.W_.shape == (3, 8, 3)
    np.testing.assert_array_equal(a.W_, b.W_)


def test_bad_inputs():
    d = data.synthetic(np.random.default_rng(3), n=60, n_labels=3)
    with pytest.raises(InputError, match="different numbers of samples"):
        TMvML(m=4).fit([d.views[0], d.views[1][:50]], d.Y)
    with pytest.raises(InputError, match="not 0 or 1"):
        TMvML(m=4).fit(d.views, d.Y * 2)
    bad = d.views[0].copy()
    bad[3, 2] = np.nan
    with pytest.raises(InputError, match="NaN"):
        TMvML(m=4).fit([bad, d.views[1]], d.Y)
    with pytest.raises(UsageError, match="delta"):
        TMvML(delta=0.0)
    with pytest.raises(UsageError, match="lam"):
        TMvML(lam=-1.0)
    with pytest.raises(InputError, match="too large for PCA"):
        TMvML(map="pca", m=64).fit(d.views, d.Y)


def test_constant_label_warns_and_fits(caplog):
    d = data.synthetic(np.random.default_rng(4), n=80, n_labels=3)
    Y = d.Y.copy()
    Y[:, 1] = 0
    model = TMvML(m=6, max_iter=20).fit(d.views, Y)
    assert "constant" in caplog.text
    np.testing.assert_array_equal(model.decision_function(d.views)[:, 1], 0.0)
    assert np.all(np.isfinite(model.decision_function(d.views)))


def test_rotation_layout():
    W = np.arange(2 * 3 * 4, dtype=float).reshape(2, 3, 4)  # V=2, m=3, q=4
    R = rotate(W)
    assert R.shape == (3, 2, 4)
    assert R[1, 0, 2] == W[0, 1, 2]  # slice j=2 holds label 2 in every view
