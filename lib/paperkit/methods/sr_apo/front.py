"""Fronts from run summaries (Fong & Motani, ICML 2025, Sec. 3.3).

A run summary holds the best expression per length of one (dataset, method, h, seed) run, in the
official column layout and file name ``<dataset>_<method>_<h>_<seed>_summary.csv``. The absolute
Pareto-optimal (APO) front takes the best R² per length over all runs and keeps a length only if it
beats every shorter one (strict improvement) by more than a tolerance, ``tolerance * max(1, |R²|)``
(default 1e-12): float noise of 1e-16 must not let a longer formula in (0 gives the paper's bare
strict rule).

``front.csv`` columns: length, R2, MSE, expression (official form), infix and simplified (on the
standardised scale, constants rounded to 6 digits), formula (in the data's units and column names,
constants at full precision; see :mod:`~paperkit.methods.sr_apo.formula`), parameters (a JSON list,
full precision), method, seed, head, dataset.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from paperkit.core import tables
from paperkit.core.errors import InputError
from paperkit.methods.sr_apo.formula import (
    STANDARDISATION_FILE,
    Standardisation,
    original_formula,
    prefix_to_sympy,
    read_standardisation,
)
from paperkit.methods.sr_apo.formula import export as export_formula
from paperkit.methods.sr_apo.grammar import parse_official, to_infix

SUMMARY_COLUMNS = ("EquationLength", "EquationStructure", "EquationLambda", "EquationParameters",
                   "NumericalIterations", "MSE", "R2")
FRONT_COLUMNS = ("length", "R2", "MSE", "expression", "infix", "simplified", "formula", "parameters", "method",
                 "seed", "head", "dataset")
# A longer expression enters the front only if it beats every shorter one by more than this, relative.
DEFAULT_TOLERANCE = 1e-12
_NAME = re.compile(r"^(?P<dataset>.+)_(?P<method>[^_]+)_(?P<head>\d+)_(?P<seed>\d+)_summary\.(?:csv|tsv)(?:\.gz)?$")


def summary_filename(dataset: str, method: str, head: int, seed: int) -> str:
    return f"{dataset}_{method}_{head}_{seed}_summary.csv"


def parse_summary_name(path: str | os.PathLike) -> dict[str, object]:
    """``1027_ESL_BFGS_3_11284_summary.csv`` → dataset, method, head, seed."""
    m = _NAME.match(Path(path).name)
    if not m:
        raise InputError(f"{path}: not a run summary name; expected <dataset>_<method>_<h>_<seed>_summary.csv")
    return {"dataset": m["dataset"], "method": m["method"], "head": int(m["head"]), "seed": int(m["seed"])}


def parse_parameters(text: object) -> np.ndarray:
    """``'[ 1.28592208 -0.47486955]'`` (NumPy's print form) → array; empty for no constants."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return np.empty(0)
    s = str(text).strip().strip("[]").replace(",", " ")
    try:
        return np.array([float(v) for v in s.split()], dtype=np.float64)
    except ValueError:
        raise ValueError(f"cannot read constants from {text!r}; expected a list of numbers") from None


def format_parameters(params: Sequence[float] | np.ndarray) -> str:
    """NumPy's print form of the official summaries, every value at full (round-trip) precision."""
    params = np.asarray(params, dtype=np.float64)
    if not params.size:
        return ""
    return np.array2string(params, precision=17, floatmode="unique", max_line_width=10**9, separator=" ")


def json_parameters(params: Sequence[float] | np.ndarray) -> str:
    """The constants as a JSON list (``[1.2859220812, -0.47486955]``), exactly as fitted."""
    import json

    return json.dumps([float(v) if math.isfinite(v) else None for v in np.asarray(params, dtype=np.float64)])


def read_summary(path: str | os.PathLike) -> list[dict]:
    """Rows of one summary file, each with the run's dataset/method/head/seed from the file name."""
    meta = parse_summary_name(path)
    table = tables.read_table(path)
    missing = [c for c in ("EquationLength", "EquationStructure", "R2") if not table.has(c)]
    if missing:
        raise InputError(f"{path}: missing column(s) {', '.join(missing)}; expected the summary layout "
                         f"{', '.join(SUMMARY_COLUMNS)}")
    lengths = table.numeric(["EquationLength"])[:, 0]
    r2 = table.numeric(["R2"], finite=False)[:, 0]
    mse = table.numeric(["MSE"], finite=False)[:, 0] if table.has("MSE") else np.full(len(table), np.nan)
    structure = table.column("EquationStructure")
    params = table.column("EquationParameters") if table.has("EquationParameters") else [""] * len(table)
    nit = table.column("NumericalIterations") if table.has("NumericalIterations") else [None] * len(table)
    rows = []
    for i in range(len(table)):
        expr = str(structure[i])
        try:
            parse_official(expr)
            consts = parse_parameters(params[i])
        except ValueError as e:
            raise InputError(f"{path}: row {i} (0-based): {e}") from None
        rows.append({"EquationLength": int(lengths[i]), "EquationStructure": expr,
                     "EquationLambda": "lambda x,xdata:" + expr, "EquationParameters": format_parameters(consts),
                     "NumericalIterations": _float_or_none(nit[i]), "MSE": float(mse[i]), "R2": float(r2[i]),
                     **meta, "source": str(path)})
    return rows


def _float_or_none(v: object) -> float | None:
    try:
        f = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def write_summary(path: str | os.PathLike, summary: dict[int, dict]) -> None:
    rows = [{c: summary[L][c] for c in SUMMARY_COLUMNS} for L in sorted(summary)]
    tables.write_table(path, rows if rows else {c: [] for c in SUMMARY_COLUMNS}, fmt="csv")


# ----------------------------------------------------------------------------------------- the front
def _key(row: dict) -> tuple:
    """Order for 'best': R², then the larger expression string (official tie rule), then run identity."""
    return (row["R2"], row["EquationStructure"], str(row.get("method", "")), -int(row.get("seed", 0) or 0))


def best_per_length(rows: Iterable[dict]) -> dict[int, dict]:
    """The best row per length (rows with NaN R² are skipped)."""
    best: dict[int, dict] = {}
    for row in rows:
        r2 = row["R2"]
        if r2 is None or not math.isfinite(r2):
            continue
        L = int(row["EquationLength"])
        if L not in best or _key(row) > _key(best[L]):
            best[L] = row
    return dict(sorted(best.items()))


def check_tolerance(tolerance: float) -> float:
    from paperkit.core.errors import UsageError

    if not (math.isfinite(tolerance) and 0 <= tolerance < 1):
        raise UsageError(f"tolerance = {tolerance!r}; expected a relative R² margin in [0, 1)")
    return float(tolerance)


def strict_front(best: dict[int, dict], tolerance: float = DEFAULT_TOLERANCE) -> dict[int, dict]:
    """Keep a length only if its R² beats every shorter length's by more than ``tolerance * max(1, |R²|)``."""
    tolerance = check_tolerance(tolerance)
    out: dict[int, dict] = {}
    top = -math.inf
    for L in sorted(best):
        r2 = best[L]["R2"]
        if top == -math.inf or r2 > top + tolerance * max(1.0, abs(top)):
            out[L] = best[L]
            top = r2
    return out


def apo_front(rows: Iterable[dict], tolerance: float = DEFAULT_TOLERANCE) -> dict[int, dict]:
    """APO front of any number of summary rows: best per length, then strict improvement (with tolerance)."""
    return strict_front(best_per_length(rows), tolerance)


def front_metadata(tolerance: float) -> dict:
    """How the front was built, for manifests and the JSON summary line."""
    return {"rule": "a length is kept only if its R2 exceeds every shorter length's by more than "
                    "tolerance * max(1, |R2|)", "tolerance": tolerance, "relative": True}


def front_rows(front: dict[int, dict], feature_names: Sequence[str] | None = None, *, simplify: bool = True,
               latex: bool = False, standardisation: Standardisation | None = None, export: str = "sympy"
               ) -> list[dict]:
    """Rows of ``front.csv``: length, R², MSE, official expression, infix, sympy-simplified form, the
    formula in the data's units (when ``standardisation`` is known; written in ``export`` syntax),
    the constants as a JSON list, and the run."""
    out = []
    for L in sorted(front):
        r = front[L]
        tokens = parse_official(r["EquationStructure"])
        params = parse_parameters(r["EquationParameters"])
        row = {"length": L, "R2": r["R2"], "MSE": r["MSE"], "expression": r["EquationStructure"],
               "infix": to_infix(tokens, list(feature_names) if feature_names else None, params if params.size
                                 else None)}
        if simplify or latex:
            sym = sympy_expression(tokens, params, feature_names)
            if simplify:
                row["simplified"] = str(sym)
            if latex:
                import sympy

                row["latex"] = sympy.latex(sym)
        row["formula"] = export_formula(original_formula(tokens, params, standardisation), export) \
            if standardisation is not None else None
        row.update({"parameters": json_parameters(params), "method": r.get("method", ""),
                    "seed": r.get("seed", ""), "head": r.get("head", ""), "dataset": r.get("dataset", "")})
        out.append(row)
    return out


def sympy_expression(tokens: Sequence[int], params: np.ndarray | None = None,
                     feature_names: Sequence[str] | None = None, *, digits: int = 6):
    """The expression in sympy, constants rounded to ``digits`` significant digits, simplified."""
    import sympy

    def constant(i):
        if params is not None and len(params) > i:
            return sympy.Float(float(f"{float(params[i]):.{digits}g}"), digits)
        return sympy.Symbol(f"c{i}")

    def feature(j):
        return sympy.Symbol(feature_names[j] if feature_names else f"x{j}", real=True)

    expr = prefix_to_sympy(tokens, constant, feature)
    try:
        return sympy.simplify(expr)
    except Exception:  # sympy can fail on odd powers; the unsimplified form is still right
        return expr


_SUMMARY_SUFFIX = re.compile(r"_summary\.(?:csv|tsv)(?:\.gz)?$")


def _is_summary_file(path: Path) -> bool:
    """A table named like a summary (its full name is checked when read): not a ``.manifest.json`` or ``.bak``."""
    return path.is_file() and _SUMMARY_SUFFIX.search(path.name) is not None


def collect_summaries(patterns: Iterable[str]) -> list[Path]:
    """Summary files from file paths, folders (searched recursively) and glob patterns; sorted, unique.

    Folders and globs yield only ``*_summary.csv`` / ``.tsv`` (``.gz``) files, so the
    ``*_summary.csv.manifest.json`` that paperkit writes beside an output (or a ``*_summary.csv.bak``) is not
    read as a summary; a file named explicitly is kept. Every name is checked when the file is read."""
    import glob

    found: set[Path] = set()
    for pattern in patterns:
        p = Path(pattern)
        if p.is_dir():
            found.update(f for f in p.rglob("*_summary.*") if _is_summary_file(f))
            continue
        matches = [Path(m) for m in glob.glob(pattern, recursive=True)]
        for m in matches:
            if m.is_dir():
                found.update(f for f in m.rglob("*_summary.*") if _is_summary_file(f))
            elif m.is_file() and (not glob.has_magic(pattern) or _is_summary_file(m)):
                found.add(m)
        if not matches:
            raise InputError(f"{pattern}: no such file, folder or matching summaries")
    if not found:
        raise InputError(f"no summary files found in {', '.join(patterns)}; expected *_summary.csv files")
    return sorted(found)


def standardisation_files(paths: Sequence[Path]) -> list[Path]:
    """The ``standardisation.json`` files beside the summaries (read as inputs: no output may replace them)."""
    return sorted({Path(p).parent / STANDARDISATION_FILE for p in paths
                   if (Path(p).parent / STANDARDISATION_FILE).is_file()})


def standardisations(paths: Sequence[Path]) -> dict[Path, Standardisation]:
    """The ``standardisation.json`` beside each summary (written by sr-apo-search), by folder."""
    out: dict[Path, Standardisation] = {}
    for path in paths:
        f = Path(path).parent / STANDARDISATION_FILE
        if f.parent not in out and f.is_file():
            out[f.parent] = read_standardisation(f)
    return out


def fronts_by_dataset(paths: Sequence[Path], *, feature_names: Sequence[str] | None = None, latex: bool = False,
                      tolerance: float = DEFAULT_TOLERANCE, standardisation: Standardisation | None = None,
                      fallback: Standardisation | None = None,
                      export: str = "sympy") -> tuple[list[dict], dict[str, dict[int, float]]]:
    """Read every summary, group by dataset, and return front.csv rows plus {dataset: {length: R²}}.

    The formula column needs the data's standardisation: ``standardisation`` for every dataset, else the
    ``standardisation.json`` found beside a dataset's summaries, else ``fallback`` (sr-apo-front's --data,
    documented as used only where there is no such file), else None.
    """
    by: dict[str, list[dict]] = {}
    found = standardisations(paths) if standardisation is None else {}
    scaling: dict[str, Standardisation | None] = {}
    for path in paths:
        for row in read_summary(path):
            by.setdefault(str(row["dataset"]), []).append(row)
            name = str(row["dataset"])
            scaling[name] = standardisation or scaling.get(name) or found.get(Path(path).parent)
    rows: list[dict] = []
    fronts: dict[str, dict[int, float]] = {}
    for name in sorted(by):
        front = apo_front(by[name], tolerance)
        rows.extend(front_rows(front, feature_names, latex=latex, standardisation=scaling.get(name) or fallback,
                               export=export))
        fronts[name] = {L: r["R2"] for L, r in front.items()}
    return rows, fronts
