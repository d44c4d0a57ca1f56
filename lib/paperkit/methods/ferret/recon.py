"""Reconstruction study (Sec. 5, App. C.5): Ferret's shared-randomness reconstruction vs a zeroth-order one.

Target: the update of T gradient steps on f(x) = Σ x_i² from a random x (T = 1 is the gradient 2x).
Ferret projects the exact update on K truncated-normal bases and rebuilds V gamma. The zeroth-order
reconstruction (as FedKSeed/MeZO) estimates each coordinate by a forward difference
(f(x + eps v) − f(x)) / eps along standard-normal v and rebuilds (1/K) Σ g_k v_k per local step, so
its finite-difference error is paid at every step (Thm. 3). Reported per K: mean/std cosine
similarity, relative error, the norm of the mean estimate's error (relative), the variance over trials
(E||est − mean||² / ||Delta||²) and the bias with the trials' noise taken out
(sqrt(max(0, ||mean − Delta||²/||Delta||² − variance/trials))).

On Σ x² a forward difference along Gaussian v is unbiased (its (eps/2)·vᵀHv·v term has mean zero). With
``cubic`` = c the objective is Σ x² + (c/3) Σ x³, whose changing curvature biases the forward-difference
estimate by c·eps² per coordinate whatever K is (Nesterov's smoothing bias), so ZO's bias stays while
Ferret's error keeps falling as K grows.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from paperkit.core.errors import ConfigError, ResourceError
from paperkit.methods.ferret.projection import (
    CHUNK_FLOATS,
    Blocks,
    allocate,
    derive_seed,
    iter_bases,
    project_reconstruct,
)

# Trials per K and local steps: each trial costs K·d random numbers (and steps·K·d for the zeroth-order
# estimate); the paper's study uses 5 trials and one step, the examples at most 200 trials.
MAX_TRIALS = 100_000
MAX_STEPS = 10_000


def _f(x: torch.Tensor, cubic: float = 0.0) -> float:
    x = x.double()
    return float((x ** 2).sum() + (cubic / 3.0) * (x ** 3).sum()) if cubic else float((x ** 2).sum())


def exact_update(x0: torch.Tensor, lr: float, steps: int, cubic: float = 0.0) -> torch.Tensor:
    """x0 − x_T after T gradient steps on Σ x² + (c/3) Σ x³ (gradient 2x + c x²), in float64."""
    if not cubic:  # closed form on Σ x²
        return x0 * (1.0 - (1.0 - 2.0 * lr) ** steps)
    x = x0.double()
    for _ in range(steps):
        x = x - lr * (2.0 * x + cubic * x * x)
    return (x0.double() - x).to(x0.dtype)


def zo_reconstruct(x0: torch.Tensor, lr: float, steps: int, k: int, eps: float, seed: int,
                   cubic: float = 0.0) -> torch.Tensor:
    """Rebuilt update of ``steps`` ZO-SGD steps on Σ x², K forward-difference directions per step
    (computed on ``x0``'s device)."""
    x = x0.clone()
    d = x.numel()
    for t in range(steps):
        est = torch.zeros(d, dtype=torch.float64, device=x0.device)
        fx = _f(x, cubic)
        for _start, chunk in iter_bases(derive_seed(seed, t), 0, d, k, device=x0.device, kind="gaussian"):
            for v in chunk:
                g = (_f(x + eps * v, cubic) - fx) / eps
                est.add_(v.double(), alpha=g / k)
        x = x - lr * est.float()
    return x0 - x


def start_point(d: int, seed: int) -> torch.Tensor:
    """The study's random start x0 (drawn on the CPU, the same for every device)."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(d, generator=gen)


def check_update(delta: torch.Tensor, cubic: float, steps: int) -> None:
    """ConfigError when the exact update overflowed: only --cubic (with --steps) can make it do so."""
    if not bool(torch.isfinite(delta).all()):
        raise ConfigError(f"--cubic {cubic:g} with --steps {steps} makes the update overflow (NaN/inf entries); "
                          "use a smaller |--cubic| or fewer --steps")


def memory_estimate(d: int, n_blocks: int = 1) -> int:
    """Peak bytes of :func:`recon_study`: about eight length-d vectors (float32 start point, update and
    estimate; float64 sums and copies) plus a few chunks of basis rows (at least one row of a block)."""
    block = -(-d // max(1, n_blocks))
    return 48 * d + 16 * max(CHUNK_FLOATS, block)


def available_memory() -> int | None:
    """Bytes the OS reports as available (MemAvailable), or None where it cannot tell."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        import os

        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def _gb(n: float) -> str:
    return f"{n / 1e12:.1f} TB" if n >= 1e12 else f"{n / 1e9:.1f} GB"


def check_memory(d: int, n_blocks: int = 1, available: int | None = None) -> None:
    """Refuse a study whose vectors alone would not fit in memory (before anything is allocated)."""
    need = memory_estimate(d, n_blocks)
    have = available_memory() if available is None else available
    if have is not None and need > 0.8 * have:
        raise ResourceError(f"--d {d} needs about {_gb(need)} of memory; {_gb(have)} is available; "
                            "lower --d")


def recon_study(d: int, ks: list[int], *, trials: int = 5, n_blocks: int = 1, alloc: str = "norm",
                zo: bool = True, zo_eps: float = 1e-3, steps: int = 1, lr: float = 0.01, seed: int = 0,
                zo_max_k: int = 2000, device: torch.device | str = "cpu", check: bool = True,
                cubic: float = 0.0) -> list[dict]:
    """Rows (method, K) of the study. The start point is drawn on the CPU (same for every device); the
    bases are drawn on ``device`` (CPU and CUDA generators draw different streams). ``check=False`` skips
    the memory check (the caller made its own, e.g. with a user-given limit)."""
    if d < 1 or not ks or min(ks) < 1 or not 1 <= trials <= MAX_TRIALS:
        raise ConfigError(f"--d and every --k must be positive, and --trials in 1..{MAX_TRIALS}")
    if not 1 <= steps <= MAX_STEPS:
        raise ConfigError(f"--steps {steps} is out of range; expected 1 to {MAX_STEPS}")
    if not 1 <= n_blocks <= d:
        raise ConfigError(f"--blocks {n_blocks} is out of range; expected 1..{d}")
    if n_blocks > min(ks):
        raise ConfigError(f"every K must be at least the number of blocks ({n_blocks})")
    if not (zo_eps > 0 and math.isfinite(zo_eps)):
        raise ConfigError(f"--zo-eps {zo_eps} is out of range; expected a finite positive number")
    if not math.isfinite(cubic):
        raise ConfigError(f"--cubic {cubic} is out of range; expected a finite number")
    if check:
        check_memory(d, n_blocks)
    x0 = start_point(d, seed).to(device)
    # the exact update of T gradient steps on Σ x² (+ (c/3) Σ x³)
    delta = exact_update(x0, lr, steps, cubic)
    check_update(delta, cubic, steps)
    blocks = Blocks.equal(d, n_blocks)
    rows = []
    for k in ks:
        counts = allocate(k, blocks, delta, alloc)
        methods = {"ferret": lambda s, c=counts: project_reconstruct(delta, s, blocks, c)[1]}
        if zo and k <= zo_max_k:
            methods["zeroth-order"] = lambda s, kk=k: zo_reconstruct(x0, lr, steps, max(1, kk // steps), zo_eps, s,
                                                                         cubic)
        for name, fn in methods.items():
            cos, rel, total = [], [], torch.zeros(d, dtype=torch.float64, device=x0.device)
            sq = torch.zeros((), dtype=torch.float64, device=x0.device)
            for t in range(trials):
                est = fn(derive_seed(seed, k, t)).double()
                if not bool(torch.isfinite(est).all()):  # float32 overflow of a huge cubic term or --zo-eps
                    raise ConfigError(f"the {name} estimate at K = {k} overflowed (NaN/inf entries) with --cubic "
                                      f"{cubic:g}, --steps {steps}" + (f" and --zo-eps {zo_eps:g}; use a smaller "
                                      "|--cubic| or --zo-eps, or --no-zo" if name != "ferret" else
                                      "; use a smaller |--cubic| or fewer --steps"))
                total += est
                sq += (est * est).sum()
                cos.append(float(torch.nn.functional.cosine_similarity(est, delta.double(), dim=0)))
                rel.append(float((est - delta).norm() / delta.norm()))
            mean = total / trials
            dn2 = float(delta.double().norm()) ** 2
            bias = float((mean - delta).norm() / delta.norm())
            # E||est − mean||² / ||Delta||² (unbiased over trials; 0 with one trial)
            spread = max(0.0, float(sq) - trials * float((mean * mean).sum()))
            var = spread / (trials - 1) / dn2 if trials > 1 else 0.0
            rows.append({"method": name, "k": k, "d": d, "blocks": n_blocks, "steps": steps, "trials": trials,
                         "cosine_mean": float(np.mean(cos)), "cosine_std": float(np.std(cos)),
                         "rel_error_mean": float(np.mean(rel)), "bias_norm": bias, "variance": var,
                         "bias_debiased": math.sqrt(max(0.0, bias * bias - var / trials)),
                         "sqrt_k_over_d": math.sqrt(k / d)})
    return rows
