"""Training the prior offline: the conv VAE (reconstruction + KL weight 1e-3), then the latent DDPM
(ε-prediction loss on standardised VAE means, linear β schedule).

Both trainers are resumable: ``state`` carries the model, the optimiser, the step and the batch
generator, so a run interrupted after a checkpoint continues with the same batches it would have drawn.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from paperkit.core import io
from paperkit.core.errors import InputError

from .models import ConvVAE, EpsMLP, LatentPrior, Schedule, prior_from_trained

VAE_FILE, LDM_FILE = "vae.pt", "ldm.pt"


def _check_images(images: np.ndarray, what: str = "training images") -> torch.Tensor:
    x = np.asarray(images, dtype=np.float32)
    if x.ndim != 4 or x.shape[0] < 2:
        raise InputError(f"{what}: expected an array (n ≥ 2, C, H, W), got shape {x.shape}")
    if not np.isfinite(x).all():
        raise InputError(f"{what}: contains NaN or inf")
    return torch.from_numpy(x)


def _loop(params: dict[str, Any], state: dict[str, Any] | None, iters: int, step_fn: Callable[[torch.Generator], float],
          models: list[torch.nn.Module], opt: torch.optim.Optimizer, seed: int,
          on_step: Callable[[int, float], None] | None, save: Callable[[dict], None] | None,
          save_every: int) -> list[dict]:
    gen = torch.Generator().manual_seed(seed)
    log: list[dict] = []
    start = 0
    if state is not None:
        for m, sd in zip(models, state["models"], strict=False):
            m.load_state_dict(sd)
        opt.load_state_dict(state["opt"])
        gen.set_state(state["gen"])
        start, log = int(state["step"]), list(state["log"])
    running = state.get("running") if state is not None else None
    for step in range(start, iters):
        loss = step_fn(gen)
        running = loss if running is None else 0.98 * running + 0.02 * loss
        if (step + 1) % 50 == 0 or step + 1 == iters:
            log.append({"step": step + 1, "loss": round(float(running), 6)})
        if on_step is not None:
            on_step(step + 1, loss)
        if save is not None and ((step + 1) % save_every == 0 or step + 1 == iters):
            # deep copies: state_dict() tensors are the live parameters, which keep training after the save
            save(copy.deepcopy({"models": [m.state_dict() for m in models], "opt": opt.state_dict(),
                                "gen": gen.get_state(), "step": step + 1, "log": log, "params": params,
                                "running": running}))
    return log


def train_vae(images: np.ndarray, *, iters: int = 1500, batch: int = 128, lr: float = 2e-3, kl_weight: float = 1e-3,
              width: int = 32, latent_channels: int = 2, seed: int = 0, state: dict | None = None,
              on_step: Callable | None = None, save: Callable | None = None, save_every: int = 250,
              device: Any = None) -> tuple[ConvVAE, list[dict]]:
    """Fit :class:`ConvVAE` to (n, C, H, W) images in [−1, 1]; returns the model (on the CPU) and its loss log.

    ``device`` is where the steps run; the batches and noise are drawn on the CPU from ``seed`` either way."""
    x = _check_images(images).to(device)
    torch.manual_seed(seed)
    vae = ConvVAE(x.shape[1], latent_channels, width, x.shape[-1]).to(device)
    opt = torch.optim.Adam(vae.parameters(), lr=lr)
    sched_gamma = 0.1 ** (1.0 / max(iters, 1))  # lr decays ×0.1 over the run

    def step(gen: torch.Generator) -> float:
        idx = torch.randint(0, len(x), (min(batch, len(x)),), generator=gen)
        xb = x[idx.to(x.device)]
        mean, logvar = vae.encode_stats(xb)
        z = mean + torch.randn(mean.shape, generator=gen).to(mean.device) * torch.exp(0.5 * logvar)
        rec = vae.decode(z)
        kl = 0.5 * (mean**2 + logvar.exp() - 1 - logvar).sum(dim=(1, 2, 3)).mean()
        loss = F.mse_loss(rec, xb, reduction="none").sum(dim=(1, 2, 3)).mean() + kl_weight * kl
        opt.zero_grad()
        loss.backward()
        opt.step()
        for g in opt.param_groups:
            g["lr"] *= sched_gamma
        return float(loss.detach()) / xb[0].numel()

    params = {"iters": iters, "batch": batch, "lr": lr, "kl_weight": kl_weight}
    log = _loop(params, state, iters, step, [vae], opt, seed, on_step, save, save_every)
    vae.cpu().eval()
    return vae, log


@torch.no_grad()
def latent_stats(vae: ConvVAE, images: np.ndarray) -> tuple[torch.Tensor, float, float]:
    """VAE means of ``images`` and the (shift, scale) that standardise them."""
    mean = vae.encode_stats(_check_images(images))[0]
    return mean, float(mean.mean()), float(mean.std())


@torch.no_grad()
def reconstruction_rmse(vae: ConvVAE, images: np.ndarray) -> float:
    x = _check_images(images, "held-out images")
    return float(torch.sqrt(F.mse_loss(vae.decode(vae.encode_stats(x)[0]), x)))


def train_ldm(latents: torch.Tensor, *, T: int = 200, beta_start: float = 1e-4, beta_end: float = 0.02,
              iters: int = 4000, batch: int = 256, lr: float = 1e-3, width: int = 256, depth: int = 3, seed: int = 0,
              state: dict | None = None, on_step: Callable | None = None, save: Callable | None = None,
              save_every: int = 500, device: Any = None) -> tuple[EpsMLP, Schedule, list[dict]]:
    """Fit ε_θ on standardised latents (n, *latent_shape) with the DDPM loss ‖ε − ε_θ(√ᾱ z + √(1−ᾱ) ε, t)‖²."""
    z0 = torch.as_tensor(latents, dtype=torch.float32).to(device)
    sched = Schedule(T, beta_start, beta_end)
    abar = sched.alphas_bar.float().to(z0.device)
    torch.manual_seed(seed + 1)
    model = EpsMLP(tuple(z0.shape[1:]), width=width, depth=depth).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched_gamma = 0.05 ** (1.0 / max(iters, 1))

    def step(gen: torch.Generator) -> float:
        idx = torch.randint(0, len(z0), (min(batch, len(z0)),), generator=gen)
        zb = z0[idx.to(z0.device)]
        t = torch.randint(0, T, (len(zb),), generator=gen).to(z0.device)
        eps = torch.randn(zb.shape, generator=gen).to(z0.device)
        a = abar[t].view(-1, *([1] * (zb.dim() - 1)))
        loss = F.mse_loss(model(a.sqrt() * zb + (1 - a).sqrt() * eps, t), eps)
        opt.zero_grad()
        loss.backward()
        opt.step()
        for g in opt.param_groups:
            g["lr"] *= sched_gamma
        return float(loss.detach())

    params = {"T": T, "iters": iters, "batch": batch, "lr": lr}
    log = _loop(params, state, iters, step, [model], opt, seed, on_step, save, save_every)
    model.cpu().eval()
    return model, sched, log


# ---------------------------------------------------------------------------------------- checkpoints
def save_vae(path: str | Path, vae: ConvVAE, *, shift: float, scale: float, recon_rmse: float, data: str) -> None:
    io.save_torch(path, {"kind": "paperkit-ldsmc-vae", "config": vae.config, "state_dict": vae.state_dict(),
                         "shift": shift, "scale": scale, "recon_rmse": recon_rmse, "data": data})


def save_ldm(path: str | Path, model: EpsMLP, schedule: Schedule) -> None:
    io.save_torch(path, {"kind": "paperkit-ldsmc-ldm", "config": model.config, "schedule": schedule.state(),
                         "state_dict": model.state_dict()})


def _load(path: Path, kind: str) -> dict:
    if not path.exists():
        raise InputError(f"{path}: no such checkpoint; train one with 'paperkit ldsmc-train'")
    try:
        ck = io.load_torch(path)
    except Exception as e:  # a torn or foreign file
        raise InputError(f"{path}: not a readable torch checkpoint ({type(e).__name__})") from None
    if not isinstance(ck, dict) or ck.get("kind") != kind:
        raise InputError(f"{path}: not a {kind} checkpoint")
    return ck


def load_prior(model_dir: str | Path) -> LatentPrior:
    """Load ``vae.pt`` + ``ldm.pt`` from ``model_dir``; mismatched shapes are an :class:`InputError`."""
    d = Path(model_dir)
    v, m = _load(d / VAE_FILE, "paperkit-ldsmc-vae"), _load(d / LDM_FILE, "paperkit-ldsmc-ldm")
    vae = ConvVAE(**v["config"])
    eps = EpsMLP(tuple(m["config"]["latent_shape"]), m["config"]["width"], m["config"]["depth"], m["config"]["emb_dim"])
    if tuple(eps.latent_shape) != tuple(vae.latent_shape):
        raise InputError(f"{d}: the diffusion model's latent shape {tuple(eps.latent_shape)} does not match the "
                         f"VAE's {tuple(vae.latent_shape)}")
    for name, module, sd in (("vae.pt", vae, v["state_dict"]), ("ldm.pt", eps, m["state_dict"])):
        try:
            module.load_state_dict(sd)
        except RuntimeError as e:
            first = str(e).strip().splitlines()[-1].strip() if str(e).strip() else "shape mismatch"
            raise InputError(f"{d / name}: weights do not match the model's shapes ({first})") from None
    s = m["schedule"]
    prior = prior_from_trained(vae, eps, Schedule(s["T"], s["beta_start"], s["beta_end"]), v["shift"], v["scale"],
                               v.get("recon_rmse", 0.0))
    prior.data = v.get("data")
    return prior
