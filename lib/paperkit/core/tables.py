"""Tables: CSV/TSV/JSONL read into typed columns, and rows written back as CSV/TSV/JSONL/JSON.

Reading and writing go through :mod:`paperkit.core.io` (``-`` for stdio, ``.gz``, atomic writes).
"""

from __future__ import annotations

import csv
import io as _io
import math
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from paperkit.core.errors import InputError, UsageError
from paperkit.core.io import (
    detect_format,
    display_name,
    is_stdio,
    parse_jsonl_stream,
    text_reader,
    text_writer,
    write_json,
    write_jsonl,
)
from paperkit.core.validate import check_finite

_NA_STRINGS = frozenset({"", "na", "nan", "n/a", "null", "none", "-nan"})

@dataclass
class Table:
    """A table read from CSV/TSV/JSONL: ordered columns of float64 (numeric) or object (text) arrays."""

    columns: list[str]
    data: dict[str, np.ndarray]
    source: str = "<table>"
    _n: int = field(default=0, repr=False)

    def __post_init__(self) -> None:
        lengths = {len(v) for v in self.data.values()}
        if len(lengths) > 1:
            raise InputError(f"{self.source}: columns have different lengths {sorted(lengths)}")
        self._n = lengths.pop() if lengths else 0

    def __len__(self) -> int:
        return self._n

    @property
    def n_rows(self) -> int:
        return self._n

    def has(self, name: str) -> bool:
        return name in self.data

    def column(self, name: str) -> np.ndarray:
        if name not in self.data:
            shown = ", ".join(self.columns[:20]) + (" ..." if len(self.columns) > 20 else "")
            raise InputError(f"{self.source}: no column '{name}' (columns: {shown})")
        return self.data[name]

    def numeric(self, names: Sequence[str] | None = None, *, finite: bool = True) -> np.ndarray:
        """The named columns (default: all) as a float64 matrix of shape (rows, len(names)).

        Raises InputError naming the column and rows of any non-numeric (or, with ``finite``,
        NaN/inf) value.
        """
        names = list(self.columns if names is None else names)
        out = np.empty((self._n, len(names)), dtype=np.float64)
        for j, name in enumerate(names):
            col = self.column(name)
            if col.dtype != np.float64:
                bad = [i for i, v in enumerate(col) if _to_float(v) is None]
                rows = ", ".join(str(i) for i in bad[:5]) + (" ..." if len(bad) > 5 else "")
                raise InputError(
                    f"{self.source}: column '{name}' has {len(bad)} non-numeric value(s) "
                    f"(data rows {rows}, 0-based, e.g. {col[bad[0]]!r}); expected numbers"
                )
            out[:, j] = col
            if finite:
                check_finite(col, f"column '{name}'", self.source)
        return out

    def select(self, names: Sequence[str]) -> Table:
        return Table(list(names), {n: self.column(n) for n in names}, self.source)

    def records(self) -> list[dict[str, Any]]:
        cols = [self.data[c] for c in self.columns]
        return [{c: _py(v[i]) for c, v in zip(self.columns, cols, strict=True)} for i in range(self._n)]


def _to_float(v: Any) -> float | None:
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        return float(v)
    if v is None:
        return math.nan
    s = str(v).strip()
    if s.lower() in _NA_STRINGS:
        return math.nan
    try:
        return float(s)
    except ValueError:
        return None


def _column_array(values: list[Any]) -> np.ndarray:
    floats = [_to_float(v) for v in values]
    if all(f is not None for f in floats):
        return np.asarray(floats, dtype=np.float64)
    arr = np.empty(len(values), dtype=object)
    arr[:] = ["" if v is None else (v if isinstance(v, str) else str(v)) for v in values]
    return arr


def read_table(path: str | os.PathLike, fmt: str | None = None, *, header: bool = True) -> Table:
    """Read a CSV/TSV (header row required) or JSONL table; stdin is sniffed (JSONL if it starts with '{').

    ``header=False`` reads a CSV/TSV without a header row (e.g. a bare matrix): every line is data and
    the columns are named "1", "2", ... after the first line's width.
    """
    name = display_name(path)
    if is_stdio(path) and fmt is None:
        text = sys.stdin.read()
        fmt = "jsonl" if text.lstrip().startswith("{") else ("tsv" if "\t" in text.split("\n", 1)[0] else "csv")
        return _parse_table(_io.StringIO(text), fmt, name, header=header)
    fmt = detect_format(path, fmt)
    if fmt not in ("csv", "tsv", "jsonl"):
        raise UsageError(f"{name}: expected a table (.csv, .tsv or .jsonl), got format '{fmt}'")
    with text_reader(path) as f:
        return _parse_table(f, fmt, name, header=header)


