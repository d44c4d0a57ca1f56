"""The linear-Gaussian toy: a prior where every posterior is known exactly.

Data z_0 ~ N(m, diag(s²)) in d dimensions, the identity as decoder/encoder and the analytic noise
prediction ε(z_t, t) = E[ε | z_t] = √(1−ᾱ)(z_t − √ᾱ m)/(ᾱ s² + 1 − ᾱ). Every DDIM(η = 1) step is then
affine-Gaussian, so the sampler's own marginal of z_0 is Gaussian with a mean and variance computed
exactly by :func:`chain_marginal`, and with y = A z_0 + N(0, τ²I) the posterior is the usual Gaussian one.
"""

from __future__ import annotations

import math

import torch

from .models import LatentPrior, Schedule, ddim_coefficients


def gaussian_prior(mean: torch.Tensor, std: torch.Tensor, schedule: Schedule | None = None) -> LatentPrior:
    mean, std = torch.as_tensor(mean, dtype=torch.float32), torch.as_tensor(std, dtype=torch.float32)
    schedule = schedule or Schedule(200)
    abar = schedule.alphas_bar.float()

    def eps(z: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        a = abar[t].view(-1, 1)
        return torch.sqrt(1 - a) * (z - torch.sqrt(a) * mean) / (a * std**2 + 1 - a)

    d = mean.numel()
    return LatentPrior(lambda x: x, lambda z: z, eps, schedule, (d,), (d,))


def chain_marginal(mean: torch.Tensor, std: torch.Tensor, schedule: Schedule, steps: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Exact mean and variance of z_0 under the DDIM(η = 1) chain with the analytic ε, from z_T ~ N(0, I)."""
    mean, var0 = mean.double(), std.double() ** 2
    m, v = torch.zeros_like(mean), torch.ones_like(mean)
    ts = schedule.timesteps(steps)
    for t_cur, t_prev in zip(ts[:-1], ts[1:], strict=False):
        a_cur, a_prev, sigma, c = ddim_coefficients(schedule, t_cur, t_prev)
        k = math.sqrt(1 - a_cur) / (a_cur * var0 + 1 - a_cur)  # ε = k (z − √a m)
        # μ = √a_prev (z − √(1−a) ε)/√a + c ε = α z + β
        alpha = math.sqrt(a_prev) * (1 - math.sqrt(1 - a_cur) * k) / math.sqrt(a_cur) + c * k
        beta = (-math.sqrt(a_prev) * (-math.sqrt(1 - a_cur) * k * math.sqrt(a_cur) * mean) / math.sqrt(a_cur)
                - c * k * math.sqrt(a_cur) * mean)
        m, v = alpha * m + beta, alpha**2 * v + sigma**2
    return m, v


def gaussian_posterior(m: torch.Tensor, v: torch.Tensor, A: torch.Tensor, y: torch.Tensor, tau: float
                       ) -> tuple[torch.Tensor, torch.Tensor]:
    """Posterior mean (per row of y) and covariance of z ~ N(m, diag v) given y = A z + N(0, τ²I)."""
    A, m, V = A.double(), m.double(), torch.diag(v.double())
    S = A @ V @ A.T + tau**2 * torch.eye(A.shape[0], dtype=torch.float64)
    K = V @ A.T @ torch.linalg.inv(S)
    post_mean = m + (y.double() - m @ A.T) @ K.T
    return post_mean, V - K @ A @ V
