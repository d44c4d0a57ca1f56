"""Reading views and labels from files (NPY, NPZ with one array, CSV/TSV/JSONL tables with a header)."""

from __future__ import annotations

import numpy as np

from paperkit.core import io, tables
from paperkit.core.errors import InputError


def read_matrix(path: str) -> np.ndarray:
    """A 2-D float array from ``path``; tables must be all-numeric (errors name column and rows)."""
    fmt = io.detect_format(path, default="npy")
    if fmt in ("npy", "npz"):
        arr = io.read_array(path)
        if arr.dtype.kind not in "biuf":
            raise InputError(f"{path}: dtype {arr.dtype} is not numeric; expected numbers")
        return np.asarray(arr, dtype=np.float64)
    if fmt in ("csv", "tsv", "jsonl"):
        return tables.read_table(path).numeric(finite=False)
    raise InputError(f"{path}: format '{fmt}' cannot hold a matrix; expected .npy, .npz, .csv, .tsv or .jsonl")


def split_paths(value: str | None) -> list[str]:
    return [p.strip() for p in (value or "").split(",") if p.strip()]


def read_views(paths: list[str]) -> list[np.ndarray]:
    return [read_matrix(p) for p in paths]
