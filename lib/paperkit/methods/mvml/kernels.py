"""Numba kernels of the TMvML ADMM solver (Section 3.3), each beside its NumPy reference.

* :func:`lambertw0` — principal branch of Lambert W on [−1/e, 0] (Halley's method); reference:
  ``scipy.special.lambertw``.
* :func:`shrink_value` — the scalar proximal maps (exact Laplace, reweighted Laplace, soft threshold);
  reference: :func:`paperkit.methods.mvml.tensor.shrink`.
* :func:`prox_views` — the LTR/TNN proximal step on the rotated tensor, computed straight from the
  per-view layout ``(V, m, q)``: a real DFT along the label mode as two GEMMs, one SVD per Fourier slice
  ``k ≤ q/2``, shrinkage, and the inverse real DFT (conjugate symmetry is implied by
  only keeping the half spectrum); reference: :func:`paperkit.methods.mvml.tensor.prox`.
* :func:`admm_iterations` — a run of ADMM iterations (W-update by the cached eigendecomposition of each
  view's Gram matrix, G-update by :func:`prox_views`, multiplier and penalty updates, objective and
  residual trace); reference: :func:`paperkit.methods.mvml.solver.admm_reference`.

The per-iteration cost does not depend on the number of samples: the data enter only through the
Gram matrices XᵥᵀXᵥ (as eigenpairs), XᵥᵀY and ‖Y‖².

No ``parallel=True``: the work per iteration is a few hundred small SVDs and GEMMs, where thread start-up
cost more than it saved (measured: 20+ ms per iteration with ``prange`` over slices against 0.6 ms
serial on the digits problem), and a cached parallel kernel called from another cached kernel crashed
numba 0.6x in a fresh process. The solver instead pins BLAS to one thread (see solver.py), which is what
makes these small products fast on a loaded machine.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

PENALTY_CODES = {"none": 0, "tnn": 1, "ltr": 2}
PROX_CODES = {"exact": 0, "reweighted": 1}
TRACE_COLUMNS = ("objective", "loss", "penalty", "primal_residual", "change", "mu")
_INV_E = math.exp(-1.0)


@njit(cache=True)
def lambertw0(z):
    """W₀(z) for z in [−1/e, 0]."""
    if z >= 0.0:
        return 0.0
    q = 2.0 * (math.e * z + 1.0)
    if q <= 0.0:
        return -1.0
    p = math.sqrt(q)
    if z < -0.25:
        w = -1.0 + p - p * p / 3.0 + 11.0 / 72.0 * p * p * p
    else:
        w = z - z * z + 1.5 * z * z * z
    if q < 1e-14:
        return w
    for _ in range(64):
        ew = math.exp(w)
        f = w * ew - z
        wp1 = w + 1.0
        step = f / (ew * wp1 - (w + 2.0) * f / (2.0 * wp1))
        w -= step
        if abs(step) <= 1e-15 * (1.0 + abs(w)):
            break
    return w


@njit(cache=True)
def laplace_prox(sigma, tau, delta):
    """argmin over x ≥ 0 of τ(1 − e^{−x/δ}) + ½(x − σ)² (see tensor.laplace_prox_scalar)."""
    if sigma <= 0.0:
        return 0.0
    if tau <= 0.0:
        return sigma
    c = math.exp(math.log(tau) - 2.0 * math.log(delta) - sigma / delta)
    if c > _INV_E:
        return 0.0
    x = sigma + delta * lambertw0(-c)
    if x <= 0.0:
        return 0.0
    hx = tau * (-math.expm1(-x / delta)) + 0.5 * (x - sigma) * (x - sigma)
    if hx <= 0.5 * sigma * sigma:
        return x
    return 0.0


@njit(cache=True)
def shrink_value(sigma, tau, penalty, delta, method, passes):
    """The scalar proximal map of τ·φ for penalty code 0 (none), 1 (tnn), 2 (ltr)."""
    if penalty == 0:
        return sigma
    if penalty == 1:
        return max(sigma - tau, 0.0)
    if method == 0:
        return laplace_prox(sigma, tau, delta)
    x = sigma
    for _ in range(passes):
        x = max(sigma - tau * math.exp(-x / delta) / delta, 0.0)
    hx = tau * (-math.expm1(-x / delta)) + 0.5 * (x - sigma) * (x - sigma)
    if hx <= 0.5 * sigma * sigma:
        return x
    return 0.0


@njit(cache=True)
def phi_value(sigma, penalty, delta):
    if penalty == 0:
        return 0.0
    if penalty == 1:
        return sigma
    return -math.expm1(-sigma / delta)


def dft_tables(q: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Real-DFT tables for length ``q``: forward cos/sin ``(q, h)`` and inverse ``(h, q)``, h = q//2 + 1.

    Forward: Re Ā_k = Σ_j A_j cos θ_jk, Im Ā_k = −Σ_j A_j sin θ_jk (θ_jk = 2πjk/q).
    Inverse: A_j = Σ_k (w_k/q)(Re Ā_k cos θ_jk − Im Ā_k sin θ_jk), w_k = 2 except k = 0 and the
    Nyquist slice, where w_k = 1 (the conjugate slices k > q/2 counted through w_k).
    """
    h = q // 2 + 1
    j = np.arange(q)[:, None]
    k = np.arange(h)[None, :]
    theta = 2.0 * np.pi * ((j * k) % q) / q
    cf = np.ascontiguousarray(np.cos(theta))
    sf = np.ascontiguousarray(np.sin(theta))
    w = np.full(h, 2.0)
    w[0] = 1.0
    if q % 2 == 0:
        w[-1] = 1.0
    ci = np.ascontiguousarray((cf * w[None, :] / q).T)
    si = np.ascontiguousarray((sf * w[None, :] / q).T)
    return cf, sf, ci, si


