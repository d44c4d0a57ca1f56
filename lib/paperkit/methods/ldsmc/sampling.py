"""Unconditional DDIM(η = 1) sampling from the latent prior (for sample grids and sanity checks)."""

from __future__ import annotations

import math

import numpy as np
import torch

from .models import LatentPrior, ddim_coefficients
from .smc import tweedie


@torch.no_grad()
def sample_prior(prior: LatentPrior, n: int, steps: int = 50, seed: int = 0) -> np.ndarray:
    gen = torch.Generator().manual_seed(seed)
    z = torch.randn((n, *prior.latent_shape), generator=gen)
    ts = prior.schedule.timesteps(steps)
    for t_cur, t_prev in zip(ts[:-1], ts[1:], strict=False):
        e, z0 = tweedie(prior, z, t_cur)
        a_cur, a_prev, sigma, c = ddim_coefficients(prior.schedule, t_cur, t_prev)
        z = math.sqrt(a_prev) * z0 + c * e + sigma * torch.randn(z.shape, generator=gen)
    return prior.decode(z).numpy()
