# ruff: noqa: E741  (k and l are the paper's input and output tensor orders)
"""Synthetic tasks on symmetric tensors, generated at any n (the spec's offline stand-ins).

A (invariant, S^3 → R): third-moment tensors M = (1/m) Σ_j z_j^{⊗3}, z_j ~ N(μ, I), μ ~ N(0, 0.5² I) per
  sample; y = tanh(a·mean_i M_iii + b·mean_{i≠j} M_iij + c·mean M_ijk) + N(0, 0.01²).
B (equivariant, S^2 → S^1): A symmetric with N(0, 1) entries; y_i = (1/n) Σ_j A_ij², the node strength of
  squared weights as a per-node mean so that it stays O(1) when n changes.
C (teacher, S^k → S^l): a random equivariant network (diagram basis, tanh, fixed teacher seed), the same
  function at every n, on symmetric Gaussian inputs."""

from __future__ import annotations

import numpy as np

from paperkit.methods.symeq.symtensor import symmetrize

TASKS = ("A", "B", "C")
TASK_ORDERS = {"A": (3, 0), "B": (2, 1)}
A_WEIGHTS = (1.0, -1.0, 2.0)
MOMENT_SAMPLES = 16


def task_orders(task: str, k: int, l: int) -> tuple[int, int]:
    """(k, l) of a task; C takes the user's."""
    return TASK_ORDERS.get(task, (k, l))


def task_a(n: int, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    mu = 0.5 * rng.standard_normal((size, 1, n))
    z = mu + rng.standard_normal((size, MOMENT_SAMPLES, n))
    M = np.einsum("bmi,bmj,bmk->bijk", z, z, z) / MOMENT_SAMPLES
    diag = np.einsum("biii->bi", M).mean(1)
    pair = (np.einsum("biij->bij", M).sum((1, 2)) - np.einsum("biii->bi", M).sum(1)) / max(n * (n - 1), 1)
    total = M.mean((1, 2, 3))
    a, b, c = A_WEIGHTS
    y = np.tanh(a * diag + b * pair + c * total) + 0.01 * rng.standard_normal(size)
    return M, y


def task_b(n: int, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    G = rng.standard_normal((size, n, n))
    A = (G + G.transpose(0, 2, 1)) / np.sqrt(2.0)
    return A, (A ** 2).mean(2)


def teacher(k: int, l: int, teacher_seed: int):
    import torch

    from paperkit.methods.symeq.layers import EquivariantNet
    gen = torch.Generator().manual_seed(teacher_seed)
    net = EquivariantNet(k, l, hidden=8, layers=1, kind="diagram", activation="tanh").double()
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype))
    return net


def task_c(n: int, size: int, rng: np.random.Generator, k: int, l: int, teacher_seed: int) -> tuple[np.ndarray, np.ndarray]:
    import torch
    X = symmetrize(rng.standard_normal((size,) + (n,) * k), k)
    with torch.no_grad():
        y = teacher(k, l, teacher_seed)(torch.as_tensor(X)).numpy()
    return X, y


def make_task(task: str, n: int, size: int, rng: np.random.Generator, *, k: int = 2, l: int = 1,
              teacher_seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(X [size, n^k axes], y [size] or [size, n^l axes]) in float64."""
    if task == "A":
        return task_a(n, size, rng)
    if task == "B":
        return task_b(n, size, rng)
    if task == "C":
        return task_c(n, size, rng, k, l, teacher_seed)
    raise ValueError(f"unknown task {task!r}; expected one of {', '.join(TASKS)}")
