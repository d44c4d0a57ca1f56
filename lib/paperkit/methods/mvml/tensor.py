"""The tensor classifier, its rotation and the Laplace Tensor Rank (TMvML, Sections 3.1-3.2).

Reference (plain NumPy/SciPy) versions of everything the solver computes; the numba kernels in
:mod:`paperkit.methods.mvml.kernels` are tested against these.

Conventions
-----------
* The classifier is stored per view, ``W`` of shape ``(V, m, q)``: ``W[v]`` maps view ``v``'s ``m``
  mapped features to the ``q`` labels. The paper's tensor ``m × q × V`` has these as frontal slices.
* :func:`rotate` gives the rotated tensor ``m × V × q``: frontal slice ``j`` holds label ``j``'s
  weights in every view (a low rank inside a slice = view-level consistency).
* t-SVD: FFT along the third (label) mode; frontal slice ``k`` of the transform is ``Ā_k``.
* Penalties on the rotated tensor ``A`` (``n3 = q`` Fourier slices), with the 1/n3 factor that makes
  the tensor nuclear norm agree with Parseval:

  - ``ltr``: LTR(A) = (1/n3) Σ_k Σ_i (1 − exp(−σ_i(Ā_k)/δ))   (reconstructed; see the docs)
  - ``tnn``: TNN(A) = (1/n3) Σ_k Σ_i σ_i(Ā_k)
  - ``none``: 0.

  Each LTR term is ≈ σ/δ for σ ≪ δ and → 1 for σ ≫ δ: it approaches the tubal rank as δ → 0 and
  (λ/δ)·TNN as δ → ∞.
* The proximal step of τ·penalty decouples over Fourier slices (Parseval), and inside a slice over
  singular values (generalized singular value thresholding, Lu et al. 2015: valid for any
  concave non-decreasing φ whose scalar proximal map is monotone). Slices ``k`` and ``n3 − k`` are
  complex conjugates; only ``k ≤ n3/2`` are computed and the rest are filled in by conjugation so that
  the inverse FFT is real.
"""

from __future__ import annotations

import numpy as np

PENALTIES = ("ltr", "tnn", "none")
PROX_METHODS = ("exact", "reweighted")


def rotate(W: np.ndarray) -> np.ndarray:
    """Per-view classifier ``(V, m, q)`` → rotated tensor ``(m, V, q)``."""
    return np.ascontiguousarray(np.transpose(W, (1, 0, 2)))


def unrotate(T: np.ndarray) -> np.ndarray:
    """Rotated tensor ``(m, V, q)`` → per-view classifier ``(V, m, q)``."""
    return np.ascontiguousarray(np.transpose(T, (1, 0, 2)))


def paper_tensor(W: np.ndarray) -> np.ndarray:
    """The paper's layout ``m × q × V`` (frontal slice ``v`` = view ``v``'s map)."""
    return np.ascontiguousarray(np.transpose(W, (1, 2, 0)))


def fourier_singular_values(T: np.ndarray) -> np.ndarray:
    """Singular values of every Fourier slice of ``T`` (n1, n2, n3): shape ``(n3, min(n1, n2))``."""
    Tf = np.fft.fft(T, axis=2)
    return np.linalg.svd(np.moveaxis(Tf, 2, 0), compute_uv=False)


def phi(sigma: np.ndarray, penalty: str, delta: float) -> np.ndarray:
    """The per-singular-value penalty φ(σ)."""
    sigma = np.asarray(sigma, dtype=np.float64)
    if penalty == "ltr":
        return -np.expm1(-sigma / delta)
    if penalty == "tnn":
        return sigma
    if penalty == "none":
        return np.zeros_like(sigma)
    raise ValueError(f"unknown penalty {penalty!r}")


def penalty_value(T: np.ndarray, penalty: str, delta: float = 1.0) -> float:
    """LTR / TNN of a rotated tensor ``T`` (with the 1/n3 factor)."""
    if penalty == "none":
        return 0.0
    s = fourier_singular_values(T)
    return float(phi(s, penalty, delta).sum() / T.shape[2])


