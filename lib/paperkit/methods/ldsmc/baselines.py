"""Baselines on the same latent prior and DDIM(η = 1) time grid as LD-SMC (spec "Baselines").

* :func:`latent_dps` — DPS in latent space (Chung et al. 2023; "LDPS"): the DDIM step minus
  ζ·∇_{z_{t+1}}‖y − A(D(ẑ_0))‖ (the norm, not its square, as DPS does).
* :func:`psld` — LDPS plus the "gluing" term γ·∇‖ẑ_0 − E(A⁺y + (I − A⁺A)D(ẑ_0))‖ (Rout et al. 2023).
* :func:`resample` — ReSample (Song et al. 2024): hard data consistency by latent optimisation every few
  steps, followed by stochastic re-noising N((σ²√ᾱ ẑ* + (1−ᾱ) z')/(σ² + 1−ᾱ), σ²(1−ᾱ)/(σ² + 1−ᾱ)).
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


def _guided_ddim(prior: LatentPrior, op: Operator, y: torch.Tensor, steps: int, gen: torch.Generator,
                 loss_fn) -> torch.Tensor:
    z = torch.randn((y.shape[0], *prior.latent_shape), generator=gen)
    ts = prior.schedule.timesteps(steps)
    for t_cur, t_prev in zip(ts[:-1], ts[1:], strict=False):
        with torch.enable_grad():
            zz = z.detach().requires_grad_(True)
            e, z0 = tweedie(prior, zz, t_cur)
            loss = loss_fn(z0)
            grad = torch.autograd.grad(loss.sum(), zz)[0]
        a_cur, a_prev, sigma, c = ddim_coefficients(prior.schedule, t_cur, t_prev)
        z0, e = z0.detach(), e.detach()
        z = math.sqrt(a_prev) * z0 + c * e + sigma * torch.randn(z.shape, generator=gen) - grad
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


def psld(prior: LatentPrior, op: Operator, y: torch.Tensor, *, steps: int = 50, zeta: float = 1.0,
         gamma: float = 0.1, seed: int = 0) -> SampleResult:
    start = time.perf_counter()
    gen = torch.Generator().manual_seed(seed)

    def loss(z0: torch.Tensor) -> torch.Tensor:
        x0 = prior.decode(z0)
        fit = ((y - op(x0)) ** 2).flatten(1).sum(1).clamp_min(1e-12).sqrt()
        glued = prior.encode(op.project(x0, y))
        glue = ((z0 - glued) ** 2).flatten(1).sum(1).clamp_min(1e-12).sqrt()
        return zeta * fit + gamma * glue

    with torch.no_grad():
        z = _guided_ddim(prior, op, y, steps, gen, loss)
        x = prior.decode(z)
    return SampleResult(x, z, time.perf_counter() - start)


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
