"""Prop. 2's allocation (K_l ∝ ||Delta_l|| / rho_l) and the official per-block seed pools (issue 27)."""

import numpy as np
import pytest
import torch

from paperkit.core.errors import ConfigError
from paperkit.methods.ferret.projection import (
    Blocks,
    allocate,
    pool_subsets,
    project_pool,
    project_reconstruct,
    reconstruct_pool,
    seed_pool,
    truncated_normal_variance,
)


def test_prop2_matches_a_hand_computed_split():
    # blocks of 3 and 12 parameters, ||Delta_0|| = 2, ||Delta_1|| = 1, K = 12 (one each, 10 spare)
    b = Blocks.from_sizes([3, 12])
    delta = torch.zeros(15)
    delta[0], delta[3] = 2.0, 1.0
    rho0, rho1 = truncated_normal_variance(3 ** -0.5), truncated_normal_variance(12 ** -0.5)
    assert rho0 == pytest.approx(0.10620, abs=1e-4) and rho1 == pytest.approx(0.027469, abs=1e-5)
    # weights 2/rho0 = 18.83, 1/rho1 = 36.40 → shares of 10: 3.41, 6.59 → floors 3, 6; the spare one goes to
    # the larger remainder (block 1) → 1 + 3, 1 + 7
    assert allocate(12, b, delta, "prop2") == [4, 8]
    # norm: shares 6.67, 3.33 → 6 + 1 (larger remainder), 3 → [8, 4]; prop2 turns it around (rho_1 < rho_0)
    assert allocate(12, b, delta, "norm") == [8, 4]
    assert allocate(2, b, delta, "prop2") == [1, 1]            # K = L: one each
    # zero update: ∝ 1/rho_l alone: 9.42, 36.40 → 2.06, 7.94 of 10 → 2, 7 + the spare one → 1 + 2, 1 + 8
    assert allocate(12, b, torch.zeros(15), "prop2") == [3, 9]
    for k in (2, 7, 13, 100):
        c = allocate(k, b, delta, "prop2")
        assert sum(c) == k and min(c) >= 1


def test_norm_and_prop2_beat_uniform_when_blocks_differ_tenfold():
    b = Blocks.from_sizes([600, 200, 100])
    err = {how: [] for how in ("uniform", "norm", "prop2")}
    for s in range(6):
        delta = torch.randn(b.dim, generator=torch.Generator().manual_seed(s))
        for i, sl in enumerate(b.slices()):
            delta[sl] *= (10.0 if i == 0 else 1.0) / delta[sl].norm()
        for how in err:
            est = project_reconstruct(delta, 1000 + s, b, allocate(90, b, delta, how))[1]
            err[how].append(float((est - delta).norm() / delta.norm()))
    m = {how: float(np.mean(v)) for how, v in err.items()}
    assert m["norm"] < 0.8 * m["uniform"] and m["prop2"] < 0.8 * m["uniform"], m


def test_per_block_pool_subset_sizes_and_determinism():
    b = Blocks.from_sizes([50, 50, 50, 50])
    delta = torch.zeros(200)
    for i, norm in enumerate((10.0, 5.0, 1.0, 0.0)):
        delta[50 * i] = norm
    sizes, idx = pool_subsets(20, b, delta, pick_seed=7)
    # max(2, floor(20·||Delta_l|| / 10)): 20, 10, 2, 2
    assert sizes == [20, 10, 2, 2]
    assert len(idx) == sum(sizes)
    pos = 0
    for s in sizes:
        sub = idx[pos:pos + s]
        assert sub == sorted(set(sub)) and all(0 <= j < 20 for j in sub)  # a subset of the pool, no repeats
        pos += s
    assert idx[:20] == list(range(20))
    assert pool_subsets(20, b, delta, 7) == (sizes, idx)                   # same seed, same subsets
    assert pool_subsets(20, b, delta, 8)[1] != idx                         # another round seed, others
    assert pool_subsets(1, b, delta, 7)[0] == [1, 1, 1, 1]                 # a pool of one seed
    assert seed_pool(3, 5) == seed_pool(3, 5) and seed_pool(3, 5) != seed_pool(4, 5)
    with pytest.raises(ConfigError):
        pool_subsets(20, b, torch.full((200,), float("nan")), 7)