def laplace_prox_scalar(sigma: float, tau: float, delta: float) -> float:
    """argmin over x ≥ 0 of τ(1 − exp(−x/δ)) + ½(x − σ)², exactly.

    Stationary points solve x = σ − (τ/δ)e^{−x/δ}; with u = (σ − x)/δ this is u e^{−u} = c,
    c = (τ/δ²) e^{−σ/δ}, so the local minimum is x* = σ + δ·W₀(−c) (principal Lambert W) when
    c ≤ 1/e. The global minimum on x ≥ 0 is x* or 0, whichever scores lower.
    """
    from scipy.special import lambertw

    if sigma <= 0.0:
        return 0.0
    h0 = 0.5 * sigma * sigma
    c = np.exp(np.log(tau) - 2.0 * np.log(delta) - sigma / delta)
    if c > np.exp(-1.0):
        return 0.0
    x = sigma + delta * float(np.real(lambertw(-c, 0)))
    if x <= 0.0:
        return 0.0
    hx = tau * -np.expm1(-x / delta) + 0.5 * (x - sigma) ** 2
    return float(x) if hx <= h0 else 0.0


def laplace_prox(sigma: np.ndarray, tau: float, delta: float) -> np.ndarray:
    """:func:`laplace_prox_scalar` on an array of singular values (vectorised)."""
    from scipy.special import lambertw

    sigma = np.asarray(sigma, dtype=np.float64)
    if tau <= 0.0:
        return sigma.copy()
    with np.errstate(divide="ignore", over="ignore"):
        c = np.exp(np.log(tau) - 2.0 * np.log(delta) - sigma / delta)
    ok = (sigma > 0.0) & (c <= np.exp(-1.0))
    z = np.maximum(-np.where(ok, c, 0.0), -np.exp(-1.0))
    x = np.where(ok, sigma + delta * np.real(lambertw(z, 0)), 0.0)
    ok &= x > 0.0
    hx = tau * -np.expm1(-x / delta) + 0.5 * (x - sigma) ** 2
    ok &= hx <= 0.5 * sigma**2
    return np.where(ok, x, 0.0)


def shrink(sigma: np.ndarray, tau: float, penalty: str, delta: float = 1.0, method: str = "exact",
           passes: int = 2) -> np.ndarray:
    """Scalar proximal map of τ·φ applied to each singular value.

    ``method='exact'`` solves the scalar problem globally (Lambert W). ``'reweighted'`` is the
    iteratively reweighted shrinkage of IRNN-type solvers: ``passes`` steps of
    x ← max(σ − τ·φ'(x), 0) starting from x = σ (weights φ'(x) = e^{−x/δ}/δ), the result kept only when it
    scores no worse than 0.
    """
    sigma = np.asarray(sigma, dtype=np.float64)
    if penalty == "none":
        return sigma.copy()
    if penalty == "tnn":
        return np.maximum(sigma - tau, 0.0)
    if penalty != "ltr":
        raise ValueError(f"unknown penalty {penalty!r}")
    if method == "exact":
        return laplace_prox(sigma, tau, delta)
    if method != "reweighted":
        raise ValueError(f"unknown prox method {method!r}")
    x = sigma.copy()
    for _ in range(passes):
        x = np.maximum(sigma - tau * np.exp(-x / delta) / delta, 0.0)
    hx = tau * -np.expm1(-x / delta) + 0.5 * (x - sigma) ** 2
    return np.where(hx <= 0.5 * sigma**2, x, 0.0)


def prox(T: np.ndarray, tau: float, penalty: str, delta: float = 1.0, method: str = "exact",
         passes: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Proximal step of τ·penalty at the real tensor ``T`` (n1, n2, n3).

    Returns the real tensor and the shrunk singular values of its Fourier slices ``(n3, min(n1, n2))``.
    """
    n3 = T.shape[2]
    Tf = np.fft.fft(T, axis=2)
    Gf = np.zeros_like(Tf)
    kept = np.zeros((n3, min(T.shape[0], T.shape[1])))
    for k in range(n3 // 2 + 1):
        U, s, Vh = np.linalg.svd(Tf[:, :, k], full_matrices=False)
        s_new = shrink(s, tau, penalty, delta, method, passes)
        Gf[:, :, k] = (U * s_new) @ Vh
        kept[k] = s_new
        if 0 < k < n3 - k:
            Gf[:, :, n3 - k] = np.conj(Gf[:, :, k])
            kept[n3 - k] = s_new
    return np.real(np.fft.ifft(Gf, axis=2)), kept


def prox_objective(G: np.ndarray, T: np.ndarray, tau: float, penalty: str, delta: float = 1.0) -> float:
    """τ·penalty(G) + ½‖G − T‖²_F: the function :func:`prox` minimises."""
    return tau * penalty_value(G, penalty, delta) + 0.5 * float(np.sum((G - T) ** 2))
