"""TMvML end to end: convergence, rank recovery, LTR against TNN and per-view ridge on the synthetic
generator (LTR ≥ ridge + 0.02 AP is not reachable there, and the test says why), the
ablation ordering on planted low-rank data with inner-validated λ, δ, views and model round trip."""

import time
from dataclasses import replace

import numpy as np
import pytest

from paperkit.core.errors import InputError, UsageError
from paperkit.methods.mvml import TMvML, data, evaluate, run, solver
from paperkit.methods.mvml.tensor import fourier_singular_values, rotate


@pytest.mark.timing
def test_digits_fit_takes_under_a_minute():
    d = data.digits_mvml()
    t0 = time.perf_counter()
    TMvML().fit(d.views, d.Y)
    assert time.perf_counter() - t0 < 60


def test_convergence_on_digits():
    """On digits the ADMM residual falls below 1e-4 and the objective stops increasing after 20 iterations."""
    d = data.digits_mvml()
    model = TMvML().fit(d.views, d.Y)
    tr = model.state_.trace[: model.n_iter_]
    assert tr[-1, 3] < 1e-4
    obj = tr[19:, 0]
    assert np.all(np.diff(obj) <= 1e-6 * np.abs(obj[1:])), np.diff(obj).max()
    # ADMM ends below its ridge start on the objective it minimises (the small μ₀ lets it leave the
    # ridge point, where the Laplace penalty is flat; see the solver's docs)
    mapped = [X - model.feature_means_[v] for v, X in enumerate(model.view_map_.transform(d.views))]
    problem = solver.Problem.from_views(mapped, d.Y - model.label_means_)
    start = solver.objective(problem, solver.ridge_closed_form(problem, model.gamma), model.settings())
    end = solver.objective(problem, model.W_, model.settings())
    assert end["objective"] < 0.9 * start["objective"], (end, start)


def test_rank_two_tensor_recovered():
    """Planted rank-2 tensor → the fitted Fourier slices have σ3 < 5% σ1; ridge does not."""
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


# Grids fixed before looking at any result: half-decades around the defaults' scale (the paper grid-searches
# λ, δ per dataset). Selection only ever sees the training part of a split (run.select_params).
LTR_GRID = {"lam": [0.1, 0.3, 1.0, 3.0], "delta": [0.1, 0.3, 1.0, 3.0, 10.0]}
TNN_GRID = {"lam": [0.01, 0.03, 0.1, 0.3, 1.0]}


def _split(n, split_seed):
    """The train/test partition run.run_split draws for ``split_seed``."""
    from paperkit.datasets import train_test_indices

    return train_test_indices(n, 0.3, np.random.default_rng(int(split_seed)))


@pytest.mark.slow
def test_ltr_on_synthetic_ties_ridge_and_is_not_below_tnn():
    """LTR against TNN and per-view ridge on the synthetic generator (5 splits, default λ, δ, no tuning).

    "LTR ≥ TNN − one std" holds. "LTR ≥ per-view ridge + 0.02 AP" does not, and cannot on this generator:
    ranking by the generator's own Bayes posterior P(Y = 1 | z) = Φ((zA − t)/noise) — better than any model
    of the noisy views can do on average — is itself less than 0.02 above per-view ridge. What holds
    instead is a tie: LTR within 0.01 AP of per-view ridge.
    """
    from scipy.stats import norm

    from paperkit.core.seeding import spawn_seeds
    from paperkit.methods.mvml import metrics

    d = data.load("synthetic", np.random.default_rng(0))
    res = run.run_splits(TMvML(), d.views, d.Y, n_splits=5, seed=0, methods=["tmvml", "tnn", "ridge-view"])
    ap = {k: v["average_precision"] for k, v in run.summarize_splits(res).items()}
    e = d.extra
    posterior = norm.cdf((e["latent"] @ e["label_map"] - e["thresholds"]) / e["label_noise"])
    ceiling = np.mean([metrics.evaluate(d.Y[te], posterior[te])["average_precision"]
                       for _, te in (_split(len(d.Y), s) for s in spawn_seeds(0, 5))])
    assert all(ceiling >= v["mean"] for v in ap.values()), (ceiling, ap)
    assert ceiling < ap["ridge-view"]["mean"] + 0.02, (ceiling, ap)  # the margin is out of reach
    assert ap["tmvml"]["mean"] >= ap["tnn"]["mean"] - ap["tnn"]["std"], ap
    assert abs(ap["tmvml"]["mean"] - ap["ridge-view"]["mean"]) <= 0.01, ap


