"""LD-SMC (Achituve et al., ICML 2025, Sec. 4 and Alg. 1) and the SMC baselines that share its machinery.

Particles of all images form one tensor of B·N latents. One transition t+1 → t:

* twisting term p̄(y_0|z) = N(A(D(ẑ_0(z))), (1−ᾱ+τ²)I) with the Tweedie estimate ẑ_0 (Sec. 4.1);
* proposal π_t = N(μ_θ(z_{t+1}) − g, σ²_{t+1}I) with, for t > s, g = κ1·ĝ1 and, for t ≤ s,
  g = κ2((1−ρ)ĝ1 + ρĝ2); ĝ1 = ∇_{z_{t+1}}‖y_0 − A(D(ẑ_0))‖², ĝ2 = ∇_μ‖y_t − A(D(μ))‖², each divided by
  max(‖·‖, 1) per particle (Sec. 4.2);
* incremental weight p(z_t|z_{t+1}) p(y_t|z_t) p̄(y_0|z_t) / [p̄(y_0|z_{t+1}) π_t(z_t|z_{t+1})]; at t = T the
  prior N(0, I) is the proposal, at t = 0 p(y_0|z_0) = N(A(D(z_0)), τ²I) replaces p(y_t|z_t)p̄(y_0|z_t);
* multinomial resampling at every step, then uniform weights.

The auxiliary observations y_{1:T} come from a Gibbs sweep (Sec. 4.3): first from a pixel least-squares
fit x̂, its encoding ẑ_0 and the DDIM posterior q(z_t|z_{t+1}, ẑ_0), later from the previous SMC
trajectory. ``proposal="twisted"`` with ``aux=False`` is the twisted diffusion sampler (TDS) in latent
space and ``proposal="prior"`` a bootstrap particle filter.

``loglik="mean"`` divides every squared norm in a log-density by its number of entries (as the official
code does, which tempers the weights); ``"sum"`` uses the exact Gaussian log-densities.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import torch

from paperkit.core.errors import InputError

from .models import LatentPrior, ddim_coefficients
from .operators import Operator


@dataclass
class SMCConfig:
    particles: int = 8
    steps: int = 50
    kappa1: float = 1.0
    kappa2: float = 2.5
    rho: float = 0.75
    s: int = 66
    gibbs: int = 1
    loglik: str = "mean"
    aux_var: str = "schedule"  # v_t = 1 − ᾱ_t ("schedule", the code) or τ² ("tau", a secondary summary)
    proposal: str = "ldsmc"  # ldsmc | twisted | prior
    aux: bool = True  # use the auxiliary observations y_{1:T} (False: TDS / bootstrap)
    lsq_iters: int = 1000
    lsq_lr: float = 5e-3
    refine_iters: int = 0
    refine_lr: float = 1e-2

    def check(self) -> None:
        if self.particles < 1:
            raise InputError(f"particles = {self.particles}; expected at least 1")
        if self.steps < 1:
            raise InputError(f"steps = {self.steps}; expected at least 1")
        if self.loglik not in ("mean", "sum"):
            raise InputError(f"loglik '{self.loglik}'; expected mean or sum")
        if self.aux_var not in ("schedule", "tau"):
            raise InputError(f"aux-var '{self.aux_var}'; expected schedule or tau")
        if self.proposal not in ("ldsmc", "twisted", "prior"):
            raise InputError(f"proposal '{self.proposal}'; expected ldsmc, twisted or prior")
        if not 0.0 <= self.rho <= 1.0:
            raise InputError(f"rho = {self.rho}; expected a value in [0, 1]")
        if self.kappa1 < 0 or self.kappa2 < 0:
            raise InputError("kappa1 and kappa2 must be ≥ 0")
        if self.gibbs < 1 and self.aux:
            raise InputError(f"gibbs = {self.gibbs}; expected at least 1 SMC sweep")


@dataclass
class SMCResult:
    latents: torch.Tensor  # (B, N, *latent) final particles z_0
    images: torch.Tensor  # (B, N, C, H, W) decoded particles
    log_weights: torch.Tensor  # (B, N) normalised final log-weights
    best: torch.Tensor  # (B,) index of the largest final weight
    restored: torch.Tensor  # (B, C, H, W) the decoded best particle (refined when asked)
    ess: torch.Tensor  # (steps + 1, B) effective sample size before each resampling and at the end
    log_weight_spread: torch.Tensor  # (steps + 1, B) max − min log-weight at the same moments
    trajectory: dict[int, torch.Tensor] = field(default_factory=dict)  # t → (B, *latent), best particle's path
    seconds: float = 0.0


def _reduce(sq: torch.Tensor, mode: str) -> torch.Tensor:
    """Per-row sum (``sum``) or mean (``mean``) of squared entries over all but the first dimension."""
    flat = sq.flatten(1)
    return flat.sum(1) if mode == "sum" else flat.mean(1)


def ess(log_w: torch.Tensor) -> torch.Tensor:
    """Effective sample size (Σw)²/Σw² along the last dimension, from log-weights."""
    return torch.exp(2 * torch.logsumexp(log_w, -1) - torch.logsumexp(2 * log_w, -1))


def _normalise_rows(g: torch.Tensor) -> torch.Tensor:
    norm = g.flatten(1).norm(dim=1).clamp_min(1.0)
    return g / norm.view(-1, *([1] * (g.dim() - 1)))


def _multinomial(log_w: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """(B, N) log-weights → (B·N,) flat ancestor indices, N multinomial draws per image."""
    B, N = log_w.shape
    probs = torch.softmax(log_w.double(), dim=1)
    idx = torch.multinomial(probs, N, replacement=True, generator=gen)
    return (idx + torch.arange(B).view(B, 1) * N).flatten()


def tweedie(prior: LatentPrior, z: torch.Tensor, t: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(ε_θ(z, t), ẑ_0(z)) with ẑ_0 = (z − √(1−ᾱ_t)ε)/√ᾱ_t."""
    a = prior.schedule.abar(t)
    e = prior.eps(z, torch.full((z.shape[0],), t, dtype=torch.long))
    return e, (z - math.sqrt(1 - a) * e) / math.sqrt(a)


