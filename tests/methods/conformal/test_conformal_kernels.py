"""The exact sweep against an independent reference, against the official grid scan, and against p-values."""

import numpy as np
import pytest

from paperkit.methods.conformal import FoldScores, cross_conformal_sets, fold_pvalues
from paperkit.methods.conformal.combiners import COMBINER_CODE, METHODS, combine, in_set, method_level
from paperkit.methods.conformal.kernels import (
    grid_pvalues,
    grid_scan_sets,
    run_sweep,
    sweep_sets,
    sweep_sets_reference,
    sweep_sets_serial,
)
from paperkit.methods.conformal.sets import PredictionSets

COMB = [m for m, d in METHODS.items() if d.kind == "combiner"]


def _problem(rng, T=6, sizes=(7, 6, 7, 6), integer=False, scaled=False):
    K = len(sizes)
    per_fold = [rng.integers(0, 6, s).astype(float) if integer else rng.exponential(1.0, s) for s in sizes]
    fs = FoldScores.from_folds(per_fold)
    mu = rng.integers(-2, 3, (T, K)).astype(float) if integer else rng.normal(0, 0.5, (T, K))
    scale = rng.uniform(0.5, 2.0, (T, K)) if scaled else np.ones((T, K))
    return mu, scale, fs, rng.random(T)


def _codes_levels(n, K, alpha=0.1, methods=COMB):
    codes = np.array([COMBINER_CODE[METHODS[m].combiner] for m in methods])
    levels = np.array([method_level(m, alpha, n, K) for m in methods])
    return codes, levels


@pytest.mark.parametrize("integer,scaled", [(False, False), (True, False), (False, True), (True, True)])
def test_sweep_equals_reference(integer, scaled):
    rng = np.random.default_rng(11 + 2 * integer + scaled)
    for alpha in (0.1, 0.25, 0.5):
        mu, scale, fs, u = _problem(rng, integer=integer, scaled=scaled)
        codes, levels = _codes_levels(fs.n, fs.n_folds, alpha)
        offsets, lowers, uppers = run_sweep(mu, scale, fs.scores, fs.fold_start, u, codes, levels)
        ref = sweep_sets_reference(mu, scale, fs.scores, fs.fold_start, u, codes, levels)
        for j in range(len(codes)):
            got = PredictionSets(offsets[j], lowers[j], uppers[j]).to_lists()
            assert got == [ref[t][j] for t in range(len(mu))]


def test_integer_ties_give_degenerate_and_unbounded_pieces():
    # Coincident opposite endpoints can make an isolated point; tiny folds make sets unbounded.
    rng = np.random.default_rng(5)
    seen_point = seen_inf = False
    for _ in range(30):
        mu, scale, fs, u = _problem(rng, T=8, sizes=(3, 3, 3), integer=True)
        codes, levels = _codes_levels(fs.n, fs.n_folds, 0.3)
        offsets, lowers, uppers = run_sweep(mu, scale, fs.scores, fs.fold_start, u, codes, levels)
        ref = sweep_sets_reference(mu, scale, fs.scores, fs.fold_start, u, codes, levels)
        for j in range(len(codes)):
            got = PredictionSets(offsets[j], lowers[j], uppers[j]).to_lists()
            assert got == [ref[t][j] for t in range(len(mu))]
            seen_point |= bool(np.any(lowers[j] == uppers[j]))
            seen_inf |= bool(np.any(np.isinf(lowers[j])))
    assert seen_point and seen_inf


def test_parallel_and_serial_kernels_agree_and_overflow_is_recomputed():
    rng = np.random.default_rng(6)
    mu, scale, fs, u = _problem(rng, T=40, sizes=(30, 30, 30), integer=True, scaled=True)
    codes, levels = _codes_levels(fs.n, fs.n_folds, 0.2)
    outs = []
    for kernel in (sweep_sets, sweep_sets_serial):
        lo = np.empty((40, len(codes), 64))
        hi = np.empty((40, len(codes), 64))
        cnt = np.empty((40, len(codes)), dtype=np.int64)
        kernel(mu, scale, fs.scores, fs.fold_start, u, codes, levels, 64, lo, hi, cnt)
        outs.append((lo, hi, cnt))
    assert np.array_equal(outs[0][2], outs[1][2])
    # cap = 1 forces the overflow path; the result must not change
    small = run_sweep(mu, scale, fs.scores, fs.fold_start, u, codes, levels, cap=1)
    large = run_sweep(mu, scale, fs.scores, fs.fold_start, u, codes, levels, cap=64)
    assert np.array_equal(small[0], large[0])
    for a, b in zip(small[1] + small[2], large[1] + large[2], strict=True):
        assert np.array_equal(a, b)


