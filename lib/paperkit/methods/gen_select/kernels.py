"""Kernels of PAK-UCB (Hu, Leung & Farnia, ICML 2025, Section 4): RBF, polynomial and linear, and the
random Fourier features of RFF-UCB (Section 5) that approximate the RBF kernel.

Also the numba rank-one update of the Schur-complement step (beside its numpy reference).

Every kernel is evaluated between a stack of stored contexts ``X`` (n×d) and one new context ``x``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperkit.core.errors import UsageError

KERNELS = ("rbf", "poly", "lin")
RFF_VARIANTS = ("cos", "cos-sin")


@dataclass(frozen=True)
class Kernel:
    """k(x, x'): ``rbf`` exp(−‖x − x'‖²/(2·bandwidth²)); ``poly`` (gamma·xᵀx' + coef)^degree; ``lin`` xᵀx'."""

    name: str = "rbf"
    bandwidth: float = 2.0
    gamma: float = 1.0
    degree: int = 3
    coef: float = 1.0

    def __post_init__(self) -> None:
        if self.name not in KERNELS:
            raise UsageError(f"unknown kernel '{self.name}'; expected one of {', '.join(KERNELS)}")
        if not self.bandwidth > 0 or not self.gamma > 0 or self.degree < 1:
            raise UsageError("kernel bandwidth and gamma must be > 0 and the degree ≥ 1")

    def from_products(self, dots: np.ndarray, sq_dists: np.ndarray | None) -> np.ndarray:
        """The kernel from inner products (lin, poly) or squared distances (rbf)."""
        if self.name == "rbf":
            return np.exp(-np.maximum(sq_dists, 0.0) / (2.0 * self.bandwidth**2))
        if self.name == "poly":
            return (self.gamma * dots + self.coef) ** self.degree
        return dots

    def vector(self, X: np.ndarray, x: np.ndarray, sq_norms: np.ndarray | None = None) -> np.ndarray:
        """k(X_i, x) for every row of X; ``sq_norms`` (‖X_i‖², cached by the caller) speeds up rbf."""
        dots = X @ x
        if self.name != "rbf":
            return self.from_products(dots, None)
        if sq_norms is None:
            sq_norms = np.einsum("ij,ij->i", X, X)
        return self.from_products(None, sq_norms - 2.0 * dots + x @ x)

    def diag(self, x: np.ndarray) -> float:
        """k(x, x)."""
        if self.name == "rbf":
            return 1.0
        return float(self.from_products(np.asarray(x @ x), None))

    def matrix(self, X: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
        """The Gram matrix k(X_i, Y_j) (Y defaults to X)."""
        Y = X if Y is None else Y
        dots = X @ Y.T
        if self.name != "rbf":
            return self.from_products(dots, None)
        sq = np.einsum("ij,ij->i", X, X)[:, None] + np.einsum("ij,ij->i", Y, Y)[None, :] - 2.0 * dots
        return self.from_products(None, sq)


class FourierFeatures:
    """Random Fourier features of the RBF kernel exp(−‖x − x'‖²/(2σ²)) (Rahimi & Recht 2007).

    ``cos``: φ(x) = sqrt(2/D)·cos(Ωx + b), ω ~ N(0, σ⁻²I), b ~ U[0, 2π], D features.
    ``cos-sin``: φ(x) = sqrt(1/D)·[cos(Ωx), sin(Ωx)], 2D features; φ(x)ᵀφ(x') = mean cos(ωᵀ(x − x')).
    Both are unbiased: E[φ(x)ᵀφ(x')] = k(x, x').
    """

    def __init__(self, dim: int, n_features: int, bandwidth: float, rng: np.random.Generator,
                 variant: str = "cos") -> None:
        if variant not in RFF_VARIANTS:
            raise UsageError(f"unknown RFF variant '{variant}'; expected one of {', '.join(RFF_VARIANTS)}")
        if n_features < 1:
            raise UsageError(f"rff-dim = {n_features}; expected at least 1 feature")
        self.variant = variant
        self.omega = rng.standard_normal((n_features, dim)) / bandwidth
        self.phase = rng.uniform(0.0, 2.0 * np.pi, n_features) if variant == "cos" else None
        self.n_out = n_features if variant == "cos" else 2 * n_features

    def __call__(self, x: np.ndarray) -> np.ndarray:
        proj = self.omega @ x.T if x.ndim == 2 else self.omega @ x
        d = self.omega.shape[0]
        if self.variant == "cos":
            if x.ndim == 2:
                return (np.sqrt(2.0 / d) * np.cos(proj + self.phase[:, None])).T
            return np.sqrt(2.0 / d) * np.cos(proj + self.phase)
        out = np.concatenate([np.cos(proj), np.sin(proj)], axis=0) / np.sqrt(d)
        return out.T if x.ndim == 2 else out


def rank_one_update_reference(A: np.ndarray, u: np.ndarray, scale: float) -> None:
    """A[:n, :n] += scale·uuᵀ in place (n = len(u)); the plain numpy version."""
    n = len(u)
    A[:n, :n] += scale * np.outer(u, u)


def _rank_one_numba():
    from numba import njit

    @njit(cache=True)
    def update(A, u, scale):  # pragma: no cover - compiled
        n = u.shape[0]
        for i in range(n):
            ui = scale * u[i]
            for j in range(n):
                A[i, j] += ui * u[j]

    return update


_compiled = None


def rank_one_update(A: np.ndarray, u: np.ndarray, scale: float) -> None:
    """A[:n, :n] += scale·uuᵀ in place without the n×n temporary of ``np.outer`` (numba)."""
    global _compiled
    if _compiled is None:
        _compiled = _rank_one_numba()
    _compiled(A, np.ascontiguousarray(u), float(scale))
