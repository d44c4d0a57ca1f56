"""Training the prior offline: the conv VAE (reconstruction + KL weight 1e-3), then the latent DDPM
(ε-prediction loss on standardised VAE means, linear β schedule).

Both trainers are resumable: ``state`` carries the model, the optimiser, the step and the batch
generator, so a run interrupted after a checkpoint continues with the same batches it would have drawn.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from paperkit.core import io
from paperkit.core.errors import InputError
from paperkit.core.validate import check_finite_weights, check_range

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


def _number(ck: dict, key: str, path: Path, *, where: str = "", low: float | None = None, low_open: bool = False,
            high: float | None = None, high_open: bool = False, default: float | None = None) -> float:
    """``ck[key]`` as one finite real number in the given range (a plain number or a one-element tensor)."""
    name = f"{where}{key}"
    if key not in ck:
        if default is not None:
            return default
        raise InputError(f"{path}: no '{name}' entry; expected a checkpoint written by 'paperkit ldsmc-train'")
    value = ck[key]
    if isinstance(value, (torch.Tensor, np.ndarray)) and np.prod(tuple(value.shape), dtype=np.int64) == 1:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{path}: {name} = {_short(value)}; expected a finite number")
    check_range(f"{path}: {name}", float(value), low, high, low_open=low_open, high_open=high_open,
                error=InputError)
    return float(value)


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, torch.Tensor) else f"a tensor of shape {tuple(value.shape)}"
    return text if len(text) <= 60 else text[:57] + "..."


def _config(ck: dict, path: Path, cls: type, limits: dict[str, tuple[int, int]]) -> dict[str, Any]:
    """The model's constructor arguments from ``ck["config"]``: exactly the keys ``limits`` names, each a whole
    number in its range (a foreign key or a string was a TypeError deep inside the constructor)."""
    cfg = ck.get("config")
    if not isinstance(cfg, dict):
        raise InputError(f"{path}: config = {_short(cfg)}; expected the {cls.__name__} settings "
                         f"({', '.join(limits)})")
    extra, missing = sorted(set(map(str, cfg)) - set(limits)), [k for k in limits if k not in cfg]
    if extra or missing:
        what = f"unknown key(s) {extra}" if extra else f"missing key(s) {missing}"
        raise InputError(f"{path}: config has {what}; expected {', '.join(limits)} ({cls.__name__})")
    out = {}
    for key, (lo, hi) in limits.items():
        values = cfg[key] if key == "latent_shape" else [cfg[key]]
        if key == "latent_shape" and (not isinstance(values, (list, tuple)) or len(values) != 3):
            raise InputError(f"{path}: config.latent_shape = {_short(values)}; expected [channels, height, width]")
        for v in values:
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise InputError(f"{path}: config.{key} = {_short(cfg[key])}; expected whole number(s) in "
                                 f"[{lo}, {hi}]")
        out[key] = tuple(values) if key == "latent_shape" else values[0]
    return out


def _build(cls: type, cfg: dict[str, Any], ck: dict, path: Path) -> torch.nn.Module:
    """``cls(**cfg)`` with ``ck["state_dict"]`` loaded; names, shapes and finiteness of the weights are
    checked against a meta-device copy first, so a mismatch costs no memory and names the tensor."""
    sd = ck.get("state_dict")
    if not isinstance(sd, dict):
        raise InputError(f"{path}: state_dict = {_short(sd)}; expected the model's weights")
    try:
        with torch.device("meta"):
            want = {k: tuple(v.shape) for k, v in cls(**cfg).state_dict().items()}
    except InputError as e:
        raise InputError(f"{path}: config: {e}") from None
    missing, extra = sorted(set(want) - set(sd)), sorted(set(map(str, sd)) - set(want))
    if missing or extra:
        what = f"missing {missing[:3]}" if missing else f"unexpected {extra[:3]}"
        raise InputError(f"{path}: weights do not match the model's shapes ({what} in state_dict)")
    for k, shape in want.items():
        v = sd[k]
        if not isinstance(v, torch.Tensor) or not v.is_floating_point() or tuple(v.shape) != shape:
            got = f"{v.dtype} of shape {tuple(v.shape)}" if isinstance(v, torch.Tensor) else type(v).__name__
            raise InputError(f"{path}: weights do not match the model's shapes (state_dict.{k}: {got}, "
                             f"expected {shape})")
    check_finite_weights(sd, str(path), "state_dict")
    module = cls(**cfg)
    module.load_state_dict(sd)
    return module


def load_prior(model_dir: str | Path) -> LatentPrior:
    """Load ``vae.pt`` + ``ldm.pt`` from ``model_dir``; every field is checked before it is used (bad content
    is an :class:`InputError` naming the file and the field)."""
    d = Path(model_dir)
    vp, mp = d / VAE_FILE, d / LDM_FILE
    v, m = _load(vp, "paperkit-ldsmc-vae"), _load(mp, "paperkit-ldsmc-ldm")
    # sanity limits far above what ldsmc-train builds (the weights themselves are compared in _build)
    vae_cfg = _config(v, vp, ConvVAE, {"in_channels": (1, 64), "latent_channels": (1, 1024), "width": (2, 4096),
                                       "image_size": (4, 4096)})
    if vae_cfg["image_size"] % 4:
        raise InputError(f"{vp}: config.image_size = {vae_cfg['image_size']}; expected a multiple of 4")
    eps_cfg = _config(m, mp, EpsMLP, {"latent_shape": (1, 4096), "width": (1, 65536), "depth": (0, 1024),
                                      "emb_dim": (2, 65536)})
    if eps_cfg["emb_dim"] % 2:  # sine and cosine halves
        raise InputError(f"{mp}: config.emb_dim = {eps_cfg['emb_dim']}; expected an even number")
    shift = _number(v, "shift", vp)
    scale = _number(v, "scale", vp, low=0.0, low_open=True)  # latents are divided by it
    rmse = _number(v, "recon_rmse", vp, low=0.0, default=0.0)
    data = v.get("data")
    if data is not None and not isinstance(data, str):
        raise InputError(f"{vp}: data = {_short(data)}; expected the name of a data set")
    s = m.get("schedule")
    if not isinstance(s, dict):
        raise InputError(f"{mp}: schedule = {_short(s)}; expected T, beta_start and beta_end")
    T = s.get("T")
    if isinstance(T, bool) or not isinstance(T, int) or not 2 <= T <= 100000:  # ldsmc-train's --diffusion-steps
        raise InputError(f"{mp}: schedule.T = {_short(T)}; expected a whole number in [2, 100000]")
    betas = [_number(s, key, mp, where="schedule.", low=0.0, high=1.0, low_open=True, high_open=True)
             for key in ("beta_start", "beta_end")]
    side = vae_cfg["image_size"] // 4
    if eps_cfg["latent_shape"] != (vae_cfg["latent_channels"], side, side):
        raise InputError(f"{d}: the diffusion model's latent shape {eps_cfg['latent_shape']} does not match the "
                         f"VAE's {(vae_cfg['latent_channels'], side, side)}")
    vae = _build(ConvVAE, vae_cfg, v, vp)
    eps = _build(EpsMLP, eps_cfg, m, mp)
    prior = prior_from_trained(vae, eps, Schedule(T, *betas), shift, scale, rmse)
    prior.data = data
    return prior
