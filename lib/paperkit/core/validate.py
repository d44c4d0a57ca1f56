"""Boundary checks with messages that name the thing, the bad value and what was expected."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit.core.errors import InputError, UsageError


def check_finite(values: Any, what: str, source: str = "") -> None:
    """InputError if ``values`` holds NaN/inf: '<source>: <what> has 3 NaN value(s) (rows 4, 9, 17)'.

    Rows are 0-based along the first axis (the toolkit's index convention).
    """
    arr = np.asarray(values, dtype=np.float64)
    bad = ~np.isfinite(arr)
    if not bad.any():
        return
    per_row = bad.reshape(len(arr), -1).any(axis=1) if arr.ndim > 1 else bad.reshape(-1)
    rows_bad = np.flatnonzero(per_row)
    n_nan = int(np.isnan(arr).sum())
    n_inf = int(bad.sum()) - n_nan
    kinds = " and ".join(k for k in (f"{n_nan} NaN" if n_nan else "", f"{n_inf} infinite" if n_inf else "") if k)
    rows = ", ".join(str(i) for i in rows_bad[:5]) + (" ..." if len(rows_bad) > 5 else "")
    prefix = f"{source}: " if source else ""
    raise InputError(f"{prefix}{what} has {kinds} value(s) (rows {rows}, 0-based); expected finite numbers")


def check_range(
    name: str,
    value: float,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
    error: type[Exception] = UsageError,
) -> None:
    """Raise ``error`` unless ``low (<|<=) value (<|<=) high``; the message shows the interval."""
    ok = True
    if low is not None:
        ok &= value > low if low_open else value >= low
    if high is not None:
        ok &= value < high if high_open else value <= high
    if not ok:
        lo = "-inf" if low is None else repr(low)
        hi = "inf" if high is None else repr(high)
        interval = f"{'(' if low_open or low is None else '['}{lo}, {hi}{')' if high_open or high is None else ']'}"
        raise error(f"{name} = {value!r} is out of range; expected a value in {interval}")


def check_2d(array: Any, what: str, source: str = "") -> np.ndarray:
    arr = np.asarray(array)
    if arr.ndim != 2:
        prefix = f"{source}: " if source else ""
        raise InputError(f"{prefix}{what} has shape {arr.shape}; expected a 2-D array (rows × columns)")
    return arr


def check_same_rows(named: dict[str, Any]) -> None:
    """InputError unless every array has the same length along axis 0."""
    lengths = {k: len(v) for k, v in named.items()}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{k}: {n}" for k, n in lengths.items())
        raise InputError(f"inputs have different numbers of rows ({shown}); expected the same")


def check_not_empty(array: Any, what: str, source: str = "") -> None:
    if len(array) == 0:
        prefix = f"{source}: " if source else ""
        raise InputError(f"{prefix}{what} is empty; expected at least one row")


_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+=@")


def check_file_name(name: str, what: str = "name", *, max_len: int = 100) -> str:
    """UsageError unless ``name`` can be used inside a file name as is: letters, digits and ``._-+=@``,
    not starting with a dot, at most ``max_len`` characters (so it cannot leave its folder)."""
    if not isinstance(name, str) or not name or len(name) > max_len or name.startswith(".") \
            or any(c not in _NAME_CHARS for c in name):
        raise UsageError(f"{what} {name!r} cannot be used in a file name; use 1–{max_len} letters, digits or "
                         "'._-+=@', not starting with '.'")
    return name


def check_finite_for(values: Any, dtype: Any, what: str, source: str = "") -> None:
    """InputError if ``values`` hold NaN/inf, or numbers too large for ``dtype`` (e.g. 1e308 for float32)
    or for arithmetic on them (|x| > sqrt(max) would overflow a square)."""
    check_finite(values, what, source)
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0:
        return
    limit = float(np.sqrt(np.finfo(dtype).max))
    big = float(np.max(np.abs(arr)))
    if big > limit:
        prefix = f"{source}: " if source else ""
        raise InputError(f"{prefix}{what} holds a value of magnitude {big:.3g}, too large to compute with in "
                         f"{np.dtype(dtype).name} (limit {limit:.3g}); rescale the data")


def check_finite_weights(obj: Any, source: str, where: str = "") -> None:
    """InputError naming the first tensor/array in a loaded checkpoint (nested dicts/lists) with NaN/inf:
    a model with such weights acts on argmax(NaN) and reports numbers that mean nothing."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            check_finite_weights(v, source, f"{where}.{k}" if where else str(k))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            check_finite_weights(v, source, f"{where}[{i}]")
    elif hasattr(obj, "is_floating_point") and obj.is_floating_point():   # a torch tensor
        import torch

        if not bool(torch.isfinite(obj).all()):
            raise InputError(f"{source}: weights '{where}' hold NaN/inf values; expected a trained model")
    elif isinstance(obj, np.ndarray) and obj.dtype.kind in "fc" and not np.isfinite(obj).all():
        raise InputError(f"{source}: weights '{where}' hold NaN/inf values; expected a trained model")
