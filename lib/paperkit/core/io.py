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
import gzip
import hashlib
import io as _io
import json
import math
import os
import sys
import tempfile
import zlib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np

from paperkit.core.errors import InputError, UsageError

TEXT_FORMATS = ("csv", "tsv", "jsonl", "json", "yaml")
BINARY_FORMATS = ("npy", "npz", "pt", "png")
FORMATS = TEXT_FORMATS + BINARY_FORMATS
_SUFFIXES = {
    ".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json",
    ".yaml": "yaml", ".yml": "yaml", ".npy": "npy", ".npz": "npz", ".pt": "pt", ".pth": "pt", ".png": "png",
}



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
    if not is_stdio(path) and path is not None and Path(path).is_dir():
        raise InputError(f"{display_name(path)}: is a directory; expected a file")
    # no "--format" hint: on most commands that option does not exist or sets the output's format
    raise UsageError(f"{display_name(path)}: cannot tell the format from the name; use a suffix "
                     f"({', '.join(sorted(_SUFFIXES))})")


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
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as e:
        raise UsageError(f"{path}: cannot write there ({e.strerror or e})") from None
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
def text_writer(path: str | os.PathLike) -> Iterator[IO[str]]:
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
def text_reader(path: str | os.PathLike) -> Iterator[IO[str]]:
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
    except (OSError, EOFError, zlib.error) as e:
        # a truncated .gz ends in EOFError, which click would take for Ctrl-D and report as an interrupt
        if (isinstance(e, (gzip.BadGzipFile, EOFError, zlib.error)) and is_gzip(p)) or "gzip" in str(e).lower():
            raise InputError(f"{path}: not a valid gzip file ({_first_line(e)})") from e
        raise


_stdin_cache: tuple[Any, bytes] | None = None


def stdin_bytes() -> bytes:
    """All of stdin as bytes, read once per stdin object (so ``-`` can be sniffed, then parsed)."""
    global _stdin_cache
    if _stdin_cache is None or _stdin_cache[0] is not sys.stdin:
        _stdin_cache = (sys.stdin, sys.stdin.buffer.read())
    return _stdin_cache[1]


def _binary_in(path: str | os.PathLike) -> IO[bytes]:
    if is_stdio(path):
        return _io.BytesIO(stdin_bytes())
    return open(require_file(path), "rb")


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
    with text_writer(path) as f:
        f.write(dumps_json(obj, indent=indent) + "\n")


def read_json(path: str | os.PathLike) -> Any:
    with text_reader(path) as f:
        text = f.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{display_name(path)}: invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}") from None


def write_text(path: str | os.PathLike, text: str) -> None:
    """Atomically write a text file (``.gz`` compressed deterministically)."""
    with text_writer(path) as f:
        f.write(text)


def write_jsonl(path: str | os.PathLike, rows: Iterable[Any]) -> None:
    with text_writer(path) as f:
        for r in rows:
            f.write(dumps_json(r, indent=None) + "\n")


def parse_jsonl_stream(f: IO[str], name: str) -> list[Any]:
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
    with text_reader(path) as f:
        return parse_jsonl_stream(f, display_name(path))


def _yaml_loader(strict: bool) -> Any:
    """SafeLoader that refuses a key given twice and, when ``strict``, anchors/aliases (alias bombs)."""
    import yaml

    class Loader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            if strict and self.check_event(yaml.AliasEvent):
                mark = self.peek_event().start_mark
                raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed here", mark)
            return super().compose_node(parent, index)

    def mapping(loader: Any, node: Any, deep: bool = False) -> dict:
        loader.flatten_mapping(node)
        seen: set = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=True)
            try:
                dup = key in seen
            except TypeError:
                continue  # unhashable: the constructor reports it
            if dup:
                raise yaml.constructor.ConstructorError(None, None, f"key '{key}' is given twice",
                                                        key_node.start_mark)
            seen.add(key)
        return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    return Loader


