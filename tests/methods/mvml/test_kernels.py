"""Numba kernels against their NumPy/SciPy references, and the proximal step against its definition."""

import numpy as np
import pytest
from scipy.special import lambertw

from paperkit.methods.mvml import kernels, solver, tensor


def test_lambertw0_matches_scipy():
    rng = np.random.default_rng(0)
    z = np.concatenate([-np.exp(-1.0) * (1 - np.array([1e-12, 1e-8, 1e-4, 0.1])), -rng.uniform(0, np.exp(-1.0), 500),
                        [-1e-300, -1e-12]])
    ours = np.array([kernels.lambertw0(v) for v in z])
    np.testing.assert_allclose(ours, lambertw(z, 0).real, rtol=1e-10, atol=1e-7)


def test_scalar_prox_is_global_minimum_and_matches_reference():
    rng = np.random.default_rng(1)
    grid = np.linspace(0, 30, 300001)
    for _ in range(60):
        sigma, tau, delta = rng.exponential(3.0), rng.exponential(2.0), rng.exponential(1.0)
        x = kernels.laplace_prox(sigma, tau, delta)
        assert x == pytest.approx(tensor.laplace_prox_scalar(sigma, tau, delta), abs=1e-12)
        h = tau * -np.expm1(-grid / delta) + 0.5 * (grid - sigma) ** 2
        hx = tau * -np.expm1(-x / delta) + 0.5 * (x - sigma) ** 2
        assert hx <= h.min() + 1e-9  # brute force over x >= 0