def _parse_table(f: IO[str], fmt: str, name: str, *, header: bool = True) -> Table:
    if fmt == "jsonl":
        rows = parse_jsonl_stream(f, name)
        columns: list[str] = []
        for r in rows:
            if not isinstance(r, dict):
                raise InputError(f"{name}: every JSON line of a table must be an object")
            columns.extend(k for k in r if k not in columns)
        data = {c: _column_array([r.get(c) for r in rows]) for c in columns}
        return Table(columns, data, name)
    reader = csv.reader(f, delimiter="\t" if fmt == "tsv" else ",")
    first_no = 1
    try:
        first = next(reader)
        while not header and not any(c.strip() for c in first):  # blank lines before a headerless table
            first = next(reader)
            first_no += 1
    except StopIteration:
        raise InputError(f"{name}: empty file; expected {'a header row' if header else 'at least one row'}") from None
    except csv.Error as e:
        raise InputError(f"{name}: malformed {fmt.upper()} ({e})") from None
    if first:  # a UTF-8 byte-order mark (Excel's "CSV UTF-8") is not part of the first column's name
        first[0] = first[0].removeprefix("\ufeff")
    if header:
        names = [h.strip() for h in first]
        if not any(names):
            raise InputError(f"{name}: empty header row")
        dup = sorted({h for h in names if names.count(h) > 1})
        if dup:
            raise InputError(f"{name}: duplicate column name(s) {', '.join(repr(d) for d in dup)}")
        cells: list[list[str]] = [[] for _ in names]
        width = f"the header has {len(names)}"
    else:
        names = [str(j + 1) for j in range(len(first))]
        cells = [[v] for v in first]
        width = f"line {first_no} has {len(names)}"
    try:
        for line_no, row in enumerate(reader, start=first_no + 1):
            # An empty line is skipped; in a one-column table a quoted empty field ("") is a value.
            if not row or (len(names) > 1 and len(row) == 1 and not row[0].strip()):
                continue
            if len(row) != len(names):
                raise InputError(f"{name}: line {line_no} has {len(row)} fields; {width}")
            for j, v in enumerate(row):
                cells[j].append(v)
    except csv.Error as e:
        raise InputError(f"{name}: malformed {fmt.upper()} ({e})") from None
    return Table(names, {h: _column_array(c) for h, c in zip(names, cells, strict=True)}, name)


def _py(v: Any) -> Any:
    """A plain Python scalar for JSON/CSV writing."""
    if isinstance(v, np.generic):
        v = v.item()
    return v


def _format_cell(v: Any) -> str:
    v = _py(v)
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))
    return str(v)


def _as_rows(data: Table | Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    if isinstance(data, Table):
        cols = list(data.columns)
        arrays = [data.data[c] for c in cols]
        return cols, [[a[i] for a in arrays] for i in range(len(data))]
    if isinstance(data, Mapping):
        cols = list(data.keys())
        arrays = [np.asarray(data[c]) if not isinstance(data[c], list) else data[c] for c in cols]
        lengths = {len(a) for a in arrays}
        if len(lengths) > 1:
            raise ValueError(f"columns have different lengths: {dict(zip(cols, map(len, arrays), strict=True))}")
        n = lengths.pop() if lengths else 0
        return cols, [[a[i] for a in arrays] for i in range(n)]
    rows = list(data)
    cols = []
    for r in rows:
        cols.extend(k for k in r if k not in cols)
    return cols, [[r.get(c) for c in cols] for r in rows]


def write_table(
    path: str | os.PathLike,
    data: Table | Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]],
    fmt: str | None = None,
    *,
    default: str = "jsonl",
) -> None:
    """Write columns (mapping name → values), a list of row dicts, or a Table as CSV/TSV/JSONL/JSON.

    ``-`` defaults to JSON lines on stdout.
    """
    fmt = detect_format(path, fmt, default=default)
    cols, rows = _as_rows(data)
    if fmt in ("csv", "tsv"):
        with text_writer(path) as f:
            w = csv.writer(f, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
            w.writerow(cols)
            for r in rows:
                w.writerow([_format_cell(v) for v in r])
    elif fmt == "jsonl":
        write_jsonl(path, ({c: v for c, v in zip(cols, r, strict=True)} for r in rows))
    elif fmt == "json":
        write_json(path, [{c: v for c, v in zip(cols, r, strict=True)} for r in rows])
    else:
        raise UsageError(f"{display_name(path)}: a table cannot be written as '{fmt}'; use .csv, .tsv, .jsonl or .json")
