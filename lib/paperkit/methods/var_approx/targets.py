"""Target maps g: X_init ∈ [0,1]^{h1×w1×d} → an image at the last scale (the spec's empirical counterpart of
Thm 6.6's Lipschitz f). All are drawn from a seed; inputs are uniform on the unit cube.

* ``fourier``: g(X) = Σ_j B_j·sin(a_j⟨u_j, vec X⟩ + b_j) with orthonormal images B_j and directions u_j, so
  the Jacobian's singular values are a_j|cos θ_j| and the Lipschitz constant is exactly max a_j = L (reached
  at the cube's centre, where every θ_j = 0).
* ``digits``: Nadaraya–Watson interpolation of sklearn's digits over a PCA code (Lipschitz ≈ 1/h).
* ``context``: every pixel is a product of two different initial tokens' projections (needs mixing).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperkit.core.errors import UsageError

TARGETS = ("fourier", "digits", "context")


@dataclass
class Target:
    """A drawn target: ``fn`` maps a torch batch ``(N, h1, w1, d)`` to images ``(N, S, S, 1)``."""

    name: str
    fn: object
    lipschitz: float | None  # the set constant (None where only an estimate exists)

    def __call__(self, x):
        return self.fn(x)


def _orthonormal(rng: np.random.Generator, rows: int, cols: int) -> np.ndarray:
    q, _ = np.linalg.qr(rng.standard_normal((rows, cols)))
    return q[:, :cols]


def fourier_target(init: tuple[int, int], dim: int, side: int, lipschitz: float, rng: np.random.Generator) -> Target:
    import torch

    n_in, n_out = init[0] * init[1] * dim, side * side
    terms = min(8, n_in, n_out)
    u = torch.from_numpy(_orthonormal(rng, n_in, terms))            # (n_in, J)
    basis = torch.from_numpy(_orthonormal(rng, n_out, terms))       # (n_out, J)
    freq = lipschitz * rng.uniform(0.5, 1.0, terms)
    freq[int(np.argmax(freq))] = lipschitz
    freq = torch.from_numpy(freq)
    centre = 0.5 * torch.ones(n_in, dtype=torch.float64)
    phase = -freq * (centre @ u)                                     # θ_j = 0 at the centre

    def fn(x):
        z = x.reshape(x.shape[0], -1).to(torch.float64) @ u                   # (N, J)
        y = torch.sin(freq * z + phase) @ basis.T                     # (N, n_out)
        return y.to(x.dtype).reshape(x.shape[0], side, side, 1)

    return Target("fourier", fn, float(lipschitz))


def context_target(init: tuple[int, int], dim: int, side: int, rng: np.random.Generator) -> Target:
    import torch

    n_tok = init[0] * init[1]
    if n_tok < 2:
        raise UsageError("--target context needs at least two initial tokens (an --init with H·W >= 2)")
    pix = side * side
    first = rng.integers(0, n_tok, pix)
    second = (first + rng.integers(1, n_tok, pix)) % n_tok                 # always a different token
    a = torch.from_numpy(rng.standard_normal((pix, dim)) / np.sqrt(dim))
    b = torch.from_numpy(rng.standard_normal((pix, dim)) / np.sqrt(dim))
    first, second = torch.from_numpy(first), torch.from_numpy(second)

    def fn(x):
        t = (x.reshape(x.shape[0], n_tok, dim).to(torch.float64) - 0.5) * 2.0
        y = (t[:, first] * a).sum(-1) * (t[:, second] * b).sum(-1)          # (N, pix)
        return y.to(x.dtype).reshape(x.shape[0], side, side, 1)

    return Target("context", fn, None)


def digit_images(side: int) -> np.ndarray:
    """sklearn's 1,797 digits in [0,1], resized from their native 8×8 to side×side (bicubic up, area down)."""
    import torch
    from sklearn.datasets import load_digits

    from paperkit.methods.var_approx.pyramid import area, bicubic

    t = torch.from_numpy(load_digits().images[..., None] / 16.0)
    return (bicubic(t, (side, side)) if side > 8 else area(t, (side, side)))[..., 0].numpy()


def digits_codebook(pca_dim: int, side: int) -> tuple[np.ndarray, np.ndarray]:
    """PCA codes of sklearn's digits scaled to [0,1] (N, q), and the images resized to side×side (N, S, S)."""
    from sklearn.decomposition import PCA

    native = digit_images(8)
    code = PCA(n_components=pca_dim, svd_solver="full").fit_transform(native.reshape(len(native), -1))
    code = (code - code.min(0)) / (code.max(0) - code.min(0))
    return code, digit_images(side)


def digits_target(init: tuple[int, int], dim: int, side: int, pca_dim: int, bandwidth: float) -> Target:
    import torch

    if not 2 <= pca_dim <= 8:
        raise UsageError(f"--pca-dim {pca_dim} is outside 2..8")
    if pca_dim > init[0] * init[1] * dim:
        raise UsageError(f"--pca-dim {pca_dim} does not fit in an {init[0]}x{init[1]}x{dim} initial map")
    code, images = (torch.from_numpy(a) for a in digits_codebook(pca_dim, side))

    def fn(x):
        z = x.reshape(x.shape[0], -1)[:, :pca_dim].to(torch.float64)
        w = torch.softmax(-torch.cdist(z, code).square() / (2 * bandwidth ** 2), dim=1)
        return (w @ images.reshape(len(images), -1)).to(x.dtype).reshape(x.shape[0], side, side, 1)

    return Target("digits", fn, None)


def make_target(name: str, init: tuple[int, int], dim: int, side: int, *, lipschitz: float, pca_dim: int,
                bandwidth: float, rng: np.random.Generator) -> Target:
    if name == "fourier":
        return fourier_target(init, dim, side, lipschitz, rng)
    if name == "context":
        return context_target(init, dim, side, rng)
    if name == "digits":
        return digits_target(init, dim, side, pca_dim, bandwidth)
    raise UsageError(f"unknown target '{name}'; expected one of {', '.join(TARGETS)}")


def lipschitz_estimate(target: Target, init: tuple[int, int], dim: int, samples: int,
                       rng: np.random.Generator) -> float:
    """Empirical Lipschitz constant: the largest spectral norm of g's Jacobian (autograd) over uniform inputs."""
    import torch
    from torch.func import jacrev, vmap

    x = torch.from_numpy(rng.uniform(0, 1, (samples, init[0], init[1], dim)))
    jac = vmap(jacrev(lambda v: target(v[None])[0].reshape(-1)))(x)      # (N, n_out, h1, w1, d)
    jac = jac.reshape(samples, jac.shape[1], -1)
    return float(torch.linalg.matrix_norm(jac, ord=2).max())
