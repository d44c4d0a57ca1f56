"""The pyramid layer Φ_up of Chen et al. (ICML 2025, Def. of the up-interpolation and pyramid layers), and
VAR's resampling pieces (FoundationVision/VAR ``models/quant.py``): area downsampling, bicubic upsampling.

Maps are ``(N, H, W, C)`` (channels last, like the paper's R^{h×w×d}); tokens are ``(N, L, C)`` with the
scales concatenated coarse to fine, row-major inside a scale.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from paperkit.core.errors import UsageError

VAR_SCALES = (1, 2, 3, 4, 5, 6, 8, 10, 13, 16)  # VAR's ImageNet-256 schedule


def parse_init(text: str) -> tuple[int, int]:
    """``HxW`` (e.g. ``2x2``) as (H, W)."""
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", str(text))
    if not m or int(m.group(1)) < 1 or int(m.group(2)) < 1:
        raise UsageError(f"--init '{text}' is not HxW with H, W >= 1 (for example 2x2)")
    return int(m.group(1)), int(m.group(2))


def geometric_scales(first: int, last: int, count: int) -> tuple[int, ...]:
    """``count`` side lengths from ``first`` to ``last`` spaced geometrically, rounded (VAR issue #101)."""
    if not 1 <= first < last or count < 2:
        raise UsageError(f"geometric scales need 1 <= first < last and count >= 2 (got {first}, {last}, {count})")
    sides = np.rint(np.geomspace(first, last, count)).astype(int)
    out = tuple(sorted({int(s) for s in sides}))
    if len(out) < count:
        raise UsageError(f"geom:{first}:{last}:{count} rounds to repeated sides {out}; use fewer scales")
    return out


def parse_scales(text: str | Sequence[int]) -> tuple[int, ...]:
    """A scale schedule: ``2,4,8`` (or ``2-4-8``), ``var`` (VAR's list), or ``geom:FIRST:LAST:COUNT``."""
    if not isinstance(text, str):
        return tuple(int(s) for s in text)
    t = text.strip().lower()
    if t == "var":
        return VAR_SCALES
    if t.startswith("geom:"):
        parts = t.split(":")[1:]
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            raise UsageError(f"scales '{text}': expected geom:FIRST:LAST:COUNT (for example geom:2:16:4)")
        return geometric_scales(*(int(p) for p in parts))
    items = [p.strip() for p in re.split(r"[,-]", t)]
    if not items or not all(p.isdigit() for p in items):
        raise UsageError(f"scales '{text}': expected side lengths like 2,4,8, 'var' or geom:FIRST:LAST:COUNT")
    return tuple(int(p) for p in items)


def check_scales(scales: Sequence[int], init: tuple[int, int], flag: str = "--scales", sep: str = ",") -> tuple[int, ...]:
    """Strictly increasing side lengths, the first at least the initial map's larger side. ``flag`` and ``sep``
    name the option and write the schedule as the calling command takes it (var-approx-sweep: --schedules 2-4-8)."""
    scales = tuple(int(s) for s in scales)
    if not scales:
        raise UsageError(f"{flag} is empty")
    if any(b <= a for a, b in zip(scales, scales[1:], strict=False)):
        raise UsageError(f"{flag} {sep.join(map(str, scales))} must be strictly increasing")
    if scales[0] < max(init):
        raise UsageError(f"{flag} {sep.join(map(str, scales))} starts at {scales[0]}, below the initial {init[0]}x{init[1]} map")
    if scales[-1] > 256:
        raise UsageError(f"{flag} {sep.join(map(str, scales))} ends at {scales[-1]}; at most 256 per side")
    return scales


def map_sizes(scales: Sequence[int], init: tuple[int, int]) -> list[tuple[int, int]]:
    """(h_k, w_k) of every map: the initial map itself when the first side equals it, else squares."""
    return [init if k == 0 and s == max(init) and init[0] == init[1] else (s, s) for k, s in enumerate(scales)]


def token_count(scales: Sequence[int], init: tuple[int, int]) -> int:
    """L = Σ h_k·w_k."""
    return sum(h * w for h, w in map_sizes(scales, init))


def scale_index(scales: Sequence[int], init: tuple[int, int]) -> np.ndarray:
    """The scale (0-based) of every token, shape (L,)."""
    return np.concatenate([np.full(h * w, k) for k, (h, w) in enumerate(map_sizes(scales, init))])


def block_mask(scales: Sequence[int], init: tuple[int, int]) -> np.ndarray:
    """VAR's block-causal mask, (L, L) booleans: token i may attend to j iff scale(j) <= scale(i)."""
    k = scale_index(scales, init)
    return k[None, :] <= k[:, None]


def attention_pairs(scales: Sequence[int], init: tuple[int, int], mask: str) -> int:
    """Query–key pairs one attention layer scores per sample (L² without a mask)."""
    n = token_count(scales, init)
    return int(block_mask(scales, init).sum()) if mask == "block" else n * n


def bicubic(x, size: tuple[int, int]):
    """φ_up: torch bicubic interpolation (align_corners=False) of ``(N, H, W, C)`` maps to ``size``."""
    import torch.nn.functional as F

    if tuple(x.shape[1:3]) == tuple(size):
        return x
    y = F.interpolate(x.permute(0, 3, 1, 2), size=size, mode="bicubic", align_corners=False)
    return y.permute(0, 2, 3, 1)


def area(x, size: tuple[int, int]):
    """VAR's downsampling: area interpolation (adaptive average pooling) of ``(N, H, W, C)`` maps."""
    import torch.nn.functional as F

    if tuple(x.shape[1:3]) == tuple(size):
        return x
    return F.interpolate(x.permute(0, 3, 1, 2), size=size, mode="area").permute(0, 2, 3, 1)


def up_pyramid(x, scales: Sequence[int], *, maps: bool = False):
    """Φ_up: X_1 = X_init (resized if the first side differs), X_{k+1} = φ_up(X_k); the maps concatenated
    into ``(N, L, C)`` tokens (or the list of maps when ``maps``)."""
    init = (int(x.shape[1]), int(x.shape[2]))
    out, cur = [], x
    for size in map_sizes(scales, init):
        cur = bicubic(cur, size)
        out.append(cur)
    if maps:
        return out
    import torch

    return torch.cat([m.reshape(m.shape[0], -1, m.shape[-1]) for m in out], dim=1)


def target_pyramid(img, scales: Sequence[int], init: tuple[int, int]):
    """A target image ``(N, H, W, C)`` area-downsampled to every scale and concatenated to ``(N, L, C)``."""
    import torch

    return torch.cat([area(img, size).reshape(img.shape[0], -1, img.shape[-1]) for size in map_sizes(scales, init)],
                     dim=1)
