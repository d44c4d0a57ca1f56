"""Preprocessing of the APO search (Fong & Motani, ICML 2025, Sec. 3.2).

Every feature is standardised and the target z-scored with the population standard deviation; all
rows are used (the front is the attainable training fit). As in the official script, rows are then
permuted with ``numpy.random.seed(seed); permutation(n)`` — this only changes the order of the sums. A private
``RandomState(seed)`` draws the same numbers without touching NumPy's global state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperkit.core.errors import InputError


@dataclass(frozen=True)
class Prepared:
    """Standardised data of one run: ``Xt`` is features x rows (C order), ``y`` z-scored."""

    Xt: np.ndarray
    y: np.ndarray
    x_mean: np.ndarray
    x_std: np.ndarray
    y_mean: float
    y_std: float

    @property
    def n_rows(self) -> int:
        return int(self.y.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.Xt.shape[0])

    @property
    def sst(self) -> float:
        return float(np.sum((self.y - np.mean(self.y)) ** 2))


def check_data(X: np.ndarray, y: np.ndarray, feature_names: list[str] | None = None, target: str = "target",
               source: str = "data") -> tuple[np.ndarray, np.ndarray]:
    """Validate shapes, finiteness and non-constant columns; return float64 copies."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if X.ndim != 2:
        raise InputError(f"{source}: features must be a 2-d table, got shape {X.shape}")
    names = feature_names or [f"x{j}" for j in range(X.shape[1])]
    if X.shape[0] != y.shape[0]:
        raise InputError(f"{source}: {X.shape[0]} feature rows but {y.shape[0]} target values")
    if X.shape[1] < 1:
        raise InputError(f"{source}: no feature columns; expected at least one besides '{target}'")
    if y.shape[0] < 2:
        raise InputError(f"{source}: {y.shape[0]} row(s); expected at least 2")
    for j in range(X.shape[1]):
        bad = np.flatnonzero(~np.isfinite(X[:, j]))
        if bad.size:
            raise InputError(f"{source}: column '{names[j]}' has {bad.size} NaN/inf value(s) (rows "
                             f"{', '.join(str(i) for i in bad[:5])}, 0-based); expected finite numbers")
        if np.ptp(X[:, j]) == 0:
            raise InputError(f"{source}: column '{names[j]}' is constant ({float(X[0, j]):g}); it cannot be "
                             "standardised; drop it or choose --features")
    bad = np.flatnonzero(~np.isfinite(y))
    if bad.size:
        raise InputError(f"{source}: target '{target}' has {bad.size} NaN/inf value(s) (rows "
                         f"{', '.join(str(i) for i in bad[:5])}, 0-based); expected finite numbers")
    if np.ptp(y) == 0:
        raise InputError(f"{source}: target '{target}' is constant ({float(y[0]):g}); R² is undefined")
    return X, y


def prepare(X: np.ndarray, y: np.ndarray, seed: int | None = None) -> Prepared:
    """Standardise X, z-score y (population std); permute rows with ``seed`` as the official script."""
    x_mean = X.mean(axis=0)
    x_std = X.std(axis=0)
    Z = (X - x_mean) / x_std
    y_mean, y_std = float(np.mean(y)), float(np.std(y))
    z = (y - y_mean) / y_std
    if seed is not None:
        perm = np.random.RandomState(int(seed)).permutation(z.shape[0])
        Z, z = Z[perm], z[perm]
    return Prepared(np.ascontiguousarray(Z.T), np.ascontiguousarray(z), x_mean, x_std, y_mean, y_std)


def start_point(seed: int, k: int) -> np.ndarray:
    """The paper's start for k constants: ``numpy.random.seed(seed); 2 * rand(k) - 1``.

    MT19937 draws doubles in sequence, so the start of k constants is a prefix of the start of k + 1.
    """
    return 2 * np.random.RandomState(int(seed)).rand(k) - 1


RESTART_SCALE = 3.0


def start_points(seed: int, width: int, restarts: int = 0) -> np.ndarray:
    """Row 0: the paper's start; rows 1..restarts: ``RandomState((seed, r)).uniform(-3, 3, width)``.

    The extra starts spread over the standardised data range, so a constant that places a pole (a
    zero of a denominator) can start on either side of the data. Every row is a prefix-stable stream,
    so an expression's starts never depend on which other expressions are fitted with it.
    """
    rows = [start_point(seed, width)]
    for r in range(1, restarts + 1):
        rows.append(np.random.RandomState([int(seed), r]).uniform(-RESTART_SCALE, RESTART_SCALE, width))
    return np.ascontiguousarray(np.array(rows, dtype=np.float64))


def select_columns(columns: list[str], target: str, features: str = "all", source: str = "data") -> list[str]:
    """Feature columns from ``all`` (every column but the target), indices ``0,2`` or names ``a,b``."""
    if target not in columns:
        shown = ", ".join(columns[:20]) + (" ..." if len(columns) > 20 else "")
        raise InputError(f"{source}: no target column '{target}' (columns: {shown})")
    rest = [c for c in columns if c != target]
    spec = (features or "all").strip()
    if spec == "all":
        return rest
    out = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        if part in rest:
            # a column named "1" that is not feature 1: the name would win silently over the index (the help
            # says indices count columns without the target), so refuse rather than guess
            if part.isdigit() and int(part) < len(rest) and rest[int(part)] != part:
                raise InputError(f"{source}: --features '{part}' is ambiguous: the column named '{part}' or feature "
                                 f"index {part} (column '{rest[int(part)]}'); rename the columns")
            out.append(part)
        elif part.lstrip("-").isdigit():
            j = int(part)
            if not 0 <= j < len(rest):
                raise InputError(f"{source}: feature index {j} out of range; expected 0..{len(rest) - 1} "
                                 f"(features: {', '.join(rest[:20])})")
            out.append(rest[j])
        else:
            raise InputError(f"{source}: no feature column '{part}' (features: {', '.join(rest[:20])})")
    if not out:
        raise InputError(f"{source}: --features '{features}' selects no column")
    if len(set(out)) != len(out):
        raise InputError(f"{source}: --features '{features}' names a column twice")
    return out
