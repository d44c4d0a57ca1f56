"""One reader for numeric arrays from any of paperkit's formats, validated at the boundary.

``read_numeric`` takes ``.npy``/``.npz`` (one array) or a CSV/TSV/JSONL table, and ``-`` for stdin
(binary streams are recognised by their magic bytes, text by its first line), and checks what every
command would otherwise check by hand: numeric dtype, number of dimensions, no NaN/inf, magnitudes
that the computation's dtype can hold, and not empty. Errors name the file and the problem.
"""

from __future__ import annotations

import io as _io
import os
from typing import Any

import numpy as np

from paperkit.core import io, tables
from paperkit.core.errors import InputError, UsageError
from paperkit.core.validate import check_finite, check_finite_for

ARRAY_FORMATS = ("npy", "npz", "csv", "tsv", "jsonl")


def input_format(path: str | os.PathLike, fmt: str | None = None, *, default: str = "npy") -> str:
    """The format of an input: ``fmt``, the suffix, or for stdin the stream's first bytes."""
    if fmt or not io.is_stdio(path):
        return io.detect_format(path, fmt, default=default)
    data = io.stdin_bytes()
    sniffed = io.sniff_binary(data)
    if sniffed:
        return sniffed
    head = data.lstrip()[:1]
    return "jsonl" if head == b"{" else ("tsv" if b"\t" in data.split(b"\n", 1)[0] else "csv")


def read_numeric(path: str | os.PathLike, what: str = "data", *, fmt: str | None = None,
                 ndim: int | tuple[int, ...] | None = None, dtype: Any = np.float64, finite: bool = True,
                 header: bool | str = True, allow_empty: bool = False) -> np.ndarray:
    """A numeric array of ``dtype`` from ``path``.

    ``header``: tables have a header row (True), none (False), or ``"auto"`` (a first row with no
    number in it is a header). ``ndim`` may be one number or a tuple of accepted ones.
    """
    name = io.display_name(path)
    kind = input_format(path, fmt, default="npy")
    if kind in ("npy", "npz"):
        arr = io.read_array(path)
        if arr.dtype.kind not in "biuf":
            raise InputError(f"{name}: {what} has dtype {arr.dtype}; expected numbers")
    elif kind in ("csv", "tsv", "jsonl"):
        arr = _read_table_matrix(path, kind, header)
    else:
        raise UsageError(f"{name}: format '{kind}' cannot hold {what}; expected one of {', '.join(ARRAY_FORMATS)}")
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            want = " or ".join(f"{d}-D" for d in allowed)
            raise InputError(f"{name}: {what} has shape {arr.shape}; expected a {want} array")
    if not allow_empty and arr.size == 0:
        raise InputError(f"{name}: {what} is empty; expected at least one value")
    if finite and arr.dtype.kind == "f" and arr.size:
        flat = arr.reshape(len(arr), -1) if arr.ndim > 1 else arr
        if np.dtype(dtype).kind == "f":
            check_finite_for(flat, dtype, what, name)
        else:
            check_finite(flat, what, name)
    with np.errstate(all="ignore"):
        return np.asarray(arr, dtype=dtype)


def _read_table_matrix(path: str | os.PathLike, kind: str, header: bool | str) -> np.ndarray:
    if io.is_stdio(path):
        text = io.stdin_bytes().decode("utf-8", errors="strict") if _utf8(io.stdin_bytes()) else None
        if text is None:
            raise InputError("<stdin>: not UTF-8 text; expected a CSV/TSV/JSONL table or an .npy/.npz stream")
        t = tables._parse_table(_io.StringIO(text), kind, "<stdin>", header=header is True)
    else:
        t = tables.read_table(path, kind, header=header is True)
    if header == "auto" and kind != "jsonl" and len(t) and all(
            tables._to_float(t.column(c)[0]) is None for c in t.columns):
        t = tables.Table(list(t.columns), {c: tables._column_array(list(t.column(c)[1:])) for c in t.columns},
                         t.source)
    return t.numeric(finite=False)


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
