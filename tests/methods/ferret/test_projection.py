"""Shared-randomness projection: rho, the bases' distribution, unbiasedness, K scaling, replay, allocation."""

import math

import numpy as np
import pytest
import torch
from scipy import integrate, stats

from paperkit.core.errors import ConfigError
from paperkit.methods.ferret import (
    Blocks,
    allocate,
    iter_bases,
    project,
    reconstruct,
    truncated_normal_variance,
)
from paperkit.methods.ferret.projection import CHUNK_FLOATS, project_reconstruct


def _rho_by_quadrature(a):
    num = integrate.quad(lambda x: x * x * math.exp(-x * x / 2), -a, a, epsabs=0, epsrel=1e-13)[0]
    den = integrate.quad(lambda x: math.exp(-x * x / 2), -a, a, epsabs=0, epsrel=1e-13)[0]
    return num / den


@pytest.mark.parametrize("a", [1e-4, 1 / math.sqrt(2410), 0.009, 0.011, 0.1, 0.5, 2.0])
def test_rho_matches_quadrature(a):
    assert truncated_normal_variance(a) == pytest.approx(_rho_by_quadrature(a), rel=1e-9)
    if a > 0.05:
        assert truncated_normal_variance(a) == pytest.approx(stats.truncnorm(-a, a).var(), rel=1e-9)


def test_bases_follow_the_truncated_normal():
    # d_l = 4 → a = 0.5; 20,000 bases give 80,000 entries: compare the whole law with scipy's truncnorm
    x = torch.cat([c.flatten() for _, c in iter_bases(7, 0, 4, 20000)]).double().numpy()
    assert np.abs(x).max() <= 0.5
    assert stats.kstest(x, stats.truncnorm(-0.5, 0.5).cdf).pvalue > 1e-3
    assert x.var() == pytest.approx(truncated_normal_variance(0.5), rel=0.03)


def test_bases_are_generated_in_bounded_chunks_and_replayed():
    d = CHUNK_FLOATS // 3 + 5  # 2 rows per chunk
    chunks = list(iter_bases(3, 1, d, 5))
    assert [c.shape[0] for _, c in chunks] == [2, 2, 1]
    assert all(c.numel() <= CHUNK_FLOATS for _, c in chunks)
    again = list(iter_bases(3, 1, d, 5))
    assert all(torch.equal(a[1], b[1]) for a, b in zip(chunks, again, strict=False))
    assert not torch.equal(chunks[0][1], next(iter_bases(3, 2, d, 5))[1])  # another block, another stream


def test_reconstruction_equals_a_brute_force_reference():
    torch.manual_seed(0)
    blocks = Blocks.from_sizes([30, 50, 20])
    counts = [3, 7, 2]
    delta = torch.randn(100, dtype=torch.float64)
    gamma = project(delta, 11, blocks, counts)
    rebuilt = reconstruct(gamma, 11, blocks, counts, dtype=torch.float64)
    # reference: the whole block matrices, gamma = Vᵀ Delta / (rho K), Delta_hat = V gamma
    for blk, (sl, k) in enumerate(zip(blocks.slices(), counts, strict=False)):
        V = torch.cat([c for _, c in iter_bases(11, blk, sl.stop - sl.start, k, dtype=torch.float64)]).T
        rho = _rho_by_quadrature(1 / math.sqrt(sl.stop - sl.start))
        g = V.T @ delta[sl] / (rho * k)
        off = sum(counts[:blk])
        torch.testing.assert_close(gamma[off:off + k], g, rtol=1e-9, atol=1e-12)
        torch.testing.assert_close(rebuilt[sl], V @ g, rtol=1e-9, atol=1e-12)


def test_unbiased_reconstruction_d2000():
    """Unbiased reconstruction: the mean of Delta_hat over 2,000 seeds is within 5% of Delta; projected scale in [0.95, 1.05]."""
    torch.set_num_threads(1)
    d, n = 2000, 2000
    delta = torch.randn(d, generator=torch.Generator().manual_seed(1))
    # blocks of 100 with 50 bases each keep the cost low; the mean's error ≈ sqrt(d_l/(K_l n)) = 0.032
    blocks, counts = Blocks.equal(d, 20), [50] * 20
    mean = torch.zeros(d, dtype=torch.float64)
    for s in range(n):
        mean += project_reconstruct(delta, s, blocks, counts)[1].double()
    mean /= n
    rel = float((mean - delta).norm() / delta.norm())
    assert rel < 0.05
    # one block of d = 2000 (a = 1/sqrt(2000), rho ≈ 1/(3d)): <Delta_hat, Delta> / ||Delta||² averages to 1
    single = Blocks.equal(d, 1)
    ratios = [float(project_reconstruct(delta, 10_000 + s, single, [10])[1] @ delta / (delta @ delta))
              for s in range(n)]
    assert 0.95 <= np.mean(ratios) <= 1.05
    # a rho off by the Gaussian's variance (1 instead of ≈ 1/(3d)) would give a ratio ≈ 1/(3d): far outside


