"""Offline multi-view multi-label data: digits-mvml, a shared-latent generator and a planted-tensor generator.

The paper's benchmarks (Emotions, Yeast, Corel5k, Pascal07, ESPGame, IAPRTC12, MIRFlickr with GIST/HSV/
DenseSift/... views) cannot be downloaded here; these stand in for them.

* ``digits-mvml``: scikit-learn's bundled digits (1,797 8×8 images) seen three ways — the 64 pixels; 16
  ink profiles (row sums, column sums); 4×4 zone means plus the 16 lowest 2-D DCT coefficients — with
  six labels derived from the digit: even, prime (2, 3, 5, 7), ≥ 5, closed loop (0, 4, 6, 8, 9),
  straight strokes (1, 4, 7), near-symmetric (0, 1, 8).
* ``synthetic``: a shared latent z (r dims); correlated labels Y = 1[zA + noise > t] with a low-rank A
  (thresholds t at per-label quantiles); views Xᵥ = tanh(zBᵥ) + noise of their own width and noise
  level, plus view-specific nuisance columns. ``extra`` holds the ground truth (``latent`` z,
  ``label_map`` A, ``thresholds`` t, ``label_noise``), so P(Y = 1 | z) = Φ((zA − t)/label_noise) is known:
  ranking by it gives the Bayes ceiling of average precision that no model of the views can pass by much.
* ``planted``: views already of one width m (Gaussian), and a true per-view classifier whose rotated
  tensor has rank ``rank`` in every sense: Wᵥ[:, j] = P Mⱼ Qᵥᵀ with P (m × r), Mⱼ (r × r), Q (V × r);
  labels Y = 1[(1/V)Σᵥ XᵥWᵥ + noise > 0]. Used to check that the solver recovers a low-rank tensor.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from paperkit.core.errors import UsageError

DATASETS = ("digits-mvml", "synthetic", "planted")
DIGIT_LABELS = ("even", "prime", "ge5", "closed_loop", "straight", "symmetric")


@dataclass
class MultiViewData:
    name: str
    views: list[np.ndarray]
    Y: np.ndarray
    view_names: list[str]
    label_names: list[str]
    extra: dict[str, np.ndarray] = field(default_factory=dict)


def digits_mvml() -> MultiViewData:
    from scipy.fft import dctn
    from sklearn.datasets import load_digits

    d = load_digits()
    img = np.asarray(d.images, dtype=np.float64)  # (n, 8, 8), values 0..16
    y = np.asarray(d.target)
    n = img.shape[0]
    pixels = img.reshape(n, 64)
    profiles = np.hstack([img.sum(axis=2), img.sum(axis=1)])
    zones = img.reshape(n, 4, 2, 4, 2).mean(axis=(2, 4)).reshape(n, 16)
    dct = dctn(img, type=2, norm="ortho", axes=(1, 2))[:, :4, :4].reshape(n, 16)
    Y = np.stack([
        y % 2 == 0,
        np.isin(y, (2, 3, 5, 7)),
        y >= 5,
        np.isin(y, (0, 4, 6, 8, 9)),
        np.isin(y, (1, 4, 7)),
        np.isin(y, (0, 1, 8)),
    ], axis=1).astype(np.float64)
    return MultiViewData("digits-mvml", [pixels, profiles, np.hstack([zones, dct])], Y,
                         ["pixels", "profiles", "zones_dct"], list(DIGIT_LABELS), {"digit": y})


def synthetic(rng: np.random.Generator, *, n: int = 600, n_labels: int = 8, latent: int = 4, label_rank: int = 2,
              widths: tuple[int, ...] = (20, 30, 40), noise: tuple[float, ...] = (0.3, 0.6, 0.9),
              nuisance: int = 10, label_noise: float = 0.3) -> MultiViewData:
    if len(widths) != len(noise):
        raise UsageError(f"synthetic: {len(widths)} view widths but {len(noise)} noise levels; expected as many")
    if not 1 <= label_rank <= latent:
        raise UsageError(f"synthetic: label rank {label_rank} must be in [1, latent = {latent}]")
    z = rng.standard_normal((n, latent))
    A = rng.standard_normal((latent, label_rank)) @ rng.standard_normal((label_rank, n_labels))
    A /= np.linalg.norm(A, axis=0, keepdims=True)
    S = z @ A + label_noise * rng.standard_normal((n, n_labels))
    rates = rng.uniform(0.2, 0.45, n_labels)
    thresholds = np.array([np.quantile(S[:, j], 1.0 - rates[j]) for j in range(n_labels)])
    Y = (S > thresholds).astype(np.float64)
    views = []
    for d, s in zip(widths, noise, strict=True):
        B = rng.standard_normal((latent, d)) / np.sqrt(latent)
        X = np.tanh(z @ B) + s * rng.standard_normal((n, d))
        views.append(np.hstack([X, rng.standard_normal((n, nuisance))]))
    return MultiViewData("synthetic", views, Y, [f"view{v + 1}" for v in range(len(views))],
                         [f"label{j + 1}" for j in range(n_labels)],
                         {"latent": z, "label_map": A, "thresholds": thresholds,
                          "label_noise": np.asarray(label_noise, dtype=np.float64)})


def planted(rng: np.random.Generator, *, n: int = 300, m: int = 40, n_views: int = 4, n_labels: int = 6,
            rank: int = 2, noise: float = 0.1) -> MultiViewData:
    if not 1 <= rank <= min(m, n_views):
        raise UsageError(f"planted: rank {rank} must be in [1, min(m, views) = {min(m, n_views)}]")
    P = np.linalg.qr(rng.standard_normal((m, rank)))[0]
    Q = np.linalg.qr(rng.standard_normal((n_views, rank)))[0]
    M = rng.standard_normal((n_labels, rank, rank))
    W = np.einsum("ia,jab,vb->vij", P, M, Q)  # (V, m, q)
    views = [rng.standard_normal((n, m)) for _ in range(n_views)]
    S = sum(X @ W[v] for v, X in enumerate(views)) / n_views
    S /= S.std(axis=0, keepdims=True)
    Y = (S + noise * rng.standard_normal(S.shape) > 0).astype(np.float64)
    return MultiViewData("planted", views, Y, [f"view{v + 1}" for v in range(n_views)],
                         [f"label{j + 1}" for j in range(n_labels)], {"W_true": W})


def load(name: str, rng: np.random.Generator, **kwargs) -> MultiViewData:
    if name == "digits-mvml":
        return digits_mvml()
    if name == "synthetic":
        return synthetic(rng, **kwargs)
    if name == "planted":
        return planted(rng, **kwargs)
    raise UsageError(f"dataset = {name!r} is unknown; expected one of {', '.join(DATASETS)}")
