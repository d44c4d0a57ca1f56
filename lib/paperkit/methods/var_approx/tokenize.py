"""VAR's multi-scale residual quantizer (FoundationVision/VAR ``models/quant.py``, ``f_to_idxBl_or_fhat``) with
k-means codebooks, on sklearn's digits: the error of the reconstruction after each number of scales K.

For every scale n_k, coarse to fine: area-downsample the residual to n_k×n_k, replace every token by its
nearest codeword, bicubic-upsample the token map back to the full map, add it to the reconstruction f̂ and
subtract it from the residual. Differences from VAR, said here once: there is no encoder (the feature map is
the image, P×P pixel patches as the channels), no learned 3×3 conv φ_k after the upsampling, and every scale
has its own codebook fitted by k-means on the training residuals of that scale (VAR shares one VQ-VAE
codebook). The same cascade with no quantisation shows the error due to the scales alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from paperkit.core.errors import UsageError
from paperkit.methods.var_approx import pyramid as pyr

MAX_CODEBOOK = 65_536


@dataclass(frozen=True)
class TokenizeSettings:
    side: int = 16
    patch: int = 1
    scales: str = "var"
    codebook: int = 16
    n_test: int = 360
    n_images: int = 1797
    kmeans_init: int = 3
    seed: int = 0


@dataclass
class TokenizeInputs:
    settings: TokenizeSettings
    scales: tuple[int, ...]
    train: np.ndarray  # (N, S/P, S/P, P²) feature maps
    test: np.ndarray
    test_images: np.ndarray  # the first test digits (for the figure), (n, S, S)


def space_to_depth(images: np.ndarray, patch: int) -> np.ndarray:
    """(N, S, S) images → (N, S/P, S/P, P²) maps whose channels are the P×P patches (row-major)."""
    n, s, _ = images.shape
    m = s // patch
    return images.reshape(n, m, patch, m, patch).transpose(0, 1, 3, 2, 4).reshape(n, m, m, patch * patch)


def depth_to_space(maps: np.ndarray, patch: int) -> np.ndarray:
    """The inverse of :func:`space_to_depth`."""
    n, m, _, _ = maps.shape
    return maps.reshape(n, m, m, patch, patch).transpose(0, 1, 3, 2, 4).reshape(n, m * patch, m * patch)


def prepare_tokenize(s: TokenizeSettings) -> TokenizeInputs:
    """Validate the settings and split the digits (resized to ``side``) into train and test maps."""
    from paperkit.methods.var_approx.targets import digit_images

    if not 1 <= s.side <= 64:
        raise UsageError(f"--side {s.side} must be in 1..64")
    if s.patch < 1 or s.side % s.patch:
        raise UsageError(f"--patch {s.patch} must divide --side {s.side}")
    map_side = s.side // s.patch
    scales = pyr.check_scales(pyr.parse_scales(s.scales), (1, 1))
    if scales[-1] != map_side:
        raise UsageError(f"--scales ends at {scales[-1]}; the last scale must be the map's side "
                         f"{map_side} (--side {s.side} / --patch {s.patch}), as in VAR")
    if not 2 <= s.n_images <= 1797:
        raise UsageError(f"--n-images {s.n_images} must be in 2..1797 (sklearn's digits)")
    if not 1 <= s.n_test < s.n_images:
        raise UsageError(f"--n-test {s.n_test} must be in 1..{s.n_images - 1} (fewer than --n-images)")
    if not 2 <= s.codebook <= MAX_CODEBOOK:
        raise UsageError(f"--codebook {s.codebook} must be in 2..{MAX_CODEBOOK} (a scale with fewer distinct "
                         "tokens gets one codeword per token)")
    images = digit_images(s.side)
    order = np.random.default_rng(s.seed).permutation(len(images))[: s.n_images]
    maps = space_to_depth(images[order], s.patch)
    n_train = s.n_images - s.n_test
    return TokenizeInputs(s, scales, maps[:n_train], maps[n_train:], images[order[n_train:]][:6])


Quantize = Callable[[int, np.ndarray], np.ndarray]


def residual_cascade(maps: np.ndarray, scales: Sequence[int], quantize: Quantize) -> list[np.ndarray]:
    """f̂ after each scale: r_k = quantize(k, area(f − f̂, n_k)), f̂ += bicubic(r_k, full side)."""
    import torch

    f = torch.from_numpy(np.ascontiguousarray(maps, dtype=np.float64))
    full = (f.shape[1], f.shape[2])
    rest, hat, out = f.clone(), torch.zeros_like(f), []
    for k, n in enumerate(scales):
        down = pyr.area(rest, (n, n)).numpy()
        step = pyr.bicubic(torch.from_numpy(quantize(k, down)), full)
        hat, rest = hat + step, rest - step
        out.append(hat.numpy().copy())
    return out


def nearest(tokens: np.ndarray, codebook: np.ndarray) -> np.ndarray:
    """Index of the nearest codeword (squared Euclidean) of every row of ``tokens``."""
    d = (tokens ** 2).sum(1)[:, None] - 2 * tokens @ codebook.T + (codebook ** 2).sum(1)[None, :]
    return d.argmin(1)


def fit_codebooks(maps: np.ndarray, scales: Sequence[int], size: int, seed: int, n_init: int = 3,
                  tick: Callable[[], None] = lambda: None) -> list[np.ndarray]:
    """Greedy per-scale k-means codebooks: scale k's codebook is fitted on the training residual tokens left
    by the scales before it (at most ``size`` codewords; fewer where a scale has fewer distinct tokens)."""
    from sklearn.cluster import KMeans

    books: list[np.ndarray] = []

    def quantize(k: int, down: np.ndarray) -> np.ndarray:
        tokens = down.reshape(-1, down.shape[-1])
        distinct = len(np.unique(tokens.round(12), axis=0))
        km = KMeans(n_clusters=min(size, distinct), n_init=n_init, random_state=seed + k).fit(tokens)
        books.append(km.cluster_centers_.astype(np.float64))
        tick()
        return books[-1][nearest(tokens, books[-1])].reshape(down.shape)

    residual_cascade(maps, scales, quantize)
    return books


def encode(maps: np.ndarray, scales: Sequence[int], books: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Reconstructions of ``maps`` after each scale with the fitted codebooks."""
    def quantize(k: int, down: np.ndarray) -> np.ndarray:
        tokens = down.reshape(-1, down.shape[-1])
        return books[k][nearest(tokens, books[k])].reshape(down.shape)

    return residual_cascade(maps, scales, quantize)


