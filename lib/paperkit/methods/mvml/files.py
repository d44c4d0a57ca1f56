"""Reading views and labels from files (NPY, NPZ with one array, CSV/TSV/JSONL tables with a header;
``-`` is stdin, its format recognised from its first bytes)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from paperkit.core.readers import read_numeric


def read_view(path: str) -> np.ndarray:
    """A samples × features float64 view (a 1-D array is one feature). NaN/inf and magnitudes too large to
    compute with in float64 (squares would overflow) are refused with an InputError naming the file."""
    return read_numeric(path, "view", ndim=(1, 2), dtype=np.float64, finite=True)


def read_views(paths: Sequence[str]) -> list[np.ndarray]:
    return [read_view(p) for p in paths]


def read_labels(path: str) -> np.ndarray:
    """A 0/1 label matrix (samples × labels; a 1-D array is one label), checked by ``check_labels``."""
    return read_numeric(path, "labels", ndim=(1, 2), dtype=np.float64, finite=True)
