"""Per-length R² gap of another symbolic-regression method's models against an APO front (Sec. 5).

The front is monotone in length, so the best attainable R² at length L is the front's R² at its
longest length <= L. A model's gap is that value minus the model's R²; a negative gap means the model
beats the front (a richer grammar, another length rule, or another preprocessing). The paper argues
for reading absolute R² against length per dataset rather than ranks; the table keeps both numbers.

Column names are matched case-insensitively, so a PySR hall-of-fame file (``Complexity, Loss,
Equation``) is read as it is. When the models table has an ``equation`` column but no R² column, each
equation is parsed by :mod:`~paperkit.methods.sr_apo.equation` (our own parser, never ``eval`` or
``sympify``) and scored on ``--data``: R² and the node count (the length used against the front) are
computed here; the file's own complexity and loss are kept beside them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

LENGTH_NAMES = ("length", "EquationLength", "complexity", "size", "model_size")
R2_NAMES = ("R2", "r2_train", "r2_test", "score")
NAME_NAMES = ("algorithm", "method", "model", "name")
EQUATION_NAMES = ("equation", "expression", "formula", "sympy_format")


def front_value(front: dict[int, float], length: int) -> tuple[int | None, float]:
    """(front length used, best R²) for a model of ``length``; (None, nan) when shorter than the front."""
    usable = [L for L in front if L <= length]
    if not usable:
        return None, math.nan
    L = max(usable)
    return L, front[L]


def check_monotone(front: dict[int, float], source: str) -> None:
    """Refuse a "front" whose R² falls as length grows: the lookup takes the longest length <= L, which is the
    best attainable R² only on a monotone front (it gave wrong, negative gaps on such a table)."""
    from paperkit.core.errors import InputError

    best_len, best = None, -math.inf
    for L in sorted(front):
        if front[L] < best:
            raise InputError(f"{source}: R2 must not decrease with length on an APO front (length {L} has "
                             f"{front[L]:.6g} < {best:.6g} at length {best_len}); expected a front from sr-apo-front")
        best_len, best = L, front[L]


def gaps(front: dict[int, float], lengths: Sequence[int], r2: Sequence[float],
         names: Sequence[str] | None = None, extra: Sequence[dict] | None = None) -> list[dict]:
    """One row per model: name, length, R², front length and R², gap (front − model), then ``extra``. The gap
    is None when the model's R² is not finite or the model is shorter than the front."""
    out = []
    for i, (L, v) in enumerate(zip(lengths, r2, strict=True)):
        fl, fv = front_value(front, int(L))
        # None, not NaN: the table leaves these cells empty (a NaN would be written as the text "nan")
        gap = fv - float(v) if fl is not None and math.isfinite(v) else None
        out.append({"model": names[i] if names is not None else f"model{i}", "length": int(L),
                    "R2": float(v) if math.isfinite(v) else None, "front_length": fl,
                    "front_R2": fv if fl is not None else None, "gap": gap,
                    **(extra[i] if extra is not None else {})})
    return out


def summarize(rows: Sequence[dict]) -> list[dict]:
    """Per model name: count, mean and median gap (None without a gap), how many sit on or above the front
    (gap <= 1e-9)."""
    by: dict[str, list[float]] = {}
    for r in rows:
        by.setdefault(r["model"], []).append(r["gap"])
    out = []
    for name, g in by.items():
        arr = np.array([x for x in g if x is not None and math.isfinite(x)])
        out.append({"model": name, "n": len(g), "mean_gap": float(arr.mean()) if arr.size else None,
                    "median_gap": float(np.median(arr)) if arr.size else None,
                    "at_or_above_front": int((arr <= 1e-9).sum())})
    return out


def _pick(table, candidates: Sequence[str], what: str, required: bool = True) -> str | None:
    """The table's column named like one of ``candidates`` (case-insensitive; PySR writes Complexity)."""
    from paperkit.core.errors import InputError

    by_lower = {c.lower(): c for c in reversed(table.columns)}
    for c in candidates:
        if c.lower() in by_lower:
            return by_lower[c.lower()]
    if required:
        raise InputError(f"{table.source}: no {what} column; expected one of {', '.join(candidates)}")
    return None