def twist_variance(prior: LatentPrior, t: int, tau: float) -> float:
    """Variance of p̄(y_0|z_t): 1 − ᾱ_t (the paper) plus τ², so that p̄ tends to the true likelihood
    N(A(D(z_0)), τ²I) as t → 0 instead of becoming sharper than it (which wrecks the last weights when τ²
    exceeds 1 − ᾱ_1; for the paper's τ = 0.01 the τ² term is negligible)."""
    return 1 - prior.schedule.abar(t) + tau**2


def _twist(prior: LatentPrior, op: Operator, y: torch.Tensor, z: torch.Tensor, t: int, mode: str, need_grad: bool,
           tau: float):
    """(ε, log p̄(y_0|z) per particle, ∇_z‖y_0 − A(D(ẑ_0))‖² or None)."""
    var = twist_variance(prior, t, tau)
    with torch.enable_grad():
        zz = z.detach().requires_grad_(need_grad)
        e, z0 = tweedie(prior, zz, t)
        sq = (y - op(prior.decode(z0))) ** 2
        total = sq.flatten(1).sum(1)
        grad = torch.autograd.grad(total.sum(), zz)[0] if need_grad else None
    return e.detach(), (-_reduce(sq.detach(), mode) / (2 * var)), grad


def _gauss_loglik(y: torch.Tensor, pred: torch.Tensor, var: float, mode: str) -> torch.Tensor:
    return -_reduce((y - pred) ** 2, mode) / (2 * var)