def slice_multiplicity(q: int) -> np.ndarray:
    """How many Fourier slices (of all q) each half-spectrum slice k = 0..q//2 stands for."""
    h = q // 2 + 1
    mult = np.full(h, 2.0)
    mult[0] = 1.0
    if q % 2 == 0:
        mult[-1] = 1.0
    return mult


@njit(cache=True)
def _slice_prox(k, re, im, m, V, tau, penalty, delta, method, passes, gr, gi, s_out):
    a = np.empty((m, V), dtype=np.complex128)
    for v in range(V):
        for i in range(m):
            a[i, v] = complex(re[v * m + i, k], im[v * m + i, k])
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    r = s.shape[0]
    for i in range(r):
        s_new = shrink_value(s[i], tau, penalty, delta, method, passes)
        s_out[k, i] = s_new
        for row in range(m):
            u[row, i] *= s_new
    g = u @ vh
    for v in range(V):
        for i in range(m):
            gr[v * m + i, k] = g[i, v].real
            gi[v * m + i, k] = g[i, v].imag


@njit(cache=True)
def prox_views(B, tau, penalty, delta, method, passes, cf, sf, ci, si, s_out):
    """Proximal step of τ·penalty on the rotated tensor of ``B`` (V, m, q); returns G in the same layout.

    ``s_out`` (q//2 + 1, min(m, V)) receives the shrunk singular values of the half spectrum.
    """
    V, m, q = B.shape
    b2 = np.ascontiguousarray(B).reshape(V * m, q)
    re = b2 @ cf
    im = -(b2 @ sf)
    gr = np.empty_like(re)
    gi = np.empty_like(im)
    for k in range(re.shape[1]):
        _slice_prox(k, re, im, m, V, tau, penalty, delta, method, passes, gr, gi, s_out)
    g2 = gr @ ci - gi @ si
    return g2.reshape(V, m, q)


@njit(cache=True)
def admm_iterations(U, Ut, s, XtY, yty, n, W, G, Lam, mu, gamma, lam, delta, penalty, method, passes,
                    rho, mu_max, tol, it0, it1, cf, sf, ci, si, mult, trace):
    """ADMM iterations ``it0 .. it1 − 1`` (0-based) updating W, G, Lam in place.

    U, Ut, s: eigenvectors (V, m, m), their transposes and eigenvalues (V, m) of XᵥᵀXᵥ; XtY (V, m, q);
    yty = ‖Y‖²_F; n the sample count (the loss is (1/n)Σᵥ‖XᵥWᵥ − Y‖²). Writes one row per iteration
    into ``trace`` (columns TRACE_COLUMNS). Returns (iterations done so far, μ, converged).
    """
    V, m, q = W.shape
    h = cf.shape[1]
    r = min(m, V)
    s_out = np.zeros((h, r))
    scale = 2.0 / n
    it = it0
    converged = False
    while it < it1:
        # W-update: ((2/n)XᵀX + (2γ + μ)I) Wᵥ = (2/n)XᵀY + μGᵥ − Λᵥ, through XᵀX = U diag(s) Uᵀ.
        change = 0.0
        for v in range(V):
            rhs = scale * XtY[v] + mu * G[v] - Lam[v]
            z = Ut[v] @ rhs
            for i in range(m):
                d = 1.0 / (scale * s[v, i] + 2.0 * gamma + mu)
                for j in range(q):
                    z[i, j] *= d
            wv = U[v] @ z
            for i in range(m):
                for j in range(q):
                    dw = abs(wv[i, j] - W[v, i, j])
                    if dw > change:
                        change = dw
                    W[v, i, j] = wv[i, j]
        # G-update: proximal step of (λ/μ)·penalty at rotate(W) + rotate(Λ)/μ.
        B = W + Lam / mu
        Gn = prox_views(B, lam / mu, penalty, delta, method, passes, cf, sf, ci, si, s_out)
        # Multiplier update and primal residual.
        primal = 0.0
        for v in range(V):
            for i in range(m):
                for j in range(q):
                    G[v, i, j] = Gn[v, i, j]
                    diff = W[v, i, j] - Gn[v, i, j]
                    Lam[v, i, j] += mu * diff
                    if abs(diff) > primal:
                        primal = abs(diff)
        # Objective at G (whose Fourier singular values are s_out): loss from the Gram eigenpairs.
        loss = 0.0
        ridge = 0.0
        for v in range(V):
            zg = Ut[v] @ G[v]
            quad = 0.0
            cross = 0.0
            for i in range(m):
                for j in range(q):
                    quad += s[v, i] * zg[i, j] * zg[i, j]
                    cross += G[v, i, j] * XtY[v, i, j]
                    ridge += G[v, i, j] * G[v, i, j]
            loss += (quad - 2.0 * cross + yty) / n
        pen = 0.0
        for k in range(h):
            for i in range(r):
                pen += mult[k] * phi_value(s_out[k, i], penalty, delta)
        pen /= q
        trace[it, 0] = loss + gamma * ridge + lam * pen
        trace[it, 1] = loss
        trace[it, 2] = pen
        trace[it, 3] = primal
        trace[it, 4] = change
        trace[it, 5] = mu
        mu = min(rho * mu, mu_max)
        it += 1
        if primal < tol:
            converged = True
            break
    return it, mu, converged