def compare_tables(front_table, models_table, *, dataset: str | None = None, data=None
                   ) -> tuple[list[dict], list[dict], dict[int, float]]:
    """Gaps of the models in ``models_table`` against the front in ``front_table`` (paperkit Tables)."""
    from paperkit.core.errors import InputError

    fl = _pick(front_table, LENGTH_NAMES, "length")
    fr = _pick(front_table, R2_NAMES, "R2")
    lengths = front_table.numeric([fl])[:, 0]
    r2 = front_table.numeric([fr], finite=False)[:, 0]
    keep = np.ones(len(front_table), dtype=bool)
    if front_table.has("dataset"):
        names = sorted({str(v) for v in front_table.column("dataset")})
        if dataset is None and len(names) > 1:
            raise InputError(f"{front_table.source}: holds fronts of {len(names)} datasets ({', '.join(names[:5])}); "
                             "choose one with --dataset")
        if dataset is not None:
            keep = np.array([str(v) == dataset for v in front_table.column("dataset")])
            if not keep.any():
                raise InputError(f"{front_table.source}: no rows for dataset '{dataset}' (has {', '.join(names[:5])})")
    rows_kept = np.flatnonzero(keep)
    # A front row that cannot be used is refused, never skipped: it would silently change every gap.
    bad_r2 = [i for i in rows_kept if not math.isfinite(r2[i])]
    if bad_r2:
        raise InputError(f"{front_table.source}: column '{fr}' has {len(bad_r2)} missing or non-finite value(s) "
                         f"(rows {', '.join(str(i) for i in bad_r2[:5])}, 0-based); expected a finite R2 in every "
                         "front row")
    bad_len = [i for i in rows_kept if lengths[i] != int(lengths[i]) or lengths[i] < 1]
    if bad_len:
        raise InputError(f"{front_table.source}: column '{fl}' has non-integer or < 1 values (rows "
                         f"{', '.join(str(i) for i in bad_len[:5])}, 0-based); expected lengths >= 1")
    front: dict[int, float] = {}
    for L, v in zip(lengths[keep], r2[keep], strict=True):
        front[int(L)] = max(front.get(int(L), -math.inf), float(v))
    if not front:
        raise InputError(f"{front_table.source}: no front rows; expected (length, R2) rows")
    check_monotone(front, front_table.source)
    rows = model_gaps(front, models_table, dataset=dataset, data=data)
    return rows, summarize(rows), front


def model_gaps(front: dict[int, float], models_table, *, dataset: str | None = None, data=None) -> list[dict]:
    """Gap rows of every model; ``data`` = (X, y, feature names) scores equation strings when there is no R²."""
    from paperkit.core.errors import InputError, UsageError

    sel = list(range(len(models_table)))
    if not sel:     # a header-only table used to give exit 0 and an empty output
        raise InputError(f"{models_table.source}: no model rows; expected one row per model")
    if dataset is not None and models_table.has("dataset"):
        sel = [i for i, v in enumerate(models_table.column("dataset")) if str(v) == dataset]
        if not sel:
            raise InputError(f"{models_table.source}: no model rows for dataset '{dataset}'")
    mn = _pick(models_table, NAME_NAMES, "name", required=False)
    names = [str(models_table.column(mn)[i]) for i in sel] if mn else None
    mr = _pick(models_table, R2_NAMES, "R2", required=False)
    eq = _pick(models_table, EQUATION_NAMES, "equation", required=False)
    if mr is not None and mr.lower() == "score" and _pick(models_table, ("loss",), "", required=False):
        mr = None  # PySR's "score" is -d log(loss) / d complexity, not R²
    if mr is None and eq is not None:
        if data is None:
            raise UsageError(f"{models_table.source}: has equations ('{eq}') but no R2 column (a PySR hall of "
                             "fame has Loss, not R²); pass --data FILE (and --target) to score them")
        from paperkit.methods.sr_apo.equation import score_equations

        X, y, feature_names = data
        texts = [str(models_table.column(eq)[i]) for i in sel]
        scored = score_equations(texts, X, y, feature_names, source=models_table.source)
        extra = [{"equation": t, "scored_by": "paperkit"} for t in texts]
        for c, key in ((_pick(models_table, ("complexity",), "", required=False), "complexity"),
                       (_pick(models_table, ("loss",), "", required=False), "loss")):
            if c is not None:
                col = models_table.column(c)
                for e, i in zip(extra, sel, strict=True):
                    e[key] = col[i].item() if hasattr(col[i], "item") else col[i]
        return gaps(front, [L for L, _ in scored], [v for _, v in scored], names, extra)
    if mr is None:
        raise InputError(f"{models_table.source}: no R2 column; expected one of {', '.join(R2_NAMES)} "
                         f"(any case), or an equation column ({', '.join(EQUATION_NAMES)}) with --data")
    ml = _pick(models_table, LENGTH_NAMES, "length")
    mlen = models_table.numeric([ml])[:, 0]
    bad = [i for i, v in enumerate(mlen) if v != int(v) or v < 1]
    if bad:
        raise InputError(f"{models_table.source}: column '{ml}' has non-integer or < 1 values (rows "
                         f"{', '.join(str(i) for i in bad[:5])}, 0-based); expected lengths >= 1")
    mr2 = models_table.numeric([mr])[:, 0]
    return gaps(front, [int(mlen[i]) for i in sel], [float(mr2[i]) for i in sel], names)
