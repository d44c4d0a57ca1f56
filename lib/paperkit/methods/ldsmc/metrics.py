"""Offline metrics (spec "Data, metrics that work offline").

Images are (n, C, H, W) arrays in [−1, 1] (data range 2). The digits classifier is a one-hidden-layer
MLP fitted on the 16×16 training digits; its hidden ReLU activations are the feature space of the
"Fréchet digits distance" (in place of FID) and of the feature distance (in place of LPIPS).
"""

from __future__ import annotations

import numpy as np


def psnr(x: np.ndarray, ref: np.ndarray, data_range: float = 2.0) -> np.ndarray:
    mse = ((x - ref) ** 2).reshape(len(x), -1).mean(1)
    return 10 * np.log10(data_range**2 / np.maximum(mse, 1e-12))


def _gauss_filter(img: np.ndarray, sigma: float, size: int) -> np.ndarray:
    from scipy.ndimage import convolve1d

    r = np.arange(size) - (size - 1) / 2
    k = np.exp(-(r**2) / (2 * sigma**2))
    k /= k.sum()
    out = convolve1d(img, k, axis=-1, mode="reflect")
    return convolve1d(out, k, axis=-2, mode="reflect")


def ssim(x: np.ndarray, ref: np.ndarray, data_range: float = 2.0, sigma: float = 1.5, size: int = 7) -> np.ndarray:
    """Mean SSIM per image (Wang et al. 2004) with a Gaussian window; K1 = 0.01, K2 = 0.03."""
    x, ref = x.astype(np.float64), ref.astype(np.float64)
    c1, c2 = (0.01 * data_range) ** 2, (0.03 * data_range) ** 2
    mx, my = _gauss_filter(x, sigma, size), _gauss_filter(ref, sigma, size)
    sxx = _gauss_filter(x * x, sigma, size) - mx**2
    syy = _gauss_filter(ref * ref, sigma, size) - my**2
    sxy = _gauss_filter(x * ref, sigma, size) - mx * my
    s = ((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx**2 + my**2 + c1) * (sxx + syy + c2))
    return s.reshape(len(x), -1).mean(1)


def masked_mse(x: np.ndarray, ref: np.ndarray, observed: np.ndarray | None) -> np.ndarray:
    """MSE over the unobserved pixels (the whole image when there is no mask)."""
    sq = (x - ref) ** 2
    if observed is None:
        return sq.reshape(len(x), -1).mean(1)
    hole = 1.0 - np.broadcast_to(observed, x.shape)
    return (sq * hole).reshape(len(x), -1).sum(1) / np.maximum(hole.reshape(len(x), -1).sum(1), 1)


def residual(y: np.ndarray, ay: np.ndarray, m: int) -> np.ndarray:
    """‖y − A(x̂)‖/√m per image."""
    return np.sqrt(((y - ay) ** 2).reshape(len(y), -1).sum(1) / m)


class DigitsClassifier:
    """MLP(64 ReLU) on flattened 16×16 images; ``features`` are the hidden activations."""

    def __init__(self, hidden: int = 64, seed: int = 0):
        self.hidden, self.seed = hidden, seed

    def fit(self, images: np.ndarray, labels: np.ndarray, max_iter: int = 300) -> DigitsClassifier:
        import warnings

        from sklearn.exceptions import ConvergenceWarning
        from sklearn.neural_network import MLPClassifier

        model = MLPClassifier((self.hidden,), max_iter=max_iter, random_state=self.seed, alpha=1e-3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.filterwarnings("always", message="Training interrupted by user")
            model.fit(images.reshape(len(images), -1), labels)
        # scikit-learn's MLP catches Ctrl-C, warns and returns the half-trained model: raise it again, so the
        # run stops (exit 130) instead of saving that model as a finished stage
        if any("Training interrupted by user" in str(w.message) for w in caught):
            raise KeyboardInterrupt
        for w in caught:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        self.weights = {"W1": model.coefs_[0], "b1": model.intercepts_[0], "W2": model.coefs_[1],
                        "b2": model.intercepts_[1], "classes": model.classes_}
        return self

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> DigitsClassifier:
        c = cls(int(arrays["W1"].shape[1]))
        c.weights = {k: np.asarray(v) for k, v in arrays.items()}
        return c

    def features(self, images: np.ndarray) -> np.ndarray:
        w = self.weights
        return np.maximum(images.reshape(len(images), -1) @ w["W1"] + w["b1"], 0.0)

    def predict(self, images: np.ndarray) -> np.ndarray:
        w = self.weights
        return w["classes"][np.argmax(self.features(images) @ w["W2"] + w["b2"], axis=1)]

    def accuracy(self, images: np.ndarray, labels: np.ndarray) -> float:
        return float((self.predict(images) == labels).mean())


def frechet_distance(f1: np.ndarray, f2: np.ndarray) -> float:
    """‖μ1 − μ2‖² + tr(Σ1 + Σ2 − 2(Σ1Σ2)^{1/2}) between Gaussian fits of two feature sets."""
    mu1, mu2 = f1.mean(0), f2.mean(0)
    s1, s2 = np.atleast_2d(np.cov(f1, rowvar=False)), np.atleast_2d(np.cov(f2, rowvar=False))
    # tr (Σ1Σ2)^{1/2} = Σ √λ_i over the eigenvalues of Σ1Σ2, which are real and ≥ 0 (similar to a PSD matrix)
    lam = np.linalg.eigvals(s1 @ s2)
    tr_covmean = np.sqrt(np.clip(lam.real, 0.0, None)).sum()
    return float(((mu1 - mu2) ** 2).sum() + np.trace(s1) + np.trace(s2) - 2 * tr_covmean)


def particle_spread(particles: np.ndarray, observed: np.ndarray | None) -> dict[str, float]:
    """Mean per-pixel std across particles (B, N, C, H, W), inside the hole and on observed pixels."""
    std = particles.std(axis=1)
    if observed is None:
        return {"spread": float(std.mean())}
    obs = np.broadcast_to(observed, std.shape)
    return {"spread_hole": float((std * (1 - obs)).sum() / max((1 - obs).sum(), 1)),
            "spread_observed": float((std * obs).sum() / max(obs.sum(), 1))}
