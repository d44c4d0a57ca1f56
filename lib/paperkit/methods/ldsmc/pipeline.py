"""Inputs of a restoration run: the user's image files or the test split, checked against the prior."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from paperkit.core import io
from paperkit.core.errors import InputError

CLASSIFIER_FILE = "classifier.npz"


def _read_png(path: Path) -> np.ndarray:
    import matplotlib.image as mpimg

    try:
        img = np.asarray(mpimg.imread(path), dtype=np.float32)
    except Exception as e:
        raise InputError(f"{path}: not a readable PNG image ({type(e).__name__})") from None
    if img.max() > 1.0:
        img = img / 255.0
    if img.ndim == 2:
        img = img[None]
    else:
        img = np.moveaxis(img[..., :3], -1, 0)
    return img * 2.0 - 1.0


def load_user_images(paths: list[str | Path], image_shape: tuple[int, ...]) -> np.ndarray:
    """Images from .npy files ((n, C, H, W), (C, H, W), (n, H, W) or (H, W), values in [−1, 1]) or PNG files
    (scaled to [−1, 1]); every image must have the prior's (C, H, W)."""
    c, h, w = image_shape
    out = []
    for p in map(Path, paths):
        io.require_file(p)
        if p.suffix.lower() == ".png":
            a = _read_png(p)
            if a.shape[0] != c and c == 1:
                a = a[:3].mean(0, keepdims=True)  # grey prior, colour file: use the luminance-like mean
            a = a[None]
        elif p.suffix.lower() == ".npy":
            a = io.read_array(p).astype(np.float32)
            if a.ndim == 2:
                a = a[None, None]
            elif a.ndim == 3:
                a = a[None] if a.shape[0] == c and c != a.shape[1] else a[:, None]
        else:
            raise InputError(f"{p}: expected a .npy or .png image file")
        if a.ndim != 4 or tuple(a.shape[1:]) != (c, h, w):
            raise InputError(f"{p}: images of shape {tuple(a.shape[1:]) if a.ndim == 4 else a.shape} do not fit the "
                             f"model; expected (n, {c}, {h}, {w}) ({c} channel(s), {h}×{w} pixels)")
        if not np.isfinite(a).all():
            raise InputError(f"{p}: contains NaN or inf")
        if a.min() < -1.001 or a.max() > 1.001:
            raise InputError(f"{p}: values in [{a.min():.3g}, {a.max():.3g}]; expected images scaled to [-1, 1]")
        out.append(a)
    if not out:
        raise InputError("no images given")
    return np.concatenate(out).astype(np.float32)


def save_classifier(path: str | Path, classifier) -> None:
    io.write_arrays(path, classifier.weights)


def load_classifier(model_dir: str | Path):
    from .metrics import DigitsClassifier

    p = Path(model_dir) / CLASSIFIER_FILE
    return DigitsClassifier.from_arrays(io.read_arrays(p)) if p.exists() else None