def read_yaml(path: str | os.PathLike, *, strict: bool = False) -> Any:
    """YAML through a safe loader; a duplicate key is an error, and ``strict`` also refuses aliases."""
    import yaml

    with text_reader(path) as f:
        text = f.read()
    try:
        return yaml.load(text, Loader=_yaml_loader(strict))  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise InputError(f"{display_name(path)}: invalid YAML{where}: {problem}") from None


def dumps_yaml(obj: Any) -> str:
    import yaml

    return yaml.safe_dump(to_jsonable(obj), sort_keys=False, default_flow_style=False, allow_unicode=True)


def write_yaml(path: str | os.PathLike, obj: Any) -> None:
    with text_writer(path) as f:
        f.write(dumps_yaml(obj))


# ------------------------------------------------------------------------------------ arrays, torch
_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = b"PK\x03\x04"


def sniff_binary(data: bytes) -> str | None:
    """'npy', 'npz' or 'pt' from a stream's first bytes (stdin has no suffix), else None."""
    if data.startswith(_NPY_MAGIC):
        return "npy"
    if data.startswith(_ZIP_MAGIC):
        return "pt" if b"data.pkl" in data[:4096] or b"/data/" in data[:4096] else "npz"
    return None


def _np_load(path: str | os.PathLike) -> Any:
    import zipfile

    name = display_name(path)
    with _binary_in(path) as f:
        head = f.read(len(_NPY_MAGIC))
        f.seek(0)
        if sniff_binary(head) is None:
            # np.load takes any other bytes for a pickle; say what the file is instead.
            raise InputError(f"{name}: not a NumPy .npy/.npz file ({_describe_head(head, f)})")
        try:
            obj = np.load(f, allow_pickle=False)
            if isinstance(obj, np.lib.npyio.NpzFile):
                with obj:
                    return {k: obj[k] for k in obj.files}
            return obj
        except ValueError as e:
            if "pickle" in str(e).lower():
                raise InputError(f"{name}: holds Python objects (pickled data), which paperkit never loads; "
                                 "expected plain numeric arrays") from None
            raise InputError(f"{name}: not a valid NumPy file ({_first_line(e)})") from None
        except (OSError, EOFError, zipfile.BadZipFile, KeyError) as e:
            raise InputError(f"{name}: truncated or not a NumPy .npy/.npz file ({_first_line(e)})") from None


def _describe_head(head: bytes, f: IO[bytes]) -> str:
    if not head:
        return "the file is empty"
    if head[:1] == b"\x80":
        return "it looks like a Python pickle, which paperkit never loads"
    sample = f.read(256)  # f is at the start again
    f.seek(0)
    try:
        text = sample.decode("utf-8")
    except UnicodeDecodeError:
        return f"it starts with bytes {head[:6]!r}"
    first = text.splitlines()[0].strip() if text.strip() else ""
    kind = "text, looks like a CSV/TSV table" if ("," in first or "\t" in first) else "text"
    return f"it holds {kind}: {first[:40]!r}"


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def read_array(path: str | os.PathLike) -> np.ndarray:
    """One array from ``.npy`` (or the only array of an ``.npz``); pickles are refused."""
    obj = _np_load(path)
    if isinstance(obj, dict):
        if len(obj) != 1:
            raise InputError(f"{display_name(path)}: holds {len(obj)} arrays {sorted(obj)}; expected one")
        return next(iter(obj.values()))
    return obj


