"""Exactness of the learners' linear algebra against closed forms, and their interface."""

import numpy as np
import pytest

from paperkit.core.errors import UsageError
from paperkit.methods.gen_select import (
    LEARNERS,
    FourierFeatures,
    Kernel,
    KernelRidge,
    Ridge,
    eta_formula,
    make_learner,
)


@pytest.mark.parametrize("kernel", [Kernel("rbf", bandwidth=1.5), Kernel("poly", gamma=0.3, degree=3),
                                    Kernel("lin")])
def test_incremental_inverse_equals_a_direct_solve_after_200_updates(kernel):
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((200, 5)), rng.uniform(-1, 1, 200)
    alpha = 1.0
    model = KernelRidge(kernel, alpha, 5, capacity=3)  # capacity 3: the buffers grow several times
    for i in range(200):
        model.append(X[i], y[i])
    K = kernel.matrix(X) + alpha * np.eye(200)
    direct = np.linalg.solve(K, np.eye(200))
    assert np.max(np.abs(model.inverse - direct)) < 1e-8
    # μ and σ equal the closed-form kernel-ridge mean and GP posterior standard deviation
    Z = rng.standard_normal((7, 5))
    kz = kernel.matrix(X, Z)
    mu_closed = kz.T @ np.linalg.solve(K, y)
    prior = np.diag(kernel.matrix(Z))
    var_closed = (prior - np.einsum("ij,ij->j", kz, np.linalg.solve(K, kz))) / alpha
    mu, sd = model.predict(Z)
    np.testing.assert_allclose(mu, mu_closed, rtol=0, atol=1e-8)
    np.testing.assert_allclose(sd, np.sqrt(np.maximum(var_closed, 0)), rtol=0, atol=1e-7)


def test_resolve_mode_gives_the_same_inverse_as_schur_steps():
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((40, 3)), rng.uniform(0, 1, 40)
    a, b = KernelRidge(Kernel("rbf"), 0.5, 3), KernelRidge(Kernel("rbf"), 0.5, 3, update="resolve")
    for i in range(40):
        a.append(X[i], y[i])
        b.append(X[i], y[i])
    assert np.max(np.abs(a.inverse - b.inverse)) < 1e-10


@pytest.mark.parametrize("alpha", [1.0, 0.25])
def test_first_inverse_entry_is_one_over_k_plus_alpha(alpha):
    kernel = Kernel("poly", gamma=1.0, degree=3, coef=1.0)
    x = np.array([0.5, -1.0, 2.0])
    model = KernelRidge(kernel, alpha, 3)
    model.append(x, 0.3)
    k = (x @ x + 1.0) ** 3
    assert model.inverse[0, 0] == pytest.approx(1.0 / (k + alpha), rel=1e-14)
    assert model.inverse[0, 0] != pytest.approx(1.0 / k + alpha)  # the official code's entry


@pytest.mark.parametrize("variant", ["cos", "cos-sin"])
def test_random_fourier_features_approximate_the_rbf_kernel(variant):
    rng = np.random.default_rng(2)
    bandwidth, d = 2.0, 8
    feats = FourierFeatures(d, 2000, bandwidth, rng, variant)
    X, Y = rng.standard_normal((300, d)), rng.standard_normal((300, d))
    X = Y + rng.standard_normal((300, d)) * rng.uniform(0.1, 1.5, (300, 1))  # a spread of kernel values
    approx = np.einsum("ij,ij->i", feats(X), feats(Y))
    exact = np.exp(-np.sum((X - Y) ** 2, axis=1) / (2 * bandwidth**2))
    assert np.mean(np.abs(approx - exact)) < 0.05
    assert exact.min() < 0.3 < 0.9 < exact.max()
    # one row and a stack agree
    np.testing.assert_allclose(feats(X[0]), feats(X)[0])


def test_sherman_morrison_ridge_matches_the_normal_equations():
    rng = np.random.default_rng(3)
    Phi, y = rng.standard_normal((60, 6)), rng.standard_normal(60)
    r = Ridge(6, 2.0)
    for p, s in zip(Phi, y, strict=True):
        r.append(p, s)
    A = 2.0 * np.eye(6) + Phi.T @ Phi
    np.testing.assert_allclose(r.inv, np.linalg.inv(A), atol=1e-10)
    np.testing.assert_allclose(r.w, np.linalg.solve(A, Phi.T @ y), atol=1e-10)


def test_rff_ucb_counts_each_reward_once():
    rng = np.random.default_rng(4)
    learner = make_learner("rff-ucb", 2, 3, rng, kernel=Kernel("rbf"), alpha=1.0, eta=1.0, rff_dim=10)
    x = np.ones(3)
    learner.select(x)
    learner.update(x, 0, 0.7)
    phi = learner.features(x)
    np.testing.assert_allclose(learner.b[0], 0.7 * phi)
    A = np.eye(len(phi)) + np.outer(phi, phi)
    np.testing.assert_allclose(learner.inv[0], np.linalg.inv(A), atol=1e-12)
    np.testing.assert_allclose(learner.w[0], np.linalg.solve(A, 0.7 * phi), atol=1e-12)
    np.testing.assert_allclose(learner.inv[1], np.eye(len(phi)), atol=0)


