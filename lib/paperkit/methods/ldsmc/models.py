"""The latent diffusion prior: a small conv VAE, a latent DDPM ε-network, the noise schedule, and the
interface a user's own torch models plug into (spec "Setup": x = D(z), DDIM with η = 1).

:class:`LatentPrior` is all the samplers use:

* ``encode(x) -> z``  image batch (B, C, H, W) in [−1, 1] → (scaled) latent batch (B, *latent_shape);
* ``decode(z) -> x``  the inverse direction, differentiable (the samplers back-propagate through it);
* ``eps(z, t) -> ε``  the noise prediction at integer diffusion steps ``t`` (a LongTensor of shape (B,));
* ``schedule``        a :class:`Schedule` holding ᾱ_t for t = 0..T−1.

Any ``torch.nn.Module`` (or callable) with those shapes works; see :func:`LatentPrior.from_modules`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from paperkit.core.errors import InputError


class Schedule:
    """Linear β schedule, ``betas = linspace(beta_start, beta_end, T)``; ᾱ_t = Π_{s ≤ t} (1 − β_s)."""

    def __init__(self, T: int = 200, beta_start: float = 1e-4, beta_end: float = 0.02,
                 alphas_bar: torch.Tensor | None = None):
        if alphas_bar is None:
            betas = torch.linspace(beta_start, beta_end, T, dtype=torch.float64)
            alphas_bar = torch.cumprod(1.0 - betas, dim=0)
        self.alphas_bar = torch.as_tensor(alphas_bar, dtype=torch.float64)
        self.T = len(self.alphas_bar)
        self.beta_start, self.beta_end = beta_start, beta_end

    def abar(self, t: int) -> float:
        return float(self.alphas_bar[t])

    def timesteps(self, steps: int) -> list[int]:
        """``steps + 1`` decreasing integer steps from T−1 to 0 (the DDIM sub-sequence; distinct)."""
        steps = max(1, min(int(steps), self.T - 1))
        ts = torch.linspace(self.T - 1, 0, steps + 1).round().long().tolist()
        out: list[int] = []
        for t in ts:
            if not out or t < out[-1]:
                out.append(int(t))
        return out

    def state(self) -> dict[str, Any]:
        return {"T": self.T, "beta_start": self.beta_start, "beta_end": self.beta_end}


def ddim_coefficients(schedule: Schedule, t_cur: int, t_prev: int, eta: float = 1.0) -> tuple[float, float, float, float]:
    """(ᾱ_cur, ᾱ_prev, σ, c) of one DDIM step: μ = √ᾱ_prev·ẑ_0 + c·ε, z_prev ~ N(μ, σ²I)."""
    a_cur, a_prev = schedule.abar(t_cur), schedule.abar(t_prev)
    var = eta**2 * (1 - a_prev) / (1 - a_cur) * (1 - a_cur / a_prev)
    var = max(var, 0.0)
    c = math.sqrt(max(1 - a_prev - var, 0.0))
    return a_cur, a_prev, math.sqrt(var), c


def timestep_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """Sinusoidal embedding of integer steps (the transformer position code)."""
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32, device=t.device) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([torch.sin(args), torch.cos(args)], dim=1)


class ConvVAE(nn.Module):
    """16×16×C images → (latent_channels)×4×4 Gaussian latents; two stride-2 convolutions each way."""

    def __init__(self, in_channels: int = 1, latent_channels: int = 2, width: int = 32, image_size: int = 16):
        super().__init__()
        if image_size % 4:
            raise InputError(f"image size {image_size} must be a multiple of 4")
        self.config = {"in_channels": in_channels, "latent_channels": latent_channels, "width": width,
                       "image_size": image_size}
        w = width
        self.enc = nn.Sequential(
            nn.Conv2d(in_channels, w // 2, 3, stride=2, padding=1), nn.SiLU(),
            nn.Conv2d(w // 2, w, 3, stride=2, padding=1), nn.SiLU(),
            nn.Conv2d(w, w, 3, padding=1), nn.SiLU(),
            nn.Conv2d(w, 2 * latent_channels, 1))
        self.dec = nn.Sequential(
            nn.Conv2d(latent_channels, w, 3, padding=1), nn.SiLU(),
            nn.Upsample(scale_factor=2, mode="nearest"),
            nn.Conv2d(w, w, 3, padding=1), nn.SiLU(),
            nn.Upsample(scale_factor=2, mode="nearest"),
            nn.Conv2d(w, w // 2, 3, padding=1), nn.SiLU(),
            nn.Conv2d(w // 2, in_channels, 3, padding=1), nn.Tanh())

    def encode_stats(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mean, logvar = self.enc(x).chunk(2, dim=1)
        return mean, logvar.clamp(-12, 6)

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        return self.dec(z)

    @property
    def latent_shape(self) -> tuple[int, int, int]:
        s = self.config["image_size"] // 4
        return (self.config["latent_channels"], s, s)


class EpsMLP(nn.Module):
    """ε_θ(z_t, t) on flattened latents: residual SiLU MLP blocks, each fed the sinusoidal step embedding."""

    def __init__(self, latent_shape: tuple[int, ...] = (2, 4, 4), width: int = 256, depth: int = 3,
                 emb_dim: int = 64):
        super().__init__()
        self.config = {"latent_shape": list(latent_shape), "width": width, "depth": depth, "emb_dim": emb_dim}
        self.latent_shape = tuple(latent_shape)
        d = int(math.prod(latent_shape))
        self.emb_dim = emb_dim
        self.inp = nn.Linear(d, width)
        self.temb = nn.Sequential(nn.Linear(emb_dim, width), nn.SiLU(), nn.Linear(width, width))
        self.blocks = nn.ModuleList(nn.Sequential(nn.SiLU(), nn.Linear(width, width), nn.SiLU(),
                                                  nn.Linear(width, width)) for _ in range(depth))
        self.out = nn.Sequential(nn.SiLU(), nn.Linear(width, d))

    def forward(self, z: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        h = self.inp(z.flatten(1))
        e = self.temb(timestep_embedding(t, self.emb_dim))
        for blk in self.blocks:
            h = h + blk(h + e)
        return self.out(h).view(z.shape)


@dataclass
class LatentPrior:
    """Everything the samplers need from a latent diffusion model (see the module docstring)."""

    encode: Callable[[torch.Tensor], torch.Tensor]
    decode: Callable[[torch.Tensor], torch.Tensor]
    eps: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    schedule: Schedule
    latent_shape: tuple[int, ...]
    image_shape: tuple[int, ...]
    recon_rmse: float = 0.0  # the VAE's reconstruction RMSE on held-out images (used by the residual bound)
    modules: dict[str, Any] = field(default_factory=dict)
    data: str | None = None  # the offline data set it was trained on (digits, shapes), None for user models

    @classmethod
    def from_modules(cls, encoder: Callable, decoder: Callable, eps_model: Callable, schedule: Schedule,
                     latent_shape: tuple[int, ...], image_shape: tuple[int, ...], recon_rmse: float = 0.0) -> LatentPrior:
        """Wrap a user's own encoder, decoder and ε-model (callables on torch tensors)."""
        return cls(encoder, decoder, eps_model, schedule, tuple(latent_shape), tuple(image_shape), recon_rmse)


def prior_from_trained(vae: ConvVAE, eps_model: EpsMLP, schedule: Schedule, shift: float, scale: float,
                       recon_rmse: float = 0.0) -> LatentPrior:
    """The paperkit-trained prior: latents are the VAE means standardised by (shift, scale)."""
    vae.eval()
    eps_model.eval()
    for p in list(vae.parameters()) + list(eps_model.parameters()):
        p.requires_grad_(False)

    def encode(x: torch.Tensor) -> torch.Tensor:
        return (vae.encode_stats(x)[0] - shift) / scale

    def decode(z: torch.Tensor) -> torch.Tensor:
        return vae.decode(z * scale + shift)

    c = vae.config
    return LatentPrior(encode, decode, eps_model, schedule, vae.latent_shape,
                       (c["in_channels"], c["image_size"], c["image_size"]), recon_rmse,
                       {"vae": vae, "eps": eps_model})
