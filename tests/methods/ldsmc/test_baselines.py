"""PFLD and LatentDAPS on the linear-Gaussian toy, where every density they target is known in closed form."""

import math

import pytest
import torch

from paperkit.methods.ldsmc import baselines
from paperkit.methods.ldsmc.models import Schedule
from paperkit.methods.ldsmc.operators import MatrixOperator
from paperkit.methods.ldsmc.toy import chain_marginal, gaussian_posterior, gaussian_prior

D, STEPS = 4, 10


@pytest.fixture(scope="module")
def toy():
    torch.set_num_threads(1)
    mean, std = torch.linspace(-0.5, 0.5, D), torch.linspace(0.6, 1.2, D)
    sched = Schedule(200)
    return gaussian_prior(mean, std, sched), mean, std, sched


@pytest.mark.parametrize("observed", [True, False])
def test_langevin_stationary_law_is_the_gaussian_posterior(toy, observed):
    """With D and A the identity, LatentDAPS's Langevin targets N(z; ẑ_0, r²)·N(y; z, β²): a Gaussian with
    mean (ẑ_0/r² + y/β²)/(1/r² + 1/β²) and variance s² = 1/(1/r² + 1/β²); the unadjusted chain with step
    η = lr·s² has the exact stationary variance s²/(1 − lr/2). With A = 0 it reduces to N(ẑ_0, r²/(1 − lr/2))."""
    prior = toy[0]
    B, r2, beta, lr = 4000, 0.5, 0.3, 0.2
    A = torch.eye(D) if observed else torch.zeros(D, D)
    z0_hat = torch.linspace(-1, 1, D).expand(B, D)
    y = torch.full((B, D), 0.7)
    z = baselines.langevin_posterior(prior, MatrixOperator(A), y, z0_hat, r2, beta, steps=200, lr=lr,
                                     gen=torch.Generator().manual_seed(0))
    prec = 1 / r2 + (1 / beta**2 if observed else 0.0)
    mean = (z0_hat[0] / r2 + (y[0] / beta**2 if observed else 0.0)) / prec
    var = (1 / prec) / (1 - lr / 2)
    # the step is lr/(1/r² + 1/β²) whatever A is, so with A = 0 it is lr·s²·(r²-precision share)
    if not observed:
        eta = lr / (1 / r2 + 1 / beta**2)
        var = 2 * eta / (1 - (1 - eta / r2) ** 2)
    assert torch.allclose(z.mean(0), mean, atol=4 * math.sqrt(var / B)), (z.mean(0), mean)
    assert torch.allclose(z.var(0), torch.full((D,), var), rtol=0.06), (z.var(0), var)


def test_ode_denoise_is_tweedie_in_one_step_and_the_exact_flow_in_many(toy):
    """ẑ_0 of one ODE step is Tweedie's estimate; with many steps it is the probability-flow map of the Gaussian
    prior, z_0 = m + s(z_t − √ᾱ m)/√(ᾱs² + 1 − ᾱ) per coordinate."""
    prior, m, s, sched = toy
    t = 150
    z = torch.randn(64, D, generator=torch.Generator().manual_seed(1))
    a = sched.abar(t)
    from paperkit.methods.ldsmc.smc import tweedie

    assert torch.allclose(baselines.ode_denoise(prior, z, t, 1), tweedie(prior, z, t)[1], rtol=1e-6, atol=1e-6)
    flow = m + s * (z - math.sqrt(a) * m) / torch.sqrt(a * s**2 + 1 - a)
    one = (baselines.ode_denoise(prior, z, t, 1) - flow).abs().max()
    many = (baselines.ode_denoise(prior, z, t, 100) - flow).abs().max()
    assert many < 0.02 and many < one / 5, (float(one), float(many))


def test_cauchy_weights_and_pfld_weights_are_normalised(toy):
    """PFLD's log-weight is −log(1 + r²/(m c²)); its returned weights sum to 1 per image, and with A = 0 every
    particle has the same likelihood, so the weights are uniform and the ESS is N."""
    r2 = torch.tensor([0.0, 1.0, 4.0])
    assert torch.allclose(baselines.cauchy_log_weights(r2, 4, 0.5), -torch.log(1 + r2 / (4 * 0.25)))
    prior = toy[0]
    y = torch.randn(6, 3, generator=torch.Generator().manual_seed(0))
    r = baselines.pfld(prior, MatrixOperator(torch.eye(3, D)), y, steps=STEPS, particles=8, seed=0)
    assert torch.allclose(r.weights.sum(1), torch.ones(6, dtype=torch.float64))
    assert r.weights.shape == (6, 8) and r.particles.shape[:2] == (6, 8)
    assert float(r.weights.max()) > 1 / 8 + 1e-3  # informative A: the weights differ (this can fail)
    flat = baselines.pfld(prior, MatrixOperator(torch.zeros(3, D)), y, steps=STEPS, particles=8, seed=0)
    assert torch.allclose(flat.weights, torch.full((6, 8), 1 / 8, dtype=torch.float64))
    assert torch.allclose(flat.ess, torch.full_like(flat.ess, 8.0))


@pytest.mark.parametrize("method", ["pfld", "latentdaps"])
def test_baselines_beat_the_unconditional_prior_on_the_toy(toy, method):
    """Two of four coordinates observed with τ = 0.1. On the observed coordinates the restorations are far
    closer to the exact posterior mean than prior draws are, and close to exact posterior draws (the
    posterior variance); over all coordinates they are still closer than prior draws. (LatentDAPS's
    N(ẑ_0, r_t²) step over-disperses the unobserved ones: 1.0–1.3 against the exact 0.74–1.08 here.)"""
    prior, m0, s0, sched = toy
    m, v = chain_marginal(m0, s0, sched, STEPS)
    g = torch.Generator().manual_seed(2)
    A, tau, B = torch.eye(2, D), 0.1, 256
    truth = prior_draws(m, v, B, g).float()
    y = truth @ A.T + tau * torch.randn(B, 2, generator=g)
    post_mean, post_cov = gaussian_posterior(m, v, A, y, tau)
    if method == "pfld":
        z = baselines.pfld(prior, MatrixOperator(A), y, steps=STEPS, particles=8, zeta=0.5, seed=0).latents
    else:
        z = baselines.latent_daps(prior, MatrixOperator(A), y, tau, steps=STEPS, seed=0).latents
    sq, prior_sq = (z.double() - post_mean) ** 2, (prior_draws(m, v, B, g) - post_mean) ** 2
    seen, exact = slice(0, 2), torch.diagonal(post_cov)
    assert float(prior_sq[:, seen].sum(1).mean()) > 0.5  # informative: beating the prior is not free
    assert float(sq[:, seen].sum(1).mean()) < 0.15 * float(prior_sq[:, seen].sum(1).mean()), (sq.mean(0), exact)
    assert float(sq[:, seen].sum(1).mean()) < 6 * float(exact[seen].sum()), (sq.mean(0), exact)
    assert float(sq.sum(1).mean()) < float(prior_sq.sum(1).mean()), (sq.mean(0), prior_sq.mean(0))


def prior_draws(m, v, n, gen):
    return m + v.sqrt() * torch.randn(n, len(m), generator=gen, dtype=torch.float64)