@pytest.mark.parametrize("name", LEARNERS)
def test_first_rounds_are_a_random_round_robin_and_new_arms_are_tried(name):
    rng = np.random.default_rng(5)
    learner = make_learner(name, 4, 2, rng, kernel=Kernel("rbf"), alpha=1.0, eta=1.0, rff_dim=20, best_arm=2)
    x = np.array([0.1, 0.2])
    picks = []
    for _ in range(4):
        g = learner.select(x)
        picks.append(g)
        learner.update(x, g, 0.5)
    if name == "oracle":
        assert picks == [2] * 4
    elif name == "random":
        assert all(0 <= g < 4 for g in picks)
    else:
        assert sorted(picks) == [0, 1, 2, 3]
        new = learner.add_arm()
        assert new == 4 and learner.select(x) == 4
        learner.update(x, 4, 0.9)
        assert 0 <= learner.select(x) < 5


def test_round_robin_order_depends_on_the_seed():
    orders = set()
    for seed in range(6):
        learner = make_learner("pak-ucb", 4, 2, np.random.default_rng(seed), kernel=Kernel("rbf"), alpha=1, eta=1)
        order = []
        for _ in range(4):
            g = learner.select(np.zeros(2))
            learner.update(np.zeros(2), g, 0.0)
            order.append(g)
        orders.add(tuple(order))
    assert len(orders) > 1


def test_shared_models_widen_exactly_when_an_arm_joins():
    """LinUCB/KernelUCB/hybrid after add_arm equal a learner built with the extra arm from the start."""
    rng = np.random.default_rng(6)
    data = [(rng.standard_normal(3), int(rng.integers(2)), float(rng.uniform())) for _ in range(15)]
    for name in ("lin-ucb", "kernel-ucb", "hybrid-ucb"):
        grown = make_learner(name, 2, 3, np.random.default_rng(0), kernel=Kernel("rbf"), alpha=1.0, eta=1.0)
        full = make_learner(name, 3, 3, np.random.default_rng(0), kernel=Kernel("rbf"), alpha=1.0, eta=1.0)
        for x, g, s in data:
            grown.update(x, g, s)
            full.update(x, g, s)
        grown.add_arm()
        x = rng.standard_normal(3)
        np.testing.assert_allclose(grown.scores(x), full.scores(x), atol=1e-10, err_msg=name)


def test_eta_formula_matches_the_spec_numbers():
    assert eta_formula("pak-ucb", 5, 5000, 0.05) == pytest.approx(5.26, abs=0.01)
    assert eta_formula("rff-ucb", 5, 5000, 0.05) == pytest.approx(3.26, abs=0.01)
    assert eta_formula("greedy", 5, 5000, 0.05) == 0.0


def test_bad_hyper_parameters_are_usage_errors():
    with pytest.raises(UsageError, match="unknown kernel"):
        Kernel("cubic")
    with pytest.raises(UsageError, match="alpha"):
        KernelRidge(Kernel("rbf"), 0.0, 2)
    with pytest.raises(UsageError, match="rff-dim"):
        FourierFeatures(2, 0, 1.0, np.random.default_rng(0))
    with pytest.raises(UsageError, match="unknown learner"):
        make_learner("thompson", 2, 2, np.random.default_rng(0), kernel=Kernel(), alpha=1, eta=1)


def test_numba_rank_one_update_equals_the_numpy_reference():
    from paperkit.methods.gen_select.kernels import rank_one_update, rank_one_update_reference

    rng = np.random.default_rng(7)
    A = rng.standard_normal((9, 9))
    B = A.copy()
    u = rng.standard_normal(6)
    rank_one_update(A, u, -0.3)
    rank_one_update_reference(B, u, -0.3)
    np.testing.assert_allclose(A, B, rtol=0, atol=1e-14)
    assert np.array_equal(A[6:], B[6:]) and np.array_equal(A[:, 6:], B[:, 6:])


def test_rff_ucb_after_many_updates_matches_the_normal_equations():
    rng = np.random.default_rng(8)
    learner = make_learner("rff-ucb", 2, 3, rng, kernel=Kernel("rbf"), alpha=0.5, eta=1.0, rff_dim=12,
                           rff_variant="cos-sin")
    X, y = rng.standard_normal((50, 3)), rng.uniform(size=50)
    for x, s in zip(X, y, strict=True):
        learner.select(x)
        learner.update(x, 1, s)
    Phi = learner.features(X)
    A = 0.5 * np.eye(24) + Phi.T @ Phi
    np.testing.assert_allclose(learner.inv[1], np.linalg.inv(A), atol=1e-10)
    np.testing.assert_allclose(learner.w[1], np.linalg.solve(A, Phi.T @ y), atol=1e-10)