def test_per_block_pool_replays_and_averages_to_the_pools_projection():
    """Bases come from a pool fixed at start, so over rounds the mean of Delta_hat tends to the pool's own
    projection V_poolᵀV_pool Delta / (rho K) (subsets drawn uniformly), not to Delta: the fixed pool is a bias
    the per-round seeds of the run scheme do not have."""
    from paperkit.methods.ferret.projection import iter_bases

    b = Blocks.from_sizes([40, 60])
    delta = torch.randn(100, generator=torch.Generator().manual_seed(0))
    k = 30
    pool = seed_pool(0, k)
    total = torch.zeros(100, dtype=torch.float64)
    n = 300
    for r in range(n):
        counts, idx = pool_subsets(k, b, delta, r)
        gamma = project_pool(delta, pool, b, counts, idx)
        est = reconstruct_pool(gamma, pool, b, counts, idx)
        if r == 0:
            assert torch.equal(est, reconstruct_pool(gamma.clone(), pool, b, counts, idx))
        total += est.double()
    target = torch.zeros(100, dtype=torch.float64)
    for blk, (sl, d_l) in enumerate(zip(b.slices(), b.sizes, strict=True)):
        v = torch.stack([next(iter_bases(pool[j], blk, d_l, 1))[1][0] for j in range(k)]).double()
        target[sl] = v.T @ (v @ delta[sl].double()) / (truncated_normal_variance(d_l ** -0.5) * k)
    mean = total / n
    assert float((mean - target).norm() / target.norm()) < 0.1
    assert float((mean - delta.double()).norm() / delta.norm()) > 0.5   # the pool's bias, ~ sqrt(d_l / K)


def test_federation_with_per_block_pool_decodes_what_the_client_sent():
    from paperkit.methods import ferret
    from paperkit.methods.ferret.projection import reconstruct_pool as rp

    task = ferret.digits_task(6, 0.5, seed=0)
    fed = ferret.Federation(task, ferret.FedConfig(algo="ferret", n_clients=6, fraction=0.5, k=40, local_steps=2,
                                                   seed_pool="per-block"))
    msg = fed.client_update(fed.initial_state().weights, 0, 2)
    assert len(msg.counts) == fed.blocks.n_blocks and max(msg.counts) == 40 and min(msg.counts) >= 2
    assert msg.client == 2 and fed.client_update(fed.initial_state().weights, 0, 2).indices == msg.indices
    assert torch.equal(fed.decode(msg), rp(msg.payload, fed.ferret_pool, fed.blocks, msg.counts, msg.indices))
    assert msg.uplink_bytes("norm") == 4 * sum(msg.counts) + 8 + 4 * fed.blocks.n_blocks
    with pytest.raises(ConfigError):
        ferret.FedConfig(seed_pool="global").validate()


def test_zo_bias_stays_with_k_while_ferret_error_falls():
    """Thm. 3's point: on Σ x² + (1/3) Σ x³ the forward-difference estimate is biased by eps² per
    coordinate whatever K is; Ferret's projection of the exact update is unbiased, its error ~ sqrt(d/K)."""
    from paperkit.methods.ferret.recon import recon_study

    rows = recon_study(20, [20, 320], trials=60, cubic=1.0, zo_eps=1.0, check=False)
    r = {(x["method"], x["k"]): x for x in rows}
    zo_lo, zo_hi = r["zeroth-order", 20]["bias_debiased"], r["zeroth-order", 320]["bias_debiased"]
    assert zo_hi > 0.15 and zo_hi > 0.5 * zo_lo, (zo_lo, zo_hi)             # does not shrink with K
    assert r["zeroth-order", 320]["variance"] < 0.2 * r["zeroth-order", 20]["variance"]  # its variance does
    f_lo, f_hi = r["ferret", 20]["rel_error_mean"], r["ferret", 320]["rel_error_mean"]
    assert f_hi < 0.4 * f_lo, (f_lo, f_hi)                                  # ~ sqrt(20/320) = 0.25
    assert r["ferret", 320]["bias_debiased"] < 0.1 < zo_hi
    # on Σ x² alone the forward difference is unbiased: no such floor
    flat = {(x["method"], x["k"]): x for x in recon_study(20, [320], trials=60, zo_eps=1.0, check=False)}
    assert flat["zeroth-order", 320]["bias_debiased"] < 0.1
