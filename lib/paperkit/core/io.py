"""One way to read and write every file format paperkit uses.

* ``-`` means stdin/stdout. The format comes from the suffix (``.csv``, ``.tsv``, ``.jsonl``, ``.json``,
  ``.yaml``, ``.npy``, ``.npz``, ``.pt``, ``.png``; ``.gz`` on text formats), or from ``fmt``.
* Every file is written atomically: a temp file in the same folder, fsync, rename. A writer that
  raises (or a Ctrl-C) leaves the previous file, or no file, never a partial one.
* Binary formats are refused on a terminal.
* Data files carry no timestamps: the same data gives the same bytes (gzip is written with mtime 0).

Errors are :class:`~paperkit.core.errors.InputError` naming the file and what was wrong.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import hashlib
import io as _io
import json
import math
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from paperkit.core.errors import InputError, UsageError
from paperkit.core.validate import check_finite

TEXT_FORMATS = ("csv", "tsv", "jsonl", "json", "yaml")
BINARY_FORMATS = ("npy", "npz", "pt", "png")
FORMATS = TEXT_FORMATS + BINARY_FORMATS
_SUFFIXES = {
    ".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json",
    ".yaml": "yaml", ".yml": "yaml", ".npy": "npy", ".npz": "npz", ".pt": "pt", ".pth": "pt", ".png": "png",
}
_NA_STRINGS = frozenset({"", "na", "nan", "n/a", "null", "none", "-nan"})


# --------------------------------------------------------------------------------------------- paths
def is_stdio(path: str | os.PathLike | None) -> bool:
    return path is None or str(path) == "-"


def display_name(path: str | os.PathLike | None) -> str:
    return "<stdin/stdout>" if is_stdio(path) else str(path)


def is_gzip(path: str | os.PathLike) -> bool:
    return not is_stdio(path) and str(path).endswith(".gz")


def detect_format(path: str | os.PathLike | None, fmt: str | None = None, default: str | None = None) -> str:
    """Format of ``path``: ``fmt`` if given, else its suffix (ignoring ``.gz``), else ``default``."""
    if fmt:
        fmt = fmt.lower()
        if fmt not in FORMATS:
            raise UsageError(f"unknown format '{fmt}'; expected one of {', '.join(FORMATS)}")
        return fmt
    if not is_stdio(path):
        name = str(path).lower()
        if name.endswith(".gz"):
            name = name[:-3]
        suffix = os.path.splitext(name)[1]
        if suffix in _SUFFIXES:
            return _SUFFIXES[suffix]
    if default is not None:
        return default
    raise UsageError(
        f"{display_name(path)}: cannot tell the format from the name; use a suffix "
        f"({', '.join(sorted(_SUFFIXES))}) or --format"
    )


def require_file(path: str | os.PathLike) -> Path:
    """The path of an existing regular file, or an InputError naming it."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{path}: no such file")
    if p.is_dir():
        raise InputError(f"{path}: is a directory; expected a file")
    if not os.access(p, os.R_OK):
        raise InputError(f"{path}: not readable (permission denied)")
    return p


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# ------------------------------------------------------------------------------------- atomic output
_UMASK: int | None = None


def _file_mode() -> int:
    global _UMASK
    if _UMASK is None:
        _UMASK = os.umask(0)
        os.umask(_UMASK)
    return 0o666 & ~_UMASK


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", *, encoding: str = "utf-8") -> Iterator[IO]:
    """Open ``path`` for writing so that it appears whole or not at all.

    ``-`` yields stdout (text or binary per ``mode``). Parent folders are created. Binary output to a
    terminal is refused.
    """
    binary = "b" in mode
    if is_stdio(path):
        if binary and sys.stdout.isatty():
            raise UsageError("refusing to write binary data to a terminal; use -o FILE or redirect stdout")
        stream = sys.stdout.buffer if binary else sys.stdout
        yield stream
        stream.flush()
        return
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{path}: is a directory; expected a file path to write")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        kwargs = {} if binary else {"encoding": encoding, "newline": ""}
        with os.fdopen(fd, mode, **kwargs) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _file_mode())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def _text_out(path: str | os.PathLike) -> Iterator[IO[str]]:
    """Atomic text output, gzip-compressed (deterministically) when the name ends in ``.gz``."""
    if is_gzip(path):
        with atomic_write(path, "wb") as raw:
            gz = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="")
            text = _io.TextIOWrapper(gz, encoding="utf-8", newline="")
            yield text
            text.flush()
            text.detach()  # leave raw open: atomic_write fsyncs and renames it
            gz.close()
    else:
        with atomic_write(path, "w") as f:
            yield f


@contextlib.contextmanager
def _text_in(path: str | os.PathLike) -> Iterator[IO[str]]:
    if is_stdio(path):
        yield sys.stdin
        return
    p = require_file(path)
    try:
        if is_gzip(p):
            with gzip.open(p, "rt", encoding="utf-8", newline="") as f:
                yield f
        else:
            with open(p, encoding="utf-8", newline="") as f:
                yield f
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start}); expected a text file") from e
    except (OSError, EOFError) as e:
        if isinstance(e, gzip.BadGzipFile) or "gzip" in str(e).lower():
            raise InputError(f"{path}: not a valid gzip file ({e})") from e
        raise


def _binary_in(path: str | os.PathLike) -> IO[bytes]:
    if is_stdio(path):
        return _io.BytesIO(sys.stdin.buffer.read())
    return open(require_file(path), "rb")


