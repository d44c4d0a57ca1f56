"""Baselines on the same latent prior and DDIM(η = 1) time grid as LD-SMC (spec "Baselines").

* :func:`latent_dps` — DPS in latent space (Chung et al. 2023; "LDPS"): the DDIM step minus
  ζ·∇_{z_{t+1}}‖y − A(D(ẑ_0))‖ (the norm, not its square, as DPS does).
* :func:`psld` — LDPS plus the "gluing" term γ·∇‖ẑ_0 − E(A⁺y + (I − A⁺A)D(ẑ_0))‖ (Rout et al. 2023).
* :func:`resample` — ReSample (Song et al. 2024): hard data consistency by latent optimisation every few
  steps, followed by stochastic re-noising N((σ²√ᾱ ẑ* + (1−ᾱ) z')/(σ² + 1−ᾱ), σ²(1−ᾱ)/(σ² + 1−ᾱ)).
* :func:`pfld` — PFLD (Nazemi et al. 2024): N particles follow PSLD steps through the early stage of the
  chain, weighted by a Cauchy likelihood of their Tweedie residual and resampled every step; the
  best-weighted particle then finishes the chain alone.
* :func:`latent_daps` — LatentDAPS (Zhang et al. 2025, "decoupled annealing"): at each noise level, ẑ_0 by
  the probability-flow ODE (DDIM η = 0) from z_t, Langevin dynamics on p(z_0|z_t, y) ∝
  N(z_0; ẑ_0, r_t²I)·N(y; A(D(z_0)), β²I) with r_t the level's noise-to-signal ratio, then fresh noise
  z_{t'} = √ᾱ_{t'}z_0 + √(1−ᾱ_{t'})ε at the next level.
* ``ltds`` and ``bootstrap`` are :func:`paperkit.methods.ldsmc.smc.ldsmc` with other proposals;
  ``lsq`` is the pixel least-squares fit used by the first Gibbs pass.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import torch

from .models import LatentPrior, ddim_coefficients
from .operators import Operator
from .smc import latent_refine, tweedie


@dataclass
class SampleResult:
    restored: torch.Tensor  # (B, C, H, W)
    latents: torch.Tensor  # (B, *latent)
    seconds: float = 0.0


def _guided_step(prior: LatentPrior, z: torch.Tensor, t_cur: int, t_prev: int, gen: torch.Generator,
                 loss_fn) -> tuple[torch.Tensor, torch.Tensor]:
    """One DDIM(η = 1) step minus ∇_z of ``loss_fn(ẑ_0)`` (per row); returns (z_prev, ẑ_0(z))."""
    with torch.enable_grad():
        zz = z.detach().requires_grad_(True)
        e, z0 = tweedie(prior, zz, t_cur)
        loss = loss_fn(z0)
        grad = torch.autograd.grad(loss.sum(), zz)[0]
    a_cur, a_prev, sigma, c = ddim_coefficients(prior.schedule, t_cur, t_prev)
    z0, e = z0.detach(), e.detach()
    return math.sqrt(a_prev) * z0 + c * e + sigma * torch.randn(z.shape, generator=gen) - grad, z0


def _guided_ddim(prior: LatentPrior, op: Operator, y: torch.Tensor, steps: int, gen: torch.Generator,
                 loss_fn) -> torch.Tensor:
    z = torch.randn((y.shape[0], *prior.latent_shape), generator=gen)
    ts = prior.schedule.timesteps(steps)
    for t_cur, t_prev in zip(ts[:-1], ts[1:], strict=False):
        z, _ = _guided_step(prior, z, t_cur, t_prev, gen, loss_fn)
    return z


def latent_dps(prior: LatentPrior, op: Operator, y: torch.Tensor, *, steps: int = 50, zeta: float = 1.0,
               seed: int = 0) -> SampleResult:
    start = time.perf_counter()
    gen = torch.Generator().manual_seed(seed)

    def loss(z0: torch.Tensor) -> torch.Tensor:
        return zeta * ((y - op(prior.decode(z0))) ** 2).flatten(1).sum(1).clamp_min(1e-12).sqrt()

    with torch.no_grad():
        z = _guided_ddim(prior, op, y, steps, gen, loss)
        x = prior.decode(z)
    return SampleResult(x, z, time.perf_counter() - start)


def _psld_loss(prior: LatentPrior, op: Operator, y: torch.Tensor, zeta: float, gamma: float):
    """ζ‖y − A(D(ẑ_0))‖ + γ‖ẑ_0 − E(A⁺y + (I − A⁺A)D(ẑ_0))‖ per row (PSLD's objective)."""
    def loss(z0: torch.Tensor) -> torch.Tensor:
        x0 = prior.decode(z0)
        fit = ((y - op(x0)) ** 2).flatten(1).sum(1).clamp_min(1e-12).sqrt()
        glued = prior.encode(op.project(x0, y))
        glue = ((z0 - glued) ** 2).flatten(1).sum(1).clamp_min(1e-12).sqrt()
        return zeta * fit + gamma * glue

    return loss


def psld(prior: LatentPrior, op: Operator, y: torch.Tensor, *, steps: int = 50, zeta: float = 1.0,
         gamma: float = 0.1, seed: int = 0) -> SampleResult:
    start = time.perf_counter()
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        z = _guided_ddim(prior, op, y, steps, gen, _psld_loss(prior, op, y, zeta, gamma))
        x = prior.decode(z)
    return SampleResult(x, z, time.perf_counter() - start)


@dataclass
class ParticleResult(SampleResult):
    particles: torch.Tensor | None = None  # (B, N, C, H, W) decoded particles at the end of the particle stage
    weights: torch.Tensor | None = None  # (B, N) normalised weights of those particles
    ess: torch.Tensor | None = None  # (K,) mean ESS over images before each resampling


def cauchy_log_weights(residual_sq: torch.Tensor, m: int, scale: float) -> torch.Tensor:
    """log of PFLD's Cauchy likelihood 1/(1 + r²/(m·c²)) of a squared residual r² over m measurements."""
    return -torch.log1p(residual_sq / (m * scale**2))


def pfld(prior: LatentPrior, op: Operator, y: torch.Tensor, *, steps: int = 50, particles: int = 8,
         zeta: float = 1.0, gamma: float = 0.1, scale: float = 0.1, stage: float = 0.5, seed: int = 0) -> ParticleResult:
    """PFLD: ``particles`` PSLD chains per image over the first ``stage`` fraction of the steps, each step
    weighted by the Cauchy likelihood (scale c per measured value) of ‖y − A(D(ẑ_0))‖² and resampled
    (multinomial); then the particle with the largest weight continues alone (PSLD) to t = 0."""
    from .smc import _multinomial, ess

    start = time.perf_counter()
    gen = torch.Generator().manual_seed(seed)
    B, N = y.shape[0], particles
    opN, yN = op.repeat(N), y.repeat_interleave(N, 0)
    ts = prior.schedule.timesteps(steps)
    n_pf = max(1, round(stage * (len(ts) - 1)))
    z = torch.randn((B * N, *prior.latent_shape), generator=gen)
    m = op.measurement_size()
    ess_rows = []
    with torch.no_grad():
        lw = torch.zeros(B, N)
        for k, (t_cur, t_prev) in enumerate(zip(ts[:n_pf], ts[1:n_pf + 1], strict=False)):
            if k > 0:  # resample on the previous step's weights, then propagate
                z = z[_multinomial(lw, gen)]
            z, _ = _guided_step(prior, z, t_cur, t_prev, gen, _psld_loss(prior, opN, yN, zeta, gamma))
            z0 = tweedie(prior, z, t_prev)[1] if t_prev > 0 else z
            lw = cauchy_log_weights(((yN - opN(prior.decode(z0))) ** 2).flatten(1).sum(1), m, scale).view(B, N)
            ess_rows.append(ess(lw).mean())
        w = torch.softmax(lw.double(), 1)
        images = prior.decode(z).view(B, N, *prior.image_shape)
        z = z[lw.argmax(1) + torch.arange(B) * N]
        for t_cur, t_prev in zip(ts[n_pf:-1], ts[n_pf + 1:], strict=False):
            z, _ = _guided_step(prior, z, t_cur, t_prev, gen, _psld_loss(prior, op, y, zeta, gamma))
        x = prior.decode(z)
    return ParticleResult(x, z, time.perf_counter() - start, images, w, torch.stack(ess_rows))


def resample(prior: LatentPrior, op: Operator, y: torch.Tensor, tau: float, *, steps: int = 50, every: int = 5,
             opt_iters: int = 50, lr: float = 5e-2, gamma: float = 40.0, start_frac: float = 0.8,
             seed: int = 0) -> SampleResult:
    """ReSample: DDIM steps; every ``every`` steps once t < start_frac·T, optimise ẑ_0 for data consistency
    (early-stopped at residual τ²) and re-noise stochastically; a last consistency step on z_0."""
    start = time.perf_counter()
    gen = torch.Generator().manual_seed(seed)
    z = torch.randn((y.shape[0], *prior.latent_shape), generator=gen)
    ts = prior.schedule.timesteps(steps)
    with torch.no_grad():
        for k, (t_cur, t_prev) in enumerate(zip(ts[:-1], ts[1:], strict=False)):
            e, z0 = tweedie(prior, z, t_cur)
            a_cur, a_prev, sigma, c = ddim_coefficients(prior.schedule, t_cur, t_prev)
            z_uncond = math.sqrt(a_prev) * z0 + c * e + sigma * torch.randn(z.shape, generator=gen)
            if t_prev > 0 and t_cur < start_frac * prior.schedule.T and k % every == 0:
                z_star = latent_refine(prior, op, y, z0, tau, iters=opt_iters, lr=lr)
                s2 = gamma * (1 - a_prev) / a_cur * (1 - a_cur / a_prev)
                mean = (s2 * math.sqrt(a_prev) * z_star + (1 - a_prev) * z_uncond) / (s2 + 1 - a_prev)
                var = s2 * (1 - a_prev) / (s2 + 1 - a_prev)
                z = mean + math.sqrt(var) * torch.randn(z.shape, generator=gen)
            else:
                z = z_uncond
        z = latent_refine(prior, op, y, z, tau, iters=opt_iters, lr=lr)
        x = prior.decode(z)
    return SampleResult(x, z, time.perf_counter() - start)


def ode_denoise(prior: LatentPrior, z: torch.Tensor, t: int, ode_steps: int) -> torch.Tensor:
    """ẑ_0 by the probability-flow ODE from z_t: DDIM(η = 0) over ``ode_steps`` evenly spaced steps t → 0
    (one step is the Tweedie estimate)."""
    grid = torch.linspace(t, 0, max(1, ode_steps) + 1).round().long().unique_consecutive().tolist()
    for t_cur, t_prev in zip(grid[:-1], grid[1:], strict=False):
        e, z0 = tweedie(prior, z, t_cur)
        a_prev = prior.schedule.abar(t_prev)
        z = z0 if t_prev == 0 else math.sqrt(a_prev) * z0 + math.sqrt(1 - a_prev) * e
    return z


def langevin_posterior(prior: LatentPrior, op: Operator, y: torch.Tensor, z0_hat: torch.Tensor, r2: float,
                       beta: float, *, steps: int, lr: float, gen: torch.Generator) -> torch.Tensor:
    """Unadjusted Langevin on U(z) = ‖y − A(D(z))‖²/(2β²) + ‖z − ẑ_0‖²/(2r²) from ẑ_0, step η = lr/(1/r² + 1/β²)
    (the posterior variance were D and A the identity, so lr is free of the noise level; for that Gaussian
    target the chain's stationary law is N(mean, var/(1 − lr/2)))."""
    eta = lr / (1.0 / r2 + 1.0 / beta**2)
    z = z0_hat.clone()
    with torch.enable_grad():
        for _ in range(steps):
            zz = z.detach().requires_grad_(True)
            u = ((y - op(prior.decode(zz))) ** 2).sum() / (2 * beta**2) + ((zz - z0_hat) ** 2).sum() / (2 * r2)
            grad = torch.autograd.grad(u, zz)[0]
            z = zz.detach() - eta * grad + math.sqrt(2 * eta) * torch.randn(z.shape, generator=gen)
    return z


def latent_daps(prior: LatentPrior, op: Operator, y: torch.Tensor, tau: float, *, steps: int = 25, ode_steps: int = 5,
                langevin_steps: int = 20, lr: float = 0.5, lr_min_ratio: float = 0.01, beta: float | None = None,
                seed: int = 0) -> SampleResult:
    """LatentDAPS on the DDIM time grid: at each level ẑ_0 = ODE(z_t), z_0 ~ Langevin on p(z_0|z_t, y) with
    r_t² = (1−ᾱ_t)/ᾱ_t and β = τ unless given, then z_{t'} = √ᾱ_{t'}z_0 + √(1−ᾱ_{t'})ε; the Langevin step
    decays linearly from lr to lr·lr_min_ratio over the levels; the last level returns the ODE's ẑ_0 (as the
    official code does)."""
    start = time.perf_counter()
    gen = torch.Generator().manual_seed(seed)
    beta = tau if beta is None else beta
    ts = prior.schedule.timesteps(steps)
    levels = len(ts) - 1
    z = torch.randn((y.shape[0], *prior.latent_shape), generator=gen)
    with torch.no_grad():
        for k, (t_cur, t_prev) in enumerate(zip(ts[:-1], ts[1:], strict=False)):
            z0 = ode_denoise(prior, z, t_cur, ode_steps)
            if t_prev == 0:
                z = z0
                break
            a_cur, a_prev = prior.schedule.abar(t_cur), prior.schedule.abar(t_prev)
            step = lr * (1 + k / max(levels - 1, 1) * (lr_min_ratio - 1))
            z0 = langevin_posterior(prior, op, y, z0, (1 - a_cur) / a_cur, beta, steps=langevin_steps, lr=step,
                                    gen=gen)
            z = math.sqrt(a_prev) * z0 + math.sqrt(1 - a_prev) * torch.randn(z.shape, generator=gen)
        x = prior.decode(z)
    return SampleResult(x, z, time.perf_counter() - start)
