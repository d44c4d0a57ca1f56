"""Tasks and training: closed-form targets, invariance/equivariance of the generators, and the acceptance
checks (task B, n = 6, 64 samples, 3 seeds: equivariant ≤ 0.2 × MLP test MSE; n = 6 → 10 transfer ≤ 2×)."""

import time

import numpy as np
import pytest
import torch

from paperkit.methods.symeq.symtensor import act, asymmetry
from paperkit.methods.symeq.tasks import make_task, task_a, teacher
from paperkit.methods.symeq.train import build_model, evaluate, fit


def test_task_b_closed_form_and_equivariance():
    X, y = make_task("B", 5, 3, np.random.default_rng(0))
    assert asymmetry(X, 2) == 0
    np.testing.assert_allclose(y, np.array([[np.mean(X[b, i] ** 2) for i in range(5)] for b in range(3)]))


def test_task_a_target_is_invariant():
    rng = np.random.default_rng(0)
    M, y = task_a(5, 4, np.random.default_rng(3))
    assert asymmetry(M, 3) < 1e-12 and y.shape == (4,)
    perm = rng.permutation(5)
    # same draws relabelled: the moments permute, the (noise-free part of the) target does not change
    Mp, yp = task_a(5, 4, np.random.default_rng(3))
    np.testing.assert_allclose(Mp, M)
    diag = lambda T: np.einsum("biii->bi", T).mean(1)  # noqa: E731
    np.testing.assert_allclose(diag(act(perm, M, 3)), diag(M))
    np.testing.assert_allclose(act(perm, M, 3).mean((1, 2, 3)), M.mean((1, 2, 3)))


def test_task_c_teacher_is_equivariant_and_the_same_at_every_n():
    t1, t2 = teacher(2, 1, 7), teacher(2, 1, 7)
    for p1, p2 in zip(t1.parameters(), t2.parameters(), strict=True):
        assert torch.equal(p1, p2)
    for n in (4, 9):
        X, y = make_task("C", n, 3, np.random.default_rng(0), k=2, l=1, teacher_seed=7)
        perm = np.random.default_rng(1).permutation(n)
        with torch.no_grad():
            yp = t1(torch.as_tensor(act(perm, X, 2))).numpy()
        np.testing.assert_allclose(yp, act(perm, y, 1), atol=1e-10)


def _fit_b(name, seed, n_train=64, basis="diagram"):
    rng = np.random.default_rng(seed)
    X, y = make_task("B", 6, n_train, rng)
    t = lambda a: torch.as_tensor(a, dtype=torch.float32)  # noqa: E731
    torch.manual_seed(seed)
    model = build_model(name, 2, 1, 6, hidden=16, layers=2, mlp_width=128, basis=basis)
    fit(model, t(X), t(y), 1, steps=500, batch_size=64, lr=3e-3, seed=seed, augment=name == "mlp-aug")
    errors = {}
    for n in (6, 10):
        Xt, yt = make_task("B", n, 1000, np.random.default_rng(100 + seed))
        if n == 6 or name == "equivariant":
            errors[n] = evaluate(model, t(Xt), t(yt), 1)
    return errors


def test_acceptance_task_b_data_efficiency_and_size_transfer():
    torch.set_num_threads(1)
    start = time.perf_counter()
    for seed in range(3):
        eq, mlp = _fit_b("equivariant", seed), _fit_b("mlp", seed)
        assert eq[6] <= 0.2 * mlp[6], (seed, eq, mlp)
        assert eq[10] <= 2 * eq[6], (seed, eq)
    assert time.perf_counter() - start < 120


@pytest.mark.heavy
def test_heavy_every_model_learns_task_b_with_more_data():
    for name in ("equivariant", "mlp", "mlp-aug", "maron"):
        small, large = _fit_b(name, 0, 32)[6], _fit_b(name, 0, 1024)[6]
        assert large < small, name