@pytest.mark.slow
def test_ltr_beats_ridge_on_planted_low_rank_with_inner_validation():
    """A separate claim: where the true per-view classifiers form a
    low-rank rotated tensor (planted, rank 2), LTR with (λ, δ) picked by an inner validation split of
    each training part beats per-view RidgeCV by ≥ 0.02 AP over 5 splits and is no worse than TNN
    (its λ picked the same way) minus one std."""
    from paperkit.core.seeding import spawn_seeds

    d = data.planted(np.random.default_rng(0), n=300, m=40, n_views=4, n_labels=6, rank=2)
    base = TMvML(map="none", gamma=1e-3)
    ap = {"tmvml": [], "tnn": [], "ridge-view": []}
    for s in spawn_seeds(0, 5):
        tr, te = _split(len(d.Y), s)
        train, test, Ytr = [X[tr] for X in d.views], [X[te] for X in d.views], d.Y[tr]
        ltr, _ = run.select_params(base, train, Ytr, LTR_GRID, seed=int(s) + 1)
        tnn, _ = run.select_params(replace(base, penalty="tnn"), train, Ytr, TNN_GRID, seed=int(s) + 1)
        _, scores = run.fit_and_score(replace(base, **ltr), ["ridge-view"], train, Ytr, test)
        _, tnn_scores = run.fit_and_score(replace(base, penalty="tnn", **tnn), [], train, Ytr, test)
        scores["tnn"] = tnn_scores["tmvml"]
        for k, F in scores.items():
            ap[k].append(evaluate(d.Y[te], F)["average_precision"])
    mean = {k: np.mean(v) for k, v in ap.items()}
    assert mean["tmvml"] >= mean["ridge-view"] + 0.02, ap
    assert mean["tmvml"] >= mean["tnn"] - np.std(ap["tnn"]), ap


def test_select_params_is_a_grid_search_on_an_inner_split():
    """select_params = fit each grid point on the inner training rows, score on the held-out rows, arg-best
    (arg-min for a loss); checked against the same search written out here."""
    from paperkit.datasets import train_test_indices

    d = data.planted(np.random.default_rng(1), n=120, m=6, n_views=2, n_labels=3, rank=1)
    base = TMvML(map="none", max_iter=20)
    grid = {"lam": [0.1, 1.0], "delta": [0.3, 3.0]}
    tr, va = train_test_indices(len(d.Y), 0.3, np.random.default_rng(3))
    points = [{"lam": lam, "delta": de} for lam in grid["lam"] for de in grid["delta"]]
    direct = [evaluate(d.Y[va], replace(base, **p).fit([X[tr] for X in d.views], d.Y[tr])
                       .decision_function([X[va] for X in d.views])) for p in points]
    for metric, pick in (("average_precision", np.argmax), ("ranking_loss", np.argmin)):
        best, rows = run.select_params(base, d.views, d.Y, grid, seed=3, metric=metric)
        assert [r[metric] for r in rows] == [e[metric] for e in direct]
        assert best == points[int(pick([e[metric] for e in direct]))]
    with pytest.raises(UsageError, match="grid"):
        run.select_params(base, d.views, d.Y, {"nope": [1.0]})
    with pytest.raises(UsageError, match="no values"):
        run.select_params(base, d.views, d.Y, {"lam": []})


def test_select_cv_picks_the_grid_point_a_brute_force_loop_picks():
    """--select's inner cross-validation (run.select_cv) = every grid point fitted on K − 1 shuffled KFold
    folds and scored on the held-out fold, best mean (lowest for a loss; the first in grid order on
    ties); checked against the same search written out here with plain loops."""
    from sklearn.model_selection import KFold

    d = data.planted(np.random.default_rng(2), n=120, m=6, n_views=2, n_labels=4, rank=1)
    base = TMvML(map="none", max_iter=40)
    grid = {"lam": [0.01, 1.0], "delta": [0.3, 3.0]}
    folds = list(KFold(n_splits=3, shuffle=True, random_state=7).split(np.arange(len(d.Y))))
    brute = []
    for lam in grid["lam"]:
        for delta in grid["delta"]:
            per_fold = []
            for tr, va in folds:
                fitted = replace(base, lam=lam, delta=delta).fit([X[tr] for X in d.views], d.Y[tr])
                per_fold.append(evaluate(d.Y[va], fitted.decision_function([X[va] for X in d.views])))
            brute.append(({"lam": lam, "delta": delta}, per_fold))
    for metric, better in (("average_precision", max), ("ranking_loss", min)):
        means = [np.mean([f[metric] for f in per_fold]) for _, per_fold in brute]
        want = brute[means.index(better(means))][0]
        chosen, rows = run.select_cv(base, d.views, d.Y, grid, folds=3, seed=7, metric=metric)
        assert chosen == want
        np.testing.assert_allclose([r["mean"] for r in rows], means, rtol=0, atol=1e-12)
        assert [len(r["scores"]) for r in rows] == [3] * 4
    ap = [np.mean([f["average_precision"] for f in per_fold]) for _, per_fold in brute]
    assert len({round(m, 9) for m in ap}) == 4  # the choice is not a tie
    with pytest.raises(UsageError, match="folds"):
        run.select_cv(base, d.views, d.Y, grid, folds=1)
    with pytest.raises(UsageError, match="too few"):
        run.select_cv(base, [X[:5] for X in d.views], d.Y[:5], grid, folds=3)


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
