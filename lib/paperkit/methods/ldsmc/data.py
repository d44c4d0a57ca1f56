"""Offline image data for the latent prior (spec "Data, offline instead").

* sklearn's bundled 8×8 digits, bilinearly upsampled to 16×16 and scaled to [−1, 1], with a fixed
  stratified train/val/test split (the test split is what ``ldsmc-restore`` restores by default; the
  validation split, held apart from both, is what the sampler's defaults were tuned on);
* procedurally rendered shapes (filled discs, squares and crosses at random positions and sizes).
"""

from __future__ import annotations

import numpy as np

from paperkit.core.errors import InputError

IMAGE_SIZE = 16
N_TEST = 200
SHAPES_TEST_SEED = 999_983
SHAPES_VAL_SEED = 999_979


def _upsample(images8: np.ndarray) -> np.ndarray:
    import torch
    import torch.nn.functional as F

    x = torch.as_tensor(images8, dtype=torch.float32)[:, None]
    return F.interpolate(x, size=(IMAGE_SIZE, IMAGE_SIZE), mode="bilinear", align_corners=False).numpy()


SPLITS = ("train", "val", "test", "all")


def load_digits16(split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """Digits as float32 (n, 1, 16, 16) in [−1, 1] and int64 labels; ``split`` is train, val, test or all."""
    from sklearn.datasets import load_digits

    d = load_digits()
    images = _upsample(d.images / 16.0) * 2.0 - 1.0
    labels = d.target.astype(np.int64)
    # A fixed stratified split: every 9th image of each class (≈200) is a test image, and the 5th of every 9
    # (another ≈200, disjoint) a validation image; the rest (≈1400) train the prior and the classifier.
    order = np.argsort(labels, kind="stable")
    test = np.zeros(len(labels), dtype=bool)
    val = np.zeros(len(labels), dtype=bool)
    for c in range(10):
        idx = order[labels[order] == c]
        test[idx[::9]] = True
        val[idx[4::9]] = True
    keeps = {"all": np.ones_like(test), "train": ~test & ~val, "val": val, "test": test}
    if split not in keeps:
        raise InputError(f"unknown split '{split}'; expected {', '.join(SPLITS)}")
    keep = keeps[split]
    return images[keep].astype(np.float32), labels[keep]


def render_shapes(n: int, seed: int = 0, size: int = IMAGE_SIZE) -> tuple[np.ndarray, np.ndarray]:
    """``n`` procedurally rendered shapes (label 0 disc, 1 square, 2 cross) as (n, 1, size, size) in [−1, 1]."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) + 0.5
    out = np.full((n, 1, size, size), -1.0, dtype=np.float32)
    labels = rng.integers(0, 3, size=n)
    for i in range(n):
        r = rng.uniform(0.18, 0.35) * size
        cx, cy = rng.uniform(r, size - r, size=2)
        if labels[i] == 0:
            m = (xx - cx) ** 2 + (yy - cy) ** 2 <= r * r
        elif labels[i] == 1:
            m = (np.abs(xx - cx) <= r * 0.85) & (np.abs(yy - cy) <= r * 0.85)
        else:
            w = max(r * 0.3, 1.0)
            m = ((np.abs(xx - cx) <= w) & (np.abs(yy - cy) <= r)) | ((np.abs(yy - cy) <= w) & (np.abs(xx - cx) <= r))
        out[i, 0][m] = rng.uniform(0.5, 1.0)
    return out, labels.astype(np.int64)


def load_dataset(name: str, split: str = "train", seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``digits`` or ``shapes`` (shapes: 2000 train images drawn from ``seed``; the 200 test and 200 validation
    images always from the fixed seeds SHAPES_TEST_SEED and SHAPES_VAL_SEED, so every model sees the same ones)."""
    if name == "digits":
        return load_digits16(split)
    if name == "shapes":
        if split == "train":
            return render_shapes(2000, seed=seed + 2 if seed in (SHAPES_TEST_SEED, SHAPES_VAL_SEED) else seed)
        if split == "val":
            return render_shapes(N_TEST, seed=SHAPES_VAL_SEED)
        return render_shapes(N_TEST, seed=SHAPES_TEST_SEED)
    raise InputError(f"unknown data set '{name}'; expected digits or shapes")
