"""Tables and the per-dimension plot of one or more evaluation runs (their ``summary.json``)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from paperkit.core import io, plots
from paperkit.core.errors import InputError
from paperkit.methods.cogmath.dimensions import DIMENSIONS, STAGES

SUMMARY_KEYS = ("n_problems", "accuracy", "pass_rate", "overestimation", "dimensions", "stages")


def load_summary(run: str | os.PathLike) -> dict[str, Any]:
    p = Path(run)
    if not p.exists():
        raise InputError(f"{run}: no such run directory or summary.json")
    path = p / "summary.json" if p.is_dir() else p
    if not path.exists():
        raise InputError(f"{run}: no summary.json; expected a cogmath-eval run directory or its summary.json")
    data = io.read_json(path)
    if not isinstance(data, dict) or any(k not in data for k in SUMMARY_KEYS):
        raise InputError(f"{path}: not a cogmath-eval summary (needs {', '.join(SUMMARY_KEYS)})")
    check_summary(data, path)
    return data


def _is_number(v: Any) -> bool:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    try:
        return math.isfinite(v)
    except OverflowError:  # an integer beyond float range (JSON allows 1e400 written out as digits)
        return False


def check_summary(data: dict[str, Any], path: str | os.PathLike) -> None:
    """Every value the report prints or plots has the type and range cogmath-eval writes: a hand-edited
    or foreign summary would otherwise crash the table or print rates such as 750% or nan."""

    def bad(key: str, value: Any, expected: str) -> InputError:
        shown = repr(value)[:60] if not isinstance(value, float) else f"{value:g}"
        return InputError(f"{path}: {key} = {shown}; expected {expected}")

    def count(key: str, value: Any) -> None:
        if not (_is_number(value) and float(value).is_integer() and value >= 0):
            raise bad(key, value, "a whole number >= 0")

    def rate(key: str, value: Any, lo: float = 0.0) -> None:
        # None: no problem had a base for this rate (see scoring.summarize)
        if value is not None and not (_is_number(value) and lo <= value <= 1):
            raise bad(key, value, f"a fraction in [{lo:g}, 1] or null")

    def table(key: str, value: Any, names: Sequence[str]) -> dict[str, dict[str, Any]]:
        if not isinstance(value, dict):
            raise bad(key, value, f"an object with keys {', '.join(names)}")
        for n in names:
            if not isinstance(value.get(n), dict):
                raise InputError(f"{path}: {key}.{n} is {'missing' if n not in value else 'not an object'}; "
                                 "expected an object with its rpr")
            if "rpr" not in value[n]:
                raise InputError(f"{path}: {key}.{n} has no key rpr")
        return value

    count("n_problems", data["n_problems"])
    if "n_errors" in data:
        count("n_errors", data["n_errors"])
    rate("accuracy", data["accuracy"])
    rate("pass_rate", data["pass_rate"])
    rate("overestimation", data["overestimation"], lo=-1.0)  # accuracy - pass rate
    dims = table("dimensions", data["dimensions"], [str(d.index) for d in DIMENSIONS[1:]])
    for d in DIMENSIONS[1:]:
        rate(f"dimensions.{d.index}.rpr", dims[str(d.index)]["rpr"])
        rate(f"dimensions.{d.index}.pass_rate", dims[str(d.index)].get("pass_rate"))
    stages = table("stages", data["stages"], [str(k) for k in STAGES])
    for k in STAGES:
        rate(f"stages.{k}.rpr", stages[str(k)]["rpr"])


UNITS = {"%": "percent of problems (0-100)", "points": "percentage points", "count": "a count"}


def _pct(x: float | None) -> float | None:
    # summaries hold fractions rounded to 6 digits: 4 decimals of percent keep them exactly
    return None if x is None else round(100 * x, 4)


def table_rows(names: Sequence[str], summaries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per metric, one column per run, every rate on one scale: percent (``unit`` names it).

    Rows: problems; accuracy of the originals; per dimension its absolute accuracy (share of all problems
    with that inquiry that passed it) and its relative pass rate (among problems whose original was solved:
    None when none was); the RPR of each stage; pass rate (mastery); overestimation in percentage points;
    failed calls."""
    runs = list(zip(names, summaries, strict=True))

    def row(metric: str, unit: str, value: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
        return {"metric": metric, "unit": unit, **{n: value(s) for n, s in runs}}

    rows = [row("problems", "count", lambda s: s["n_problems"]),
            row("accuracy (original)", "%", lambda s: _pct(s["accuracy"]))]
    for d in DIMENSIONS[1:]:
        k = str(d.index)
        rows.append(row(f"accuracy D{d.index} {d.title}", "%", lambda s, k=k: _pct(s["dimensions"][k].get("pass_rate"))))
        rows.append(row(f"RPR D{d.index} {d.title}", "%", lambda s, k=k: _pct(s["dimensions"][k]["rpr"])))
    for k, title in STAGES.items():
        rows.append(row(f"RPR stage {k} ({title})", "%", lambda s, k=k: _pct(s["stages"][str(k)]["rpr"])))
    rows.append(row("pass rate (mastery)", "%", lambda s: _pct(s["pass_rate"])))
    rows.append(row("overestimation (acc - PR)", "points", lambda s: _pct(s["overestimation"])))
    rows.append(row("failed calls", "count", lambda s: s.get("n_errors", 0)))
    return rows


def render_text(rows: Sequence[dict[str, Any]], names: Sequence[str], *, markdown: bool = False) -> str:
    def cell(v: Any) -> str:
        return "-" if v is None else f"{v:.1f}" if isinstance(v, float) else str(v)

    header = ["metric", "unit"] + list(names)
    body = [[r["metric"], r["unit"]] + [cell(r[n]) for n in names] for r in rows]
    note = ("unit %: percent of problems; points: percentage points. Accuracy Dn: share of all problems whose "
            "inquiry n passed; RPR: relative pass rate among problems whose original was solved ('-' when none was)")
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(b) + " |" for b in body]
        return "\n".join(lines) + "\n"
    widths = [max(len(x[i]) for x in [header] + body) for i in range(len(header))]
    fmt = lambda cells: "  ".join(c.ljust(w) if i < 2 else c.rjust(w)  # noqa: E731
                                  for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()
    return "\n".join([fmt(header)] + [fmt(b) for b in body]) + f"\n({note})\n"


def plot(path: str | os.PathLike, names: Sequence[str], summaries: Sequence[dict[str, Any]]) -> None:
    """Grouped bars: accuracy, RPR of each dimension, pass rate — one colour per run."""
    import numpy as np

    labels = ["Acc"] + [f"D{d.index}" for d in DIMENSIONS[1:]] + ["PR"]
    fig, ax = plots.new_figure(figsize=(min(14.0, max(7.0, 3.0 + 0.45 * len(names) * len(labels) / 3)), 4.6))
    x = np.arange(len(labels))
    width = 0.8 / max(1, len(names))
    for k, (n, s) in enumerate(zip(names, summaries, strict=True)):
        vals = [s["accuracy"]] + [s["dimensions"][str(d.index)]["rpr"] for d in DIMENSIONS[1:]] + [s["pass_rate"]]
        xs = x - 0.4 + width * (k + 0.5)
        ax.bar(xs, [100 * (v or 0.0) for v in vals], width, label=n)
        # each dimension's absolute accuracy, so a model that solves nothing (RPR undefined) still shows it
        absolute = [s["dimensions"][str(d.index)].get("pass_rate") for d in DIMENSIONS[1:]]
        ax.scatter(xs[1:-1], [100 * (v or 0.0) for v in absolute], marker="_", s=60, color="black", zorder=3,
                   label="absolute accuracy of the inquiry" if k == 0 else None)
    for b in (9.5, 0.5, 4.5, 7.5):
        ax.axvline(b, color="0.85", lw=0.8, zorder=0)
    ax.set_xticks(x, labels)
    ax.set_ylim(0, 105)
    ax.set_ylabel("% (accuracy, relative pass rate, pass rate)")  # bars: RPR of D1-D9; ticks: absolute
    ax.set_title("CogMath: accuracy vs. per-dimension relative pass rate and mastery")
    ax.legend(fontsize=8, ncol=min(7, len(names)), loc="upper center", bbox_to_anchor=(0.5, -0.08), frameon=False)
    plots.save_figure(fig, path)
