"""Reading views and labels from files (NPY, NPZ with one array, CSV/TSV/JSONL tables with a header;
``-`` is stdin, its format recognised from its first bytes)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from paperkit.core.errors import InputError
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


def header_names(path: str) -> list[str] | None:
    """The column names of a CSV/TSV/JSONL label table (its header), or None for arrays (.npy/.npz)."""
    import io as _io

    from paperkit.core import io, tables
    from paperkit.core.readers import input_format

    kind = input_format(path, default="npy")
    if kind not in ("csv", "tsv", "jsonl"):
        return None
    if io.is_stdio(path):
        table = tables._parse_table(_io.StringIO(io.stdin_bytes().decode("utf-8", errors="replace")), kind,
                                    "<stdin>")
    else:
        table = tables.read_table(path, kind)
    return [str(c) for c in table.columns]


def read_label_names(path: str) -> list[str]:
    """Label names from a text file: one per line, or one comma-separated line (blank lines skipped)."""
    from paperkit.core import io

    p = io.require_file(path)
    lines = [x.strip() for x in p.read_text(encoding="utf-8", errors="replace").splitlines() if x.strip()]
    if len(lines) == 1 and "," in lines[0]:
        lines = [x.strip() for x in lines[0].split(",")]
    return lines


def check_label_names(names: Sequence[str], n_labels: int, source: str) -> list[str]:
    """``n_labels`` distinct, non-empty names (InputError naming ``source`` otherwise)."""
    names = [str(x).strip() for x in names]
    if len(names) != n_labels:
        raise InputError(f"{source}: {len(names)} label names for {n_labels} label columns; expected one name per "
                         "column")
    empty = [i for i, x in enumerate(names) if not x]
    if empty:
        raise InputError(f"{source}: label name {empty[0]} (0-based) is empty")
    dup = next((x for x in names if names.count(x) > 1), None)
    if dup is not None:
        raise InputError(f"{source}: label name {dup!r} is given twice; expected distinct names")
    return names