def error_rows(inputs: TokenizeInputs, books: Sequence[np.ndarray]) -> list[dict]:
    """One row per number of scales K: tokens, bits, train/test RMSE, test relative L2, and the test RMSE of
    the unquantised cascade (the part of the error the scales alone cause)."""
    scales = inputs.scales
    train = encode(inputs.train, scales, books)
    test = encode(inputs.test, scales, books)
    exact = residual_cascade(inputs.test, scales, lambda k, down: down)
    ref = np.linalg.norm(inputs.test)
    rows, tokens, bits = [], 0, 0.0
    for k, n in enumerate(scales):
        tokens += n * n
        bits += n * n * np.log2(len(books[k]))
        rows.append({"scales_used": k + 1, "side": n, "tokens": tokens, "bits": round(bits, 6),
                     "codewords": len(books[k]), "train_rmse": _rmse(train[k], inputs.train),
                     "test_rmse": _rmse(test[k], inputs.test),
                     "test_rel_l2": float(np.linalg.norm(test[k] - inputs.test) / ref),
                     "test_rmse_unquantized": _rmse(exact[k], inputs.test)})
    return rows


def _rmse(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.sqrt(((a - b) ** 2).mean()))


def tokenize_figures(inputs: TokenizeInputs, rows: Sequence[dict], books: Sequence[np.ndarray]):
    """The error per number of scales (log y), and the first test digits reconstructed after each K."""
    from paperkit.core.plots import new_figure

    s = inputs.settings
    fig, ax = new_figure(figsize=(5.5, 4))
    k = [r["scales_used"] for r in rows]
    for key, label in (("train_rmse", "train"), ("test_rmse", "test"),
                       ("test_rmse_unquantized", "test, no quantisation")):
        ax.semilogy(k, [max(r[key], 1e-12) for r in rows], "o-", label=label)
    ax.set_xticks(k, [f"{r['scales_used']}\n({r['side']})" for r in rows], fontsize=7)
    ax.set_xlabel("scales used K (side of the last one)")
    ax.set_ylabel("RMSE of the reconstruction (pixels in [0,1])")
    ax.set_title(f"digits {s.side}x{s.side}, patch {s.patch}, {s.codebook} codewords per scale", fontsize=9)
    ax.legend(fontsize=8)

    n = len(inputs.test_images)
    recon = [depth_to_space(r, s.patch) for r in encode(inputs.test[:n], inputs.scales, books)]
    grid, axes = new_figure(n, len(recon) + 1, figsize=(0.9 * (len(recon) + 1), 0.95 * n), squeeze=False)
    for i in range(n):
        for j, img in enumerate([inputs.test_images[i], *(r[i] for r in recon)]):
            axes[i, j].imshow(img, vmin=0, vmax=1, cmap="gray_r")
            axes[i, j].set_xticks([])
            axes[i, j].set_yticks([])
            if i == 0:
                axes[i, j].set_title("input" if j == 0 else f"K={j}", fontsize=7)
    return fig, grid


def execute_tokenize(inputs: TokenizeInputs, run, progress=None) -> tuple[list[dict], list[np.ndarray]]:
    """Fit the codebooks (stage ``codebooks``, one per scale) and measure the error after each K."""
    from paperkit.core.progress import progress as default_progress

    s = inputs.settings
    bar_of = progress or default_progress

    def compute() -> dict[str, np.ndarray]:
        with bar_of(total=len(inputs.scales), desc="k-means per scale", unit="scale") as bar:
            books = fit_codebooks(inputs.train, inputs.scales, s.codebook, s.seed, s.kmeans_init,
                                  tick=lambda: bar.update(1))
        return {f"scale_{k}": b for k, b in enumerate(books)}

    stored = run.cached("codebooks", compute, fmt="npz")
    books = [np.asarray(stored[f"scale_{k}"]) for k in range(len(inputs.scales))]
    return error_rows(inputs, books), books
