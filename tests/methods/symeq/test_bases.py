# ruff: noqa: E741  (k and l are the paper's input and output tensor orders)
"""Orbit and diagram bases against brute force: orbit counts by applying every permutation, diagram maps
built entry by entry, least-squares change of basis, exact Möbius inverse."""

import itertools
from fractions import Fraction
from math import comb

import numpy as np
import pytest
import torch

from paperkit.methods.symeq import diagram, orbit
from paperkit.methods.symeq.symtensor import (
    act,
    asymmetry,
    multiplicities,
    n_from_packed,
    pack,
    packed_size,
    symmetrize,
    unpack,
)

SPEC_STABLE = {(1, 1): 2, (2, 0): 2, (2, 1): 4, (1, 2): 4, (2, 2): 9, (3, 0): 3, (3, 1): 7, (3, 2): 16,
               (3, 3): 31, (4, 0): 5}
ORDERS = [(k, l) for k in range(1, 4) for l in range(0, 4)]


def brute_force_orbits(k, l, n):
    """Orbits of pairs (β, α) of multiplicity vectors under S_n: canonical form = min over all n! relabellings."""
    beta, alpha = multiplicities(n, l), multiplicities(n, k)
    codes = (beta[:, None, :] * (k + 1) + alpha[None, :, :]).reshape(-1, n)
    perms = np.array(list(itertools.permutations(range(n))))
    weights = ((k + 1) * (l + 1)) ** np.arange(n)
    canon = (codes[:, perms] @ weights).min(axis=1)
    return len(np.unique(canon))


@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_orbit_basis_size_equals_brute_force(n):
    for k, l in ORDERS:
        assert len(orbit.orbit_labels(k, l, n)) == brute_force_orbits(k, l, n), (k, l, n)


def test_spec_counts_including_small_n_and_4_4():
    for (k, l), size in SPEC_STABLE.items():
        for n in (k + l, 8):
            assert len(orbit.orbit_labels(k, l, n)) == size
    assert len(orbit.orbit_labels(2, 2, 3)) == 8 and len(orbit.orbit_labels(2, 2, 2)) == 5
    assert len(orbit.orbit_labels(4, 4, 8)) == 109


def test_gather_indices_match_direct_signatures():
    for k, l, n in [(2, 2, 4), (3, 1, 3), (1, 3, 5), (3, 0, 4)]:
        g = orbit.gather_indices(k, l, n)
        labels = orbit.orbit_labels(k, l, n)
        beta, alpha = multiplicities(n, l), multiplicities(n, k)
        assert g.dtype == np.int32 and g.shape == (packed_size(n, l), packed_size(n, k))
        for b, a in itertools.product(range(len(beta)), range(len(alpha))):
            assert labels[g[b, a]] == orbit.signature(beta[b], alpha[a])
        assert set(np.unique(g)) == set(range(len(labels)))  # every label occurs at this n


def _perm_matrix(perm, n, order):
    """Packed-coordinate matrix of σ on S^order(R^n)."""
    eye = np.eye(packed_size(n, order))
    return np.stack([pack(act(perm, unpack(e, n, order), order), order) for e in eye], axis=1)


def test_orbit_matrices_are_equivariant_and_independent():
    k, l, n = 2, 2, 4
    X = orbit.dense_orbit_basis(k, l, n)
    rng = np.random.default_rng(0)
    for _ in range(3):
        perm = rng.permutation(n)
        Pin, Pout = _perm_matrix(perm, n, k), _perm_matrix(perm, n, l)
        for m in X:
            np.testing.assert_array_equal(Pout @ m, m @ Pin)
    assert np.linalg.matrix_rank(X.reshape(len(X), -1)) == len(X)


def dense_partition_map(blocks, k, l, n):
    """D_π as an [n^l, n^k] matrix, entry by entry: 1 iff legs in one block carry equal indices."""
    M = np.zeros((n ** l, n ** k))
    for i, out in enumerate(itertools.product(range(n), repeat=l)):
        for j, inp in enumerate(itertools.product(range(n), repeat=k)):
            vals = list(out) + list(inp)
            legs = [[o for o in bo] + [l + t for t in bi] for bo, bi in blocks]
            M[i, j] = all(len({vals[t] for t in leg}) == 1 for leg in legs)
    return M