@pytest.mark.slow
def test_cosine_scales_like_sqrt_k():
    """Cosine vs K at d = 1e5, K = 350: cosine ≈ 0.059 in [0.045, 0.07]; 4K doubles it (ratio in [1.7, 2.3])."""
    torch.set_num_threads(1)
    d = 100_000
    delta = torch.randn(d, generator=torch.Generator().manual_seed(2))
    blocks = Blocks.equal(d, 1)

    def cosine(k, seeds):
        return np.mean([float(torch.nn.functional.cosine_similarity(
            project_reconstruct(delta, s, blocks, [k])[1], delta, dim=0)) for s in seeds])

    c1, c4 = cosine(350, range(3)), cosine(1400, range(100, 101))  # cosines vary by ~2% per seed
    assert 0.045 <= c1 <= 0.07
    assert 1.7 <= c4 / c1 <= 2.3


def test_seed_replay_is_exact_and_uplink_is_sum_k_plus_a_seed():
    """The server's rebuild from (seed, gamma) is bit-identical to the client's."""
    torch.manual_seed(3)
    blocks = Blocks.from_sizes([500, 1500, 37])
    delta = torch.randn(blocks.dim)
    counts = allocate(60, blocks, delta, "norm")
    gamma, client_side = project_reconstruct(delta, 123456789, blocks, counts)
    assert torch.equal(gamma, project(delta, 123456789, blocks, counts))
    server_side = reconstruct(gamma.clone(), 123456789, blocks, counts)
    assert torch.equal(client_side, server_side)
    assert gamma.numel() == sum(counts) == 60


def test_federation_messages_replay_exactly():
    from paperkit.methods import ferret

    task = ferret.digits_task(6, 0.5, seed=0)
    for alloc in ("uniform", "norm"):
        fed = ferret.Federation(task, ferret.FedConfig(algo="ferret", n_clients=6, fraction=0.5, k=40, local_steps=3,
                                             alloc=alloc))
        state = fed.initial_state()
        msg = fed.client_update(state.weights, 0, 2)
        w_local = state.weights.clone()
        # the client's own rebuild (from its gamma) and the server's decode agree bit for bit
        assert torch.equal(fed.decode(msg), reconstruct(msg.payload, msg.seed, fed.blocks, msg.counts))
        assert msg.uplink_floats == sum(msg.counts) == 40
        extra = 4 * fed.blocks.n_blocks if alloc == "norm" else 0
        assert msg.uplink_bytes(alloc) == 4 * 40 + 8 + extra  # floats + one 8-byte seed (+ counts for norm)
        assert torch.equal(state.weights, w_local)  # local training did not touch the global weights


def test_norm_allocation_beats_uniform_on_unequal_blocks():
    """Norm allocation: blocks whose update norms differ 10×: K_l ∝ ||Delta_l|| gives lower mean error."""
    gen = torch.Generator().manual_seed(4)
    blocks = Blocks.equal(2000, 2)
    delta = torch.cat([10 * torch.randn(1000, generator=gen), torch.randn(1000, generator=gen)])
    errors = {}
    for how in ("norm", "uniform"):
        counts = allocate(100, blocks, delta, how)
        errors[how] = np.mean([float((project_reconstruct(delta, s, blocks, counts)[1] - delta).norm())
                               for s in range(30)])
    assert allocate(100, blocks, delta, "norm")[0] > 80
    assert errors["norm"] < 0.85 * errors["uniform"]


def test_allocate_sums_to_k_and_validates():
    blocks = Blocks.from_sizes([10, 1000, 90])
    delta = torch.ones(1100)
    for how in ("norm", "uniform", "dim"):
        c = allocate(20, blocks, delta, how)
        assert sum(c) == 20 and min(c) >= 1
    assert allocate(20, blocks, delta, "dim") == [1, 17, 2]
    assert allocate(3, blocks, torch.zeros(1100), "norm") == [1, 1, 1]
    with pytest.raises(ConfigError, match="smaller than the number of blocks"):
        allocate(2, blocks, delta, "uniform")
    with pytest.raises(ConfigError):
        allocate(5, blocks, delta, "bogus")


def test_auto_blocks_follow_the_median_rule():
    # tensors 2048, 32, 320, 10 (the digits MLP): median 176 → closes after 2048, after 32+320, then 10
    assert Blocks.from_tensor_sizes([2048, 32, 320, 10]).sizes == [2048, 352, 10]
    assert Blocks.from_tensor_sizes([5, 6], "tensor").sizes == [5, 6]
    assert Blocks.equal(10, 3).sizes == [4, 3, 3]
    with pytest.raises(ConfigError):
        Blocks.equal(10, 11)


@pytest.mark.gpu
def test_cuda_replay_and_a_round():
    """On CUDA: bases are drawn on the device, the server's rebuild equals the client's, a round runs."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    from paperkit.methods import ferret

    blocks = Blocks.from_sizes([5000, 20000])
    delta = torch.randn(blocks.dim, device="cuda")
    gamma, client_side = project_reconstruct(delta, 9, blocks, [20, 30])
    assert torch.equal(client_side, reconstruct(gamma, 9, blocks, [20, 30], device="cuda"))
    task = ferret.digits_task(4, None, seed=0)
    fed = ferret.Federation(task, ferret.FedConfig(n_clients=4, fraction=0.5, local_steps=2, k=20, device="cuda"))
    state, row, _ = fed.run_round(fed.initial_state(), [])
    assert state.weights.is_cuda and np.isfinite(row["test_loss"])