def pixel_least_squares(prior: LatentPrior, op: Operator, y: torch.Tensor, gen: torch.Generator, *,
                        iters: int = 1000, lr: float = 5e-3, tol: float = 1e-7) -> torch.Tensor:
    """x̂ = argmin_x ‖y − A(x)‖² by Adam from D(z), z ~ N(0, I) (the first Gibbs pass; a baseline alone)."""
    z = torch.randn((y.shape[0], *prior.latent_shape), generator=gen)
    with torch.no_grad():
        x0 = prior.decode(z)
    with torch.enable_grad():
        x = x0.clone().requires_grad_(True)
        opt = torch.optim.Adam([x], lr=lr)
        prev = math.inf
        for _ in range(iters):
            loss = ((y - op(x)) ** 2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            cur = float(loss.detach())
            if abs(prev - cur) <= tol * max(cur, 1e-12) or cur / y.numel() < 1e-10:
                break
            prev = cur
    return x.detach()


def initial_aux_observations(prior: LatentPrior, op: Operator, y: torch.Tensor, timesteps: list[int],
                             gen: torch.Generator, cfg: SMCConfig) -> dict[int, torch.Tensor]:
    """First Gibbs pass: y_t = A(D(z_t)) along q(z_t|z_{t+1}, ẑ_0) with ẑ_0 = E(pixel least squares)."""
    x_hat = pixel_least_squares(prior, op, y, gen, iters=cfg.lsq_iters, lr=cfg.lsq_lr)
    with torch.no_grad():
        z0 = prior.encode(x_hat)
        z = torch.randn(z0.shape, generator=gen)
        aux = {timesteps[0]: op(prior.decode(z))}
        for t_cur, t_prev in zip(timesteps[:-1], timesteps[1:], strict=False):
            if t_prev == 0:
                break
            a_cur, a_prev, sigma, c = ddim_coefficients(prior.schedule, t_cur, t_prev)
            e = (z - math.sqrt(a_cur) * z0) / math.sqrt(1 - a_cur)
            z = math.sqrt(a_prev) * z0 + c * e + sigma * torch.randn(z.shape, generator=gen)
            aux[t_prev] = op(prior.decode(z))
    return aux


def latent_refine(prior: LatentPrior, op: Operator, y: torch.Tensor, z: torch.Tensor, tau: float, *,
                  iters: int, lr: float = 1e-2) -> torch.Tensor:
    """argmin_z ‖y − A(D(z))‖² from z by Adam, stopped early once the per-entry residual reaches τ²."""
    with torch.enable_grad():
        zz = z.detach().clone().requires_grad_(True)
        opt = torch.optim.Adam([zz], lr=lr)
        m = op.measurement_size()
        for _ in range(iters):
            per = ((y - op(prior.decode(zz))) ** 2).flatten(1).sum(1)
            if float(per.detach().max()) / m <= tau**2:
                break
            opt.zero_grad()
            per.sum().backward()
            opt.step()
    return zz.detach()


def smc_sweep(prior: LatentPrior, op: Operator, y: torch.Tensor, tau: float, cfg: SMCConfig, gen: torch.Generator,
              aux: dict[int, torch.Tensor] | None = None) -> SMCResult:
    """One SMC run over all images at once (see the module docstring)."""
    B, N = y.shape[0], cfg.particles
    opN = op.repeat(N)
    yN = y.repeat_interleave(N, 0)
    auxN = {t: v.repeat_interleave(N, 0) for t, v in aux.items()} if aux is not None else None
    ts = prior.schedule.timesteps(cfg.steps)
    mode = cfg.loglik

    def aux_var(t: int) -> float:
        return tau**2 if cfg.aux_var == "tau" else 1 - prior.schedule.abar(t)

    def aux_term(z: torch.Tensor, t: int) -> torch.Tensor:
        if auxN is None or t not in auxN:
            return torch.zeros(z.shape[0])
        return _gauss_loglik(auxN[t], opN(prior.decode(z)), aux_var(t), mode)

    z = torch.randn((B * N, *prior.latent_shape), generator=gen)
    z_init = z
    log_w = aux_term(z, ts[0])  # t = T: the prior is the proposal; p̄ is added below
    history, ancestors = [], []
    ess_rows, spread_rows = [], []
    need_grad = cfg.proposal in ("ldsmc", "twisted")
    with torch.no_grad():
        for t_cur, t_prev in zip(ts[:-1], ts[1:], strict=False):
            e, twist_cur, g1 = _twist(prior, opN, yN, z, t_cur, mode, need_grad, tau)
            log_w = log_w + twist_cur
            lw = log_w.view(B, N)
            ess_rows.append(ess(lw))
            spread_rows.append(lw.max(1).values - lw.min(1).values)
            idx = _multinomial(lw, gen)
            ancestors.append(idx)
            z, e, twist_cur = z[idx], e[idx], twist_cur[idx]
            g1 = g1[idx] if g1 is not None else None

            a_cur, a_prev, sigma, c = ddim_coefficients(prior.schedule, t_cur, t_prev)
            z0 = (z - math.sqrt(1 - a_cur) * e) / math.sqrt(a_cur)
            mu = math.sqrt(a_prev) * z0 + c * e
            shift = torch.zeros_like(mu)
            if cfg.proposal == "ldsmc":
                if t_prev > cfg.s:
                    shift = cfg.kappa1 * _normalise_rows(g1)
                else:
                    target = yN if t_prev == 0 else (auxN[t_prev] if auxN is not None and t_prev in auxN else yN)
                    with torch.enable_grad():
                        m = mu.detach().requires_grad_(True)
                        loss = ((target - opN(prior.decode(m))) ** 2).sum()
                        g2 = torch.autograd.grad(loss, m)[0]
                    shift = cfg.kappa2 * ((1 - cfg.rho) * _normalise_rows(g1) + cfg.rho * _normalise_rows(g2))
            elif cfg.proposal == "twisted":
                # TDS: mean shifted by σ²∇log p̄(y_0|z_{t+1}) (same reduction as the weights)
                scale = 1.0 if mode == "sum" else 1.0 / opN.measurement_size()
                shift = sigma**2 * scale * g1 / (2 * twist_variance(prior, t_cur, tau))
            if sigma == 0.0:
                shift = torch.zeros_like(mu)  # a deterministic step: the proposal must equal the transition
            z_new = mu - shift + sigma * torch.randn(mu.shape, generator=gen)
            log_w = torch.zeros(B * N)
            if sigma > 0:
                log_w = (_gauss_loglik(z_new, mu, sigma**2, mode) - _gauss_loglik(z_new, mu - shift, sigma**2, mode))
            if t_prev == 0:
                log_w = log_w + _gauss_loglik(yN, opN(prior.decode(z_new)), tau**2, mode)
            else:
                log_w = log_w + aux_term(z_new, t_prev)
            log_w = log_w - twist_cur
            z = z_new
            history.append(z)

        lw = log_w.view(B, N)
        lw = lw - torch.logsumexp(lw, 1, keepdim=True)
        ess_rows.append(ess(lw))
        spread_rows.append(lw.max(1).values - lw.min(1).values)
        best_local = lw.argmax(1)
        best_flat = best_local + torch.arange(B) * N
        traj = {}
        i = best_flat
        for k in range(len(history) - 1, -1, -1):
            traj[ts[k + 1]] = history[k][i]
            i = ancestors[k][i]
        traj[ts[0]] = z_init[i]
        images = prior.decode(z)
        z_best = z[best_flat]
        if cfg.refine_iters > 0:
            z_best = latent_refine(prior, op, y, z_best, tau, iters=cfg.refine_iters, lr=cfg.refine_lr)
        restored = prior.decode(z_best)
    return SMCResult(z.view(B, N, *z.shape[1:]), images.view(B, N, *images.shape[1:]), lw, best_local, restored,
                     torch.stack(ess_rows), torch.stack(spread_rows), traj)


def ldsmc(prior: LatentPrior, op: Operator, y: torch.Tensor, tau: float, cfg: SMCConfig | None = None,
          seed: int = 0) -> SMCResult:
    """LD-SMC with ``cfg.gibbs`` SMC sweeps (Gibbs over y_{1:T}); TDS/bootstrap when ``cfg.aux`` is False."""
    cfg = cfg or SMCConfig()
    cfg.check()
    if not tau > 0:
        raise InputError(f"noise level τ = {tau}; expected τ > 0")
    start = time.perf_counter()
    gen = torch.Generator().manual_seed(seed)
    ts = prior.schedule.timesteps(cfg.steps)
    aux = initial_aux_observations(prior, op, y, ts, gen, cfg) if cfg.aux else None
    result = None
    for _ in range(max(cfg.gibbs, 1) if cfg.aux else 1):
        result = smc_sweep(prior, op, y, tau, cfg, gen, aux)
        if cfg.aux:  # later passes: y_t = A(D(z_t)) along the returned trajectory, without noise
            with torch.no_grad():
                aux = {t: op(prior.decode(z)) for t, z in result.trajectory.items() if t > 0}
    result.seconds = time.perf_counter() - start
    return result