@pytest.mark.parametrize("k, l", [(2, 2), (3, 1), (1, 2), (2, 0), (1, 3)])
def test_apply_partition_equals_entrywise_matrix(k, l):
    n = 3
    x = torch.randn(2, *(n,) * k, dtype=torch.float64)
    for blocks in diagram.all_partitions(k, l):
        got = diagram.apply_partition(x, blocks, k, l, normalize=False).reshape(2, -1)
        ref = x.reshape(2, -1) @ torch.as_tensor(dense_partition_map(blocks, k, l, n)).T
        torch.testing.assert_close(got, ref, rtol=0, atol=1e-12)
    if (k, l) == (2, 0):  # normalised: 1/n per contraction
        blocks = (((), (0,)), ((), (1,)))
        torch.testing.assert_close(diagram.apply_partition(x, blocks, k, l), x.sum((1, 2)) / n ** 2)


def diagram_packed_matrices(k, l, n):
    """op_λ on packed entries, built by applying the einsum map to unit symmetric tensors."""
    eye = torch.eye(packed_size(n, k), dtype=torch.float64)
    full = unpack(eye, n, k)
    mats = []
    for lab in orbit.orbit_labels(k, l):
        y = symmetrize(diagram.apply_partition(full, diagram.representative(lab), k, l), l)
        mats.append(pack(y, l).T.numpy())
    return np.stack(mats)


@pytest.mark.parametrize("k, l", [(1, 1), (2, 1), (2, 2), (3, 1), (3, 3)])
def test_diagram_in_orbit_basis_least_squares_and_change_of_basis(k, l):
    n = k + l
    D = diagram_packed_matrices(k, l, n)
    X = orbit.dense_orbit_basis(k, l, n)
    A = X.reshape(len(X), -1).T
    coef, *_ = np.linalg.lstsq(A, D.reshape(len(D), -1).T, rcond=None)
    assert np.abs(A @ coef - D.reshape(len(D), -1).T).max() < 1e-8
    assert np.linalg.matrix_rank(D.reshape(len(D), -1)) == len(D) == np.linalg.matrix_rank(A.T)
    # the exact integer coefficients, scaled by n^-contractions / |orbit|, are the least-squares ones
    order, C = diagram.change_of_basis(k, l)
    labels = orbit.orbit_labels(k, l)
    for a, lam in enumerate(labels):
        r = order.index(lam)
        s = float(n) ** -orbit.pure_input_parts(lam) / diagram.orbit_size(lam, k, l)
        expect = [s * C[r, order.index(mu)] for mu in labels]
        np.testing.assert_allclose(coef[:, a], expect, atol=1e-9)


def test_diagram_dependent_below_k_plus_l():
    D = diagram_packed_matrices(2, 2, 2)
    assert np.linalg.matrix_rank(D.reshape(len(D), -1)) == 5 < len(D)


@pytest.mark.parametrize("k, l", [(2, 2), (3, 2), (3, 3), (2, 4)])
def test_mobius_inverse_round_trips_exactly(k, l):
    _, C = diagram.change_of_basis(k, l)
    inv = diagram.mobius_inverse(C)
    m = len(C)
    assert np.all(np.tril(C, -1) == 0) and np.all(np.diag(C) > 0)
    for i, j in itertools.product(range(m), repeat=2):
        assert sum(Fraction(int(C[i, t])) * inv[t][j] for t in range(m)) == (i == j)


def test_orbit_sizes_sum_to_bell_numbers():
    bell = {2: 2, 3: 5, 4: 15, 5: 52, 6: 203}
    for k, l in [(1, 1), (2, 1), (2, 2), (3, 2), (3, 3)]:
        assert sum(diagram.orbit_size(lab, k, l) for lab in orbit.orbit_labels(k, l)) == bell[k + l]
        assert len(diagram.all_partitions(k, l)) == bell[k + l]


def test_packing_round_trip_action_and_sizes():
    rng = np.random.default_rng(1)
    for n, k in [(4, 2), (3, 3), (5, 1)]:
        T = symmetrize(rng.standard_normal((2,) + (n,) * k), k)
        p = pack(T, k)
        assert p.shape == (2, comb(n + k - 1, k)) and n_from_packed(p.shape[1], k) == n
        np.testing.assert_allclose(unpack(p, n, k), T)
        perm = rng.permutation(n)
        S = act(perm, T, k)
        idx = (0,) + tuple(int(perm[i]) for i in range(k))
        assert S[idx] == T[(0,) + tuple(range(k))] and asymmetry(S, k) < 1e-12
    assert n_from_packed(7, 2) is None and asymmetry(np.arange(4.0).reshape(2, 2), 2) == 1.0
