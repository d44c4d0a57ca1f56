"""Measurement operators y = A(x) + ψ, ψ ~ N(0, τ²I), on images in [−1, 1] (so τ is on that scale).

Every operator maps an image batch (B, C, H, W) to a measurement batch and offers ``pinv(y)`` (a
right inverse, A(pinv(y)) = y) so ``project(x, y) = x + A⁺(y − A x)`` is the data-consistency step
PSLD's gluing term and ReSample need. Masks are placed explicitly (``--box-top/--box-left``) or drawn
from a seed, never implicitly, and each image may have its own mask.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod

import numpy as np
import torch
import torch.nn.functional as F

from paperkit.core.errors import InputError

TASKS = ("box", "random", "sr2", "blur")


class Operator(ABC):
    name = "operator"
    linear = True

    @abstractmethod
    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """A(x), the noiseless measurement of an image batch."""

    @abstractmethod
    def pinv(self, y: torch.Tensor) -> torch.Tensor:
        """A⁺(y), a right inverse of A."""

    def project(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + self.pinv(y - self(x))

    @abstractmethod
    def measurement_size(self) -> int:
        """m, the number of measured values per image."""

    def repeat(self, n: int) -> Operator:
        """The operator for a batch where each image is repeated ``n`` times in a row (particles)."""
        return self

    def observed_pixels(self) -> torch.Tensor | None:
        """(B, C, H, W) 0/1 mask of observed pixels for inpainting, None otherwise."""
        return None


class MaskOperator(Operator):
    """Inpainting: y = M ⊙ x, kept at full size with zeros where unobserved; m = number of ones."""

    def __init__(self, mask: torch.Tensor, name: str = "box"):
        self.mask = mask.float()
        self.name = name

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.mask

    def pinv(self, y: torch.Tensor) -> torch.Tensor:
        return y * self.mask

    def measurement_size(self) -> int:
        return int(self.mask[0].sum())

    def repeat(self, n: int) -> MaskOperator:
        return MaskOperator(self.mask.repeat_interleave(n, dim=0), self.name) if n > 1 else self

    def observed_pixels(self) -> torch.Tensor:
        return self.mask


class SuperRes(Operator):
    """Average pooling by ``factor`` (2× super-resolution); A⁺ is nearest upsampling."""

    name = "sr2"

    def __init__(self, factor: int = 2, image_shape: tuple[int, ...] = (1, 16, 16)):
        self.factor = factor
        self.image_shape = image_shape

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return F.avg_pool2d(x, self.factor)

    def pinv(self, y: torch.Tensor) -> torch.Tensor:
        return F.interpolate(y, scale_factor=self.factor, mode="nearest")

    def measurement_size(self) -> int:
        c, h, w = self.image_shape
        return c * (h // self.factor) * (w // self.factor)


class GaussianBlur(Operator):
    """Circular convolution with a normalised size×size Gaussian kernel (σ), done in the Fourier domain;
    A⁺ divides by the kernel's spectrum where it exceeds ``cutoff`` (a regularised inverse)."""

    name = "blur"

    def __init__(self, size: int = 5, sigma: float = 1.0, image_shape: tuple[int, ...] = (1, 16, 16),
                 cutoff: float = 1e-2):
        c, h, w = image_shape
        r = torch.arange(size, dtype=torch.float32) - (size - 1) / 2
        k1 = torch.exp(-(r**2) / (2 * sigma**2))
        k = torch.outer(k1, k1)
        k = k / k.sum()
        full = torch.zeros(h, w)
        full[:size, :size] = k
        full = torch.roll(full, shifts=(-(size // 2), -(size // 2)), dims=(0, 1))
        self.kernel = k
        self.spectrum = torch.fft.rfft2(full)
        self.cutoff = cutoff
        self.image_shape = image_shape

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return torch.fft.irfft2(torch.fft.rfft2(x) * self.spectrum, s=x.shape[-2:])

    def pinv(self, y: torch.Tensor) -> torch.Tensor:
        s = self.spectrum
        inv = torch.where(s.abs() > self.cutoff, 1.0 / s, torch.zeros_like(s))
        return torch.fft.irfft2(torch.fft.rfft2(y) * inv, s=y.shape[-2:])

    def measurement_size(self) -> int:
        return int(math.prod(self.image_shape))


class MatrixOperator(Operator):
    """y = x_flat Aᵀ for a dense matrix A (m × d); used by the linear-Gaussian toy and for A = 0."""

    name = "matrix"

    def __init__(self, A: torch.Tensor):
        self.A = torch.as_tensor(A, dtype=torch.float32)
        self.A_pinv = torch.linalg.pinv(self.A) if self.A.abs().sum() > 0 else torch.zeros_like(self.A.T)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return x.flatten(1) @ self.A.T

    def pinv(self, y: torch.Tensor) -> torch.Tensor:
        """A⁺y as flat vectors (B, d): the image shape is not known from y; ``project`` reshapes."""
        return y @ self.A_pinv.T

    def project(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        r = y - self(x)
        return x + (r @ self.A_pinv.T).view(x.shape)

    def measurement_size(self) -> int:
        return int(self.A.shape[0])


def box_mask(n: int, image_shape: tuple[int, ...], box: int, top: int | None = None, left: int | None = None,
             rng: np.random.Generator | None = None) -> torch.Tensor:
    """(n, C, H, W) masks with a box×box hole (0) at (top, left); each None coordinate is centred when no
    ``rng`` is given, else drawn uniformly per image from ``rng``."""
    c, h, w = image_shape
    if not 0 < box < min(h, w):
        raise InputError(f"box size {box} must be in [1, {min(h, w) - 1}] for {h}×{w} images "
                         "(a box that covers everything leaves nothing observed)")
    m = torch.ones(n, c, h, w)
    for i in range(n):
        ti = top if top is not None else (int(rng.integers(0, h - box + 1)) if rng is not None else (h - box) // 2)
        li = left if left is not None else (int(rng.integers(0, w - box + 1)) if rng is not None else (w - box) // 2)
        if not (0 <= ti <= h - box and 0 <= li <= w - box):
            raise InputError(f"box at ({ti}, {li}) of size {box} does not fit in {h}×{w} images")
        m[i, :, ti:ti + box, li:li + box] = 0
    return m


def random_mask(n: int, image_shape: tuple[int, ...], fraction: float, rng: np.random.Generator) -> torch.Tensor:
    """(n, C, H, W) masks missing a ``fraction`` of the pixels, drawn per image from ``rng``."""
    c, h, w = image_shape
    k = int(round(fraction * h * w))
    if not 0 < k < h * w:
        raise InputError(f"--missing {fraction} hides {k} of {h * w} pixels; expected a fraction that hides "
                         "some but not all pixels")
    m = torch.ones(n, c, h, w)
    for i in range(n):
        hide = rng.choice(h * w, size=k, replace=False)
        mi = torch.ones(h * w)
        mi[torch.as_tensor(hide)] = 0
        m[i] = mi.view(1, h, w).expand(c, h, w)
    return m


def make_operator(task: str, n: int, image_shape: tuple[int, ...], *, seed: int = 0, box: int = 8,
                  box_top: int | None = None, box_left: int | None = None, random_box: bool = False,
                  missing: float = 0.7, blur_size: int = 5, blur_sigma: float = 1.0) -> Operator:
    """The operator of ``task`` (box, random, sr2, blur) for ``n`` images; masks come from ``seed``."""
    if len(image_shape) != 3:
        raise InputError(f"images must be (C, H, W); got {image_shape}")
    rng = np.random.default_rng(seed)
    if task == "box":
        return MaskOperator(box_mask(n, image_shape, box, box_top, box_left, rng if random_box else None), "box")
    if task == "random":
        return MaskOperator(random_mask(n, image_shape, missing, rng), "random")
    if task == "sr2":
        if image_shape[1] % 2 or image_shape[2] % 2:
            raise InputError(f"2× super-resolution needs even image sides, got {image_shape[1:]}")
        return SuperRes(2, image_shape)
    if task == "blur":
        return GaussianBlur(blur_size, blur_sigma, image_shape)
    raise InputError(f"unknown task '{task}'; expected one of {', '.join(TASKS)}")


def check_mask(mask: np.ndarray | torch.Tensor, image_shape: tuple[int, ...]) -> torch.Tensor:
    """A user mask file (H, W), (C, H, W) or (n, C, H, W) of 0/1 → (n or 1, C, H, W); all-0/all-1 refused."""
    m = torch.as_tensor(np.asarray(mask), dtype=torch.float32)
    c, h, w = image_shape
    if m.dim() == 2:
        m = m[None, None].expand(1, c, h, w)
    elif m.dim() == 3:
        m = m[None]
    if m.dim() != 4 or tuple(m.shape[1:]) not in ((c, h, w), (1, h, w)):
        raise InputError(f"mask: shape {tuple(np.shape(mask))} does not fit images of shape {image_shape}")
    if not torch.all((m == 0) | (m == 1)):
        raise InputError("mask: expected only 0 (missing) and 1 (observed) values")
    for i in range(m.shape[0]):
        if m[i].sum() == 0:
            raise InputError(f"mask: image {i}'s mask observes no pixel (covers everything)")
        if m[i].sum() == m[i].numel():
            raise InputError(f"mask: image {i}'s mask hides no pixel (covers nothing); nothing to restore")
    return m.expand(m.shape[0], c, h, w).contiguous()


def measure(op: Operator, x: torch.Tensor, tau: float, seed: int = 0) -> torch.Tensor:
    """y = A(x) + τ·ξ with ξ from ``seed``; τ must be positive."""
    if not tau > 0 or not math.isfinite(tau):
        raise InputError(f"noise level τ = {tau}; expected τ > 0")
    y = op(x)
    g = torch.Generator().manual_seed(seed)
    y = y + tau * torch.randn(y.shape, generator=g)
    mask = op.observed_pixels()
    return y * mask if mask is not None else y  # unobserved pixels carry no value, not noise
