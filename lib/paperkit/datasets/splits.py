"""Seeded splits: train/test, K folds, and Dirichlet non-IID partitions for federated simulation."""

from __future__ import annotations

import numpy as np

from paperkit.core.errors import InputError, UsageError


def train_test_indices(n: int, test_fraction: float, rng: np.random.Generator,
                       stratify: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Sorted (train, test) index arrays; with ``stratify``, each class keeps its share in both."""
    if not 0.0 < test_fraction < 1.0:
        raise UsageError(f"test fraction = {test_fraction!r} is out of range; expected a value in (0, 1)")
    if stratify is None:
        perm = rng.permutation(n)
        n_test = max(1, int(round(test_fraction * n)))
        if n_test >= n:
            raise InputError(f"{n} rows cannot be split into non-empty train and test parts")
        return np.sort(perm[n_test:]), np.sort(perm[:n_test])
    stratify = np.asarray(stratify)
    test = []
    for cls in np.unique(stratify):
        idx = np.flatnonzero(stratify == cls)
        idx = idx[rng.permutation(len(idx))]
        test.append(idx[: int(round(test_fraction * len(idx)))])
    test_idx = np.sort(np.concatenate(test))
    train_idx = np.setdiff1d(np.arange(n), test_idx)
    if len(test_idx) == 0 or len(train_idx) == 0:
        raise InputError(f"{n} rows cannot be split into non-empty train and test parts")
    return train_idx, test_idx


def kfold_indices(n: int, n_folds: int, rng: np.random.Generator) -> list[np.ndarray]:
    """A seeded random partition of ``range(n)`` into ``n_folds`` folds of sizes differing by at most 1.

    The order of the folds is part of the result (it matters to cross-conformal combiners).
    """
    if n_folds < 2:
        raise UsageError(f"number of folds = {n_folds} is out of range; expected at least 2")
    if n < n_folds:
        raise InputError(f"{n} rows cannot be split into {n_folds} folds; need at least one row per fold")
    perm = rng.permutation(n)
    return [np.sort(part) for part in np.array_split(perm, n_folds)]


def dirichlet_partition(labels: np.ndarray, n_clients: int, alpha: float, rng: np.random.Generator,
                        *, min_size: int = 1, max_tries: int = 100) -> list[np.ndarray]:
    """Split example indices among clients with per-class proportions ~ Dirichlet(alpha).

    Small ``alpha`` gives strongly non-IID clients; large ``alpha`` approaches an IID split. Draws are
    repeated (up to ``max_tries``) until every client holds at least ``min_size`` examples, the usual
    practice in federated-learning benchmarks.
    """
    labels = np.asarray(labels)
    n = len(labels)
    if n_clients < 1:
        raise UsageError(f"number of clients = {n_clients} is out of range; expected at least 1")
    if alpha <= 0:
        raise UsageError(f"Dirichlet alpha = {alpha!r} is out of range; expected a value > 0")
    if n < n_clients * min_size:
        raise InputError(f"{n} examples cannot give {n_clients} clients at least {min_size} example(s) each")
    classes = np.unique(labels)
    for _ in range(max_tries):
        parts: list[list[int]] = [[] for _ in range(n_clients)]
        for cls in classes:
            idx = np.flatnonzero(labels == cls)
            idx = idx[rng.permutation(len(idx))]
            shares = rng.dirichlet(np.full(n_clients, alpha))
            cuts = (np.cumsum(shares) * len(idx)).astype(int)[:-1]
            for client, chunk in enumerate(np.split(idx, cuts)):
                parts[client].extend(chunk.tolist())
        if min(len(p) for p in parts) >= min_size:
            return [np.sort(np.asarray(p, dtype=np.int64)) for p in parts]
    raise InputError(f"could not give all {n_clients} clients {min_size} example(s) in {max_tries} Dirichlet "
                     f"draws with alpha = {alpha}; use fewer clients or a larger alpha")