# ------------------------------------------------------------------------------------------- tables
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
                rows = ", ".join(str(i + 1) for i in bad[:5]) + (" ..." if len(bad) > 5 else "")
                raise InputError(
                    f"{self.source}: column '{name}' has {len(bad)} non-numeric value(s) "
                    f"(data rows {rows}, e.g. {col[bad[0]]!r}); expected numbers"
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
    with _text_in(path) as f:
        return _parse_table(f, fmt, name, header=header)


def _parse_table(f: IO[str], fmt: str, name: str, *, header: bool = True) -> Table:
    if fmt == "jsonl":
        rows = _parse_jsonl(f, name)
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
        with _text_out(path) as f:
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


# -------------------------------------------------------------------------------------- JSON, YAML
def to_jsonable(obj: Any) -> Any:
    """Plain JSON types: numpy scalars/arrays → Python, Paths → str, non-finite floats → None."""
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    raise TypeError(f"cannot write a {type(obj).__name__} as JSON")


def dumps_json(obj: Any, *, indent: int | None = 2) -> str:
    return json.dumps(to_jsonable(obj), indent=indent, allow_nan=False, ensure_ascii=False)


def write_json(path: str | os.PathLike, obj: Any, *, indent: int | None = 2) -> None:
    with _text_out(path) as f:
        f.write(dumps_json(obj, indent=indent) + "\n")


def read_json(path: str | os.PathLike) -> Any:
    with _text_in(path) as f:
        text = f.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{display_name(path)}: invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}") from None


def write_jsonl(path: str | os.PathLike, rows: Iterable[Any]) -> None:
    with _text_out(path) as f:
        for r in rows:
            f.write(dumps_json(r, indent=None) + "\n")


def _parse_jsonl(f: IO[str], name: str) -> list[Any]:
    out = []
    for line_no, line in enumerate(f, start=1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise InputError(f"{name}: line {line_no} is not valid JSON ({e.msg})") from None
    return out


def read_jsonl(path: str | os.PathLike) -> list[Any]:
    with _text_in(path) as f:
        return _parse_jsonl(f, display_name(path))


def read_yaml(path: str | os.PathLike) -> Any:
    import yaml

    with _text_in(path) as f:
        text = f.read()
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise InputError(f"{display_name(path)}: invalid YAML{where}: {problem}") from None


def dumps_yaml(obj: Any) -> str:
    import yaml

    return yaml.safe_dump(to_jsonable(obj), sort_keys=False, default_flow_style=False, allow_unicode=True)


def write_yaml(path: str | os.PathLike, obj: Any) -> None:
    with _text_out(path) as f:
        f.write(dumps_yaml(obj))


# -------------------------------------------------------------------------------- arrays, torch, PNG
def read_array(path: str | os.PathLike) -> np.ndarray:
    """One array from ``.npy`` (or the only array of an ``.npz``); pickles are refused."""
    fmt = detect_format(path, default="npy")
    with _binary_in(path) as f:
        try:
            obj = np.load(f, allow_pickle=False)
        except ValueError as e:
            raise InputError(f"{display_name(path)}: not a plain NumPy array ({e})") from None
        except (OSError, EOFError) as e:
            raise InputError(f"{display_name(path)}: not a valid .{fmt} file ({e})") from None
        if isinstance(obj, np.lib.npyio.NpzFile):
            with obj:
                if len(obj.files) != 1:
                    raise InputError(f"{display_name(path)}: holds {len(obj.files)} arrays {obj.files}; expected one")
                return obj[obj.files[0]]
        return obj


def read_arrays(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """All arrays of an ``.npz`` (or ``{'arr_0': a}`` for an ``.npy``)."""
    with _binary_in(path) as f:
        try:
            obj = np.load(f, allow_pickle=False)
        except (ValueError, OSError, EOFError) as e:
            raise InputError(f"{display_name(path)}: not a valid NumPy file ({e})") from None
        if isinstance(obj, np.lib.npyio.NpzFile):
            with obj:
                return {k: obj[k] for k in obj.files}
        return {"arr_0": obj}


def write_array(path: str | os.PathLike, array: np.ndarray) -> None:
    with atomic_write(path, "wb") as f:
        np.save(f, np.asarray(array), allow_pickle=False)


def write_arrays(path: str | os.PathLike, arrays: Mapping[str, np.ndarray], *, compress: bool = True) -> None:
    # np.savez writes zip entries with the current time; fix it so the same arrays give the same bytes.
    import zipfile

    with atomic_write(path, "wb") as f:
        mode = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
        with zipfile.ZipFile(f, "w", compression=mode) as zf:
            for key, value in arrays.items():
                buf = _io.BytesIO()
                np.save(buf, np.asarray(value), allow_pickle=False)
                info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = mode
                zf.writestr(info, buf.getvalue())


def save_torch(path: str | os.PathLike, obj: Any) -> None:
    import torch

    with atomic_write(path, "wb") as f:
        torch.save(obj, f)


def load_torch(path: str | os.PathLike, map_location: Any = "cpu") -> Any:
    """Load a checkpoint with ``weights_only=True``: tensors and plain containers, never code."""
    import pickle

    import torch

    with _binary_in(path) as f:
        try:
            return torch.load(f, map_location=map_location, weights_only=True)
        except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError) as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise InputError(f"{display_name(path)}: not a loadable weights-only torch file ({first})") from None


def save_figure(fig: Any, path: str | os.PathLike, *, dpi: int = 120) -> None:
    """Save a matplotlib figure as PNG atomically (no timestamp metadata) and close it."""
    import matplotlib.pyplot as plt

    try:
        with atomic_write(path, "wb") as f:
            fig.savefig(f, format="png", dpi=dpi, bbox_inches="tight", metadata={"Software": None})
    finally:
        plt.close(fig)


def new_figure(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """``plt.subplots`` on the non-interactive Agg backend (safe on machines without a display)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt.subplots(*args, **kwargs)