def read_arrays(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """All arrays of an ``.npz`` (or ``{'arr_0': a}`` for an ``.npy``)."""
    obj = _np_load(path)
    return obj if isinstance(obj, dict) else {"arr_0": obj}


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
    """Load a checkpoint with ``weights_only=True``: tensors and plain containers, never code.

    Errors are ours, in one line: a truncated file, or one that would need unsafe unpickling (PyTorch's
    own message suggests ``weights_only=False``, which paperkit never does).
    """
    import pickle
    import zipfile

    import torch

    name = display_name(path)
    with _binary_in(path) as f:
        head = f.read(len(_ZIP_MAGIC))
        f.seek(0)
        if not head.startswith((_ZIP_MAGIC, b"\x80")):
            # neither PyTorch's zip format nor a legacy pickle: torch's "unpickling" error would suggest a
            # hostile file when it is, say, a JSON or CSV file
            raise InputError(f"{name}: not a PyTorch checkpoint ({_describe_head(head, f)})")
        try:
            return torch.load(f, map_location=map_location, weights_only=True)
        except pickle.UnpicklingError:
            raise InputError(f"{name}: holds Python objects beyond tensors and plain containers, which paperkit "
                             "never loads (it only reads weights-only checkpoints)") from None
        except (RuntimeError, EOFError, ValueError, OSError, zipfile.BadZipFile, KeyError) as e:
            msg = _first_line(e)
            if "weights_only" in msg or "unsafe" in msg.lower():
                msg = "not a weights-only checkpoint"
            raise InputError(f"{name}: truncated or not a PyTorch checkpoint ({msg})") from None


def refuse_overwriting_inputs(outputs: dict[str, Any], inputs: list[Any]) -> None:
    """UsageError when an output path (option name → path) would replace what the command reads or writes:

    - an input file (``-o train.csv`` once silently replaced the training data);
    - a file of an input run dir (``pigdreamer-eval RUN -o RUN/model.pt`` destroyed the run): its
      ``manifest.json``, ``config.yaml`` and every output its manifest lists;
    - another output of the same call (``-o x.csv --summary x.csv`` kept only the summary).
    """
    written: dict[str, str] = {}
    for option, out in outputs.items():
        if out is None or is_stdio(out):
            continue
        check_writable(out, option)
        key = os.path.realpath(out)
        if key in written:
            raise UsageError(f"{option} {out} is also {written[key]}; give each output its own file")
        written[key] = option
    given = [Path(p) for p in inputs if p is not None and not is_stdio(p) and Path(p).exists()]
    files = [p for p in given if p.is_file()]
    for option, out in outputs.items():
        if out is None or is_stdio(out) or not Path(out).is_file():
            continue
        for src in files:
            if os.path.samefile(out, src):
                raise UsageError(f"{option} {out} is the input file {src}; write the results elsewhere")
        for run in (p for p in given if p.is_dir()):
            if _is_run_artefact(Path(out), run):
                raise UsageError(f"{option} {out} would replace a file of the run {run} that it reads; "
                                 "write the results elsewhere")


def files_named(value: Any) -> list[str]:
    """The existing paths an option value names: itself (or each item of a list), or the FILE of a ``KIND:FILE``
    source (official:FILE, jsonl:FILE). Used to find a command's inputs without knowing its options."""
    out = []
    for v in value if isinstance(value, (list, tuple)) else [value]:
        if not isinstance(v, (str, os.PathLike)) or is_stdio(v):
            continue
        v = os.fspath(v)
        if os.path.exists(v):
            out.append(v)
        elif ":" in v and os.path.exists(v.split(":", 1)[1]):
            out.append(v.split(":", 1)[1])
    return out


def check_writable(path: str | os.PathLike, option: str = "") -> None:
    """UsageError, before any work, when ``path`` cannot be created: a parent is a file, or the nearest
    existing folder is not writable."""
    name = f"{option} {path}" if option else str(path)
    parent = Path(path).absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise UsageError(f"{name}: cannot write there ({parent} is a file, not a folder)")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{name}: cannot write there ({parent} is not writable)")


def _is_run_artefact(path: Path, run: Path) -> bool:
    """Whether ``path`` is one of the files a finished run dir ``run`` wrote (as its manifest lists them)."""
    manifest = run / "manifest.json"
    try:
        rel = path.resolve().relative_to(run.resolve())
    except ValueError:
        return False
    if not manifest.is_file():
        return False
    if rel.as_posix() in ("manifest.json", "config.yaml"):
        return True
    try:
        listed = json.loads(manifest.read_text(encoding="utf-8")).get("outputs") or []
        names = {Path(str(o.get("path", ""))).as_posix() for o in listed if isinstance(o, dict)}
    except (OSError, ValueError, AttributeError):
        return False
    # the manifest holds the paths the run had when it was written; the dir may have moved since
    return any(n == rel.as_posix() or n.endswith("/" + rel.as_posix()) for n in names)
