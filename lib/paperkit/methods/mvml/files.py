"""Reading views and labels from files (NPY, NPZ with one array, CSV/TSV/JSONL tables with a header)."""

from __future__ import annotations

import numpy as np

from paperkit.core.readers import read_numeric


def read_matrix(path: str) -> np.ndarray:
    """A 2-D float array from ``path`` (.npy, .npz with one array, or an all-numeric table)."""
    return read_numeric(path, "matrix", ndim=2, finite=False)


def split_paths(value: str | None) -> list[str]:
    return [p.strip() for p in (value or "").split(",") if p.strip()]


def read_views(paths: list[str]) -> list[np.ndarray]:
    return [read_matrix(p) for p in paths]