def test_exact_sets_match_a_10000_point_grid():
    # Checked: the breakpoint computation agrees with the official grid scan up to the grid step.
    rng = np.random.default_rng(7)
    K, m = 5, 20
    fs = FoldScores.from_folds([np.abs(rng.standard_normal(m)) for _ in range(K)])
    T = 25
    mu = rng.normal(0, 0.3, (T, K))
    u = rng.random(T)
    codes, levels = _codes_levels(fs.n, K, 0.1)
    grid = np.linspace(-6, 6, 10_000)
    step = grid[1] - grid[0]
    offsets, lowers, uppers = run_sweep(mu, np.ones_like(mu), fs.scores, fs.fold_start, u, codes, levels)
    gridded = grid_scan_sets(mu, np.ones_like(mu), fs.scores, fs.fold_start, u, codes, levels, grid)
    for j in range(len(codes)):
        exact = PredictionSets(offsets[j], lowers[j], uppers[j])
        for t in range(T):
            ex, gr = exact.segments(t), gridded[t][j]
            assert len(ex) == len(gr)
            for (a, b), (c, d) in zip(ex, gr, strict=True):
                assert (c == grid[0]) if a == -np.inf else (a <= c <= a + step)
                assert (d == grid[-1]) if b == np.inf else (b - step <= d <= b)
            # and membership agrees at every grid point
            inside = np.zeros(len(grid), dtype=bool)
            for a, b in ex:
                inside |= (grid >= a) & (grid <= b)
            p = grid_pvalues(mu[t:t + 1], np.ones((1, K)), fs.scores, fs.fold_start, grid)[0]
            name = METHODS[COMB[j]].combiner
            if name == "vovk":
                value = (1 + (p * (m + 1) - 1).sum(axis=1)) / (fs.n + 1)
            else:
                value = combine(p, name, u[t])
            assert np.array_equal(inside, in_set(value, levels[j]))


def test_membership_matches_fold_pvalues_at_the_observed_target():
    rng = np.random.default_rng(8)
    mu, scale, fs, u = _problem(rng, T=300, sizes=(10, 10, 10, 10, 10), scaled=True)
    y = rng.normal(0, 1.5, 300)
    sets = cross_conformal_sets(mu, scale, fs, ["mod", "e-mod", "eu-mod", "cross", "bonferroni"], 0.1, u)
    p = fold_pvalues(mu, scale, fs, y)
    assert np.array_equal(sets["mod"].contains(y), p.mean(axis=1) > 0.1 + 1e-12)
    assert np.array_equal(sets["e-mod"].contains(y), in_set(combine(p, "e"), 0.1))
    assert np.array_equal(sets["eu-mod"].contains(y), in_set(combine(p, "eu", u), 0.1))
    assert np.array_equal(sets["bonferroni"].contains(y), in_set(p.min(axis=1), 0.1 / 5))
    pooled = (1 + (p * 11 - 1).sum(axis=1)) / 51
    assert np.array_equal(sets["cross"].contains(y), in_set(pooled, 0.1))


# sha256 of run_sweep's output on 24 seeded problems (all combiners, ties, scales, alpha 0.05-0.5),
# computed with the full 2n-endpoint sweep before the tail-skipping kernel of issue 27.
FULL_SWEEP_DIGEST = "4aa36124ba4e23856dc205c320ad7e640bb56a31a243e13ec4a66d8aa3f41fde"


def _sweep_digest():
    import hashlib

    h = hashlib.sha256()
    rng = np.random.default_rng(2027)
    for case in range(24):
        integer, scaled = case % 2 == 1, case % 3 == 0
        sizes = rng.integers(2, 40, rng.integers(2, 7))
        per = [rng.integers(0, 6, s).astype(float) if integer else rng.exponential(1.0, s) for s in sizes]
        fs = FoldScores.from_folds(per)
        T, K = 30, len(sizes)
        mu = rng.integers(-2, 3, (T, K)).astype(float) if integer else rng.normal(0, 0.5, (T, K))
        scale = rng.uniform(0.5, 2.0, (T, K)) if scaled else np.ones((T, K))
        u = rng.random(T)
        codes, levels = _codes_levels(fs.n, K, [0.05, 0.1, 0.25, 0.5][case % 4])
        off, lo, hi = run_sweep(mu, scale, fs.scores, fs.fold_start, u, codes, levels)
        h.update(off.tobytes())
        for a, b in zip(lo, hi, strict=True):
            h.update(a.tobytes())
            h.update(b.tobytes())
    return h.hexdigest()


def test_sweep_output_is_unchanged_by_the_tail_skipping_kernel():
    assert _sweep_digest() == FULL_SWEEP_DIGEST


@pytest.mark.parametrize("integer,scaled", [(False, False), (True, False), (False, True), (True, True)])
def test_tail_skipping_sweep_equals_the_full_sweep_bit_for_bit(integer, scaled):
    from paperkit.methods.conformal.kernels import sweep_sets_full

    rng = np.random.default_rng(41 + 2 * integer + scaled)
    for trial in range(6):
        sizes = tuple(int(s) for s in rng.integers(30, 120, rng.integers(2, 11)))
        mu, scale, fs, u = _problem(rng, T=25, sizes=sizes, integer=integer, scaled=scaled)
        mu = mu + rng.normal(0, 3.0) * (trial % 2)  # sets away from 0 too
        for alpha in (0.05, 0.1, 0.3):
            for methods in (COMB, ["e-mod"], ["bonferroni", "mod"]):
                codes, levels = _codes_levels(fs.n, fs.n_folds, alpha, methods)
                T, M, cap = len(mu), len(codes), 16
                got = [np.zeros((T, M, cap)), np.zeros((T, M, cap)), np.empty((T, M), dtype=np.int64)]
                ref = [np.zeros((T, M, cap)), np.zeros((T, M, cap)), np.empty((T, M), dtype=np.int64)]
                sweep_sets_serial(mu, scale, fs.scores, fs.fold_start, u, codes, levels, cap, *got)
                sweep_sets_full(mu, scale, fs.scores, fs.fold_start, u, codes, levels, cap, *ref)
                assert np.array_equal(got[2], ref[2])
                keep = np.arange(cap)[None, None, :] < got[2][:, :, None]
                assert np.array_equal(got[0][keep], ref[0][keep]) and np.array_equal(got[1][keep], ref[1][keep])