@pytest.mark.parametrize("method", ["exact", "reweighted"])
@pytest.mark.parametrize("penalty", ["ltr", "tnn"])
@pytest.mark.parametrize("q", [1, 6, 7])
def test_prox_views_matches_reference(penalty, method, q):
    rng = np.random.default_rng(q)
    V, m = 3, 9
    B = rng.normal(size=(V, m, q)) * 2
    cf, sf, ci, si = kernels.dft_tables(q)
    s_out = np.zeros((q // 2 + 1, min(m, V)))
    G = kernels.prox_views(B, 0.7, kernels.PENALTY_CODES[penalty], 0.8, kernels.PROX_CODES[method], 2, cf, sf, ci, si, s_out)
    G_ref, kept = tensor.prox(tensor.rotate(B), 0.7, penalty, 0.8, method, 2)
    np.testing.assert_allclose(G, tensor.unrotate(G_ref), atol=1e-12)
    np.testing.assert_allclose(s_out, kept[: q // 2 + 1], atol=1e-12)


def test_dft_tables_match_numpy_fft():
    rng = np.random.default_rng(2)
    for q in (1, 2, 5, 8):
        A = rng.normal(size=(4, q))
        cf, sf, ci, si = kernels.dft_tables(q)
        F = np.fft.rfft(A, axis=1)
        np.testing.assert_allclose(A @ cf, F.real, atol=1e-12)
        np.testing.assert_allclose(-(A @ sf), F.imag, atol=1e-12)
        np.testing.assert_allclose(F.real @ ci - F.imag @ si, A, atol=1e-12)


def test_ltr_prox_beats_soft_threshold_and_zero():
    """On random tensors the LTR step scores no worse than soft-thresholding or zero."""
    rng = np.random.default_rng(3)
    for trial in range(20):
        T = rng.normal(size=(8, 3, 5)) * rng.uniform(0.3, 3)
        tau, delta = rng.uniform(0.1, 3), rng.uniform(0.2, 3)
        G, _ = tensor.prox(T, tau, "ltr", delta)
        ours = tensor.prox_objective(G, T, tau, "ltr", delta)
        for thr in (tau / delta, tau):  # TNN step at LTR's slope at 0, and at tau
            soft, _ = tensor.prox(T, thr, "tnn")
            assert ours <= tensor.prox_objective(soft, T, tau, "ltr", delta) + 1e-10, trial
        assert ours <= tensor.prox_objective(np.zeros_like(T), T, tau, "ltr", delta) + 1e-10
        # and no worse than random perturbations of itself (a local check of optimality)
        for _ in range(5):
            P = G + 1e-3 * rng.normal(size=G.shape)
            assert ours <= tensor.prox_objective(P, T, tau, "ltr", delta) + 1e-10


def test_ltr_prox_reduces_to_nuclear_norm_for_large_delta():
    """delta = 1e4 * max sigma makes the LTR step the TNN step at tau/delta (1e-3 relative)."""
    rng = np.random.default_rng(4)
    T = rng.normal(size=(10, 4, 6))
    smax = tensor.fourier_singular_values(T).max()
    delta = 1e4 * smax
    tau = 0.3 * smax * delta  # threshold tau/delta = 0.3 smax: some values survive, some vanish
    G, _ = tensor.prox(T, tau, "ltr", delta)
    S, _ = tensor.prox(T, tau / delta, "tnn")
    assert np.linalg.norm(G - S) <= 1e-3 * np.linalg.norm(S)
    # LTR value itself tends to TNN/delta
    assert tensor.penalty_value(T, "ltr", delta) == pytest.approx(tensor.penalty_value(T, "tnn") / delta, rel=1e-3)


def test_penalty_value_counts_conjugate_slices():
    """The 1/n3 factor and the conjugate slices, each expected value derived by hand from the DFT, with σ
    computed directly from the matrices (no FFT in the expectations)."""
    rng = np.random.default_rng(5)
    A, B = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    delta = 2.0
    sv = np.linalg.svd(A, compute_uv=False)
    # 1. n3 = 1: the only Fourier slice is A itself.
    T1 = A[:, :, None]
    assert tensor.penalty_value(T1, "tnn") == pytest.approx(sv.sum(), rel=1e-12)
    assert tensor.penalty_value(T1, "ltr", delta) == pytest.approx(np.sum(1 - np.exp(-sv / delta)), rel=1e-12)
    # 2. Constant along mode 3 (n3 = 4): Fourier slice 0 = 4A, the others 0, so TNN = ‖4A‖_* / 4 = ‖A‖_*
    #    and LTR = (1/4) Σ (1 − exp(−4σ/δ)).
    T2 = np.repeat(A[:, :, None], 4, axis=2)
    assert tensor.penalty_value(T2, "tnn") == pytest.approx(sv.sum(), rel=1e-12)
    assert tensor.penalty_value(T2, "ltr", delta) == pytest.approx(np.sum(1 - np.exp(-4 * sv / delta)) / 4, rel=1e-12)
    # 3. One conjugate pair (n3 = 5): T_k = A cos(2πk/5) + B sin(2πk/5) has Fourier slices 1 and 4 equal to
    #    (5/2)(A − iB) and its conjugate, the others 0; both count: TNN = 2·(5/2)‖A − iB‖_* / 5 = ‖A − iB‖_*.
    k = np.arange(5)
    T3 = A[:, :, None] * np.cos(2 * np.pi * k / 5) + B[:, :, None] * np.sin(2 * np.pi * k / 5)
    sc = np.linalg.svd(A - 1j * B, compute_uv=False)
    assert tensor.penalty_value(T3, "tnn") == pytest.approx(sc.sum(), rel=1e-12)
    assert tensor.penalty_value(T3, "ltr", delta) == pytest.approx(
        2 * np.sum(1 - np.exp(-2.5 * sc / delta)) / 5, rel=1e-12)


@pytest.mark.parametrize("penalty,prox", [("ltr", "exact"), ("ltr", "reweighted"), ("tnn", "exact")])
def test_numba_solver_equals_numpy_reference(penalty, prox):
    rng = np.random.default_rng(6)
    n, m, V, q = 200, 8, 3, 5
    views = [np.c_[rng.normal(size=(n, m - 1)), np.ones(n)] for _ in range(V)]
    Y = (rng.normal(size=(n, q)) > 0).astype(float)
    P = solver.Problem.from_views(views, Y)
    st = solver.Settings(penalty=penalty, lam=0.3, delta=0.5, prox=prox, max_iter=40, tol=0.0)
    a = solver.solve(P, st, solver="numba")
    b = solver.solve(P, st, solver="numpy")
    assert a.iteration == b.iteration == 40
    np.testing.assert_allclose(a.W, b.W, atol=1e-9)
    np.testing.assert_allclose(a.G, b.G, atol=1e-9)
    np.testing.assert_allclose(a.trace, b.trace, rtol=1e-8, atol=1e-10)


def test_chunked_resume_equals_one_run():
    rng = np.random.default_rng(7)
    views = [rng.normal(size=(100, 6)) for _ in range(2)]
    Y = (rng.normal(size=(100, 4)) > 0).astype(float)
    P = solver.Problem.from_views(views, Y)
    st = solver.Settings(lam=0.2, delta=0.5, max_iter=30, tol=0.0)
    full = solver.solve(P, st)
    part = solver.solve(P, solver.Settings(**{**st.__dict__, "max_iter": 12}))
    resumed = solver.solve(P, st, state=solver.State.from_arrays(part.to_arrays()))
    np.testing.assert_array_equal(full.W, resumed.W)
    np.testing.assert_array_equal(full.trace, resumed.trace)


def test_objective_trace_matches_direct_evaluation():
    rng = np.random.default_rng(8)
    views = [rng.normal(size=(80, 5)) for _ in range(3)]
    Y = (rng.normal(size=(80, 4)) > 0).astype(float)
    P = solver.Problem.from_views(views, Y)
    st = solver.Settings(lam=0.2, delta=0.5, max_iter=7, tol=0.0, init="zeros")
    s = solver.solve(P, st)
    direct = solver.objective(P, s.G, st)
    loss = sum(np.sum((X @ s.G[v] - Y) ** 2) for v, X in enumerate(views)) / 80
    assert s.trace[6, 1] == pytest.approx(loss, rel=1e-9)
    assert s.trace[6, 0] == pytest.approx(direct["objective"], rel=1e-9)
