"""Problems and inquiries: the inquiry-file schema, and readers for user-held data.

**Inquiry rows** (one JSON line per problem and dimension, dimension 0 = the original problem)::

    {"problem": "syn-0003", "dimension": 4, "key": "redundant_condition", "stage": 1,
     "inquiry": "...", "expected": "answer" | "unsolvable" | "explain", "reference": "18",
     "reference_text": "...", "judge": "accepted" | "rejected" | "imported", "attempts": 1,
     "notes": "...", "source": "synthetic" | "official" | "jsonl"}

A dimension the agents could not produce (the Judge rejected every try) or that a file lacks is a row
with ``judge: "rejected"`` / absent and ``inquiry: null``: the problem is scored on the dimensions it has.

**Official layout** (the CogMath repository's ``GSM8K.json``): an object keyed by problem id, each with
``ori_question``, ``ori_answer`` (a GSM8K solution ending ``#### A``, or a bare answer) and
``"Dimension i": {"inquiry": ..., "inquiry answer": ...}`` (answers for D5–D9). D1/D4 keep A, D2/D3
expect a refusal, D8 answers are explanations (``expected: explain``), D5–D7/D9 answers are reduced to
their final number with the same extractor used for responses.

**Plain problems** (JSONL): ``{"id": ..., "question": ..., "answer": ...}`` (``problem``/``ori_question``
and ``solution``/``ori_answer`` are accepted too); used with LLM agents.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from paperkit.core import io, tables
from paperkit.core.errors import InputError
from paperkit.methods.cogmath.dimensions import DIMENSIONS, dimension
from paperkit.methods.cogmath.extract import ExtractConfig, extract_answer, parse_answer

EXPECTED = ("answer", "unsolvable", "explain")
JUDGE = ("accepted", "rejected", "imported")
REQUIRED = ("problem", "dimension", "inquiry", "expected", "reference")


@dataclass(frozen=True)
class Problem:
    id: str
    question: str
    answer: str  # canonical final answer text
    solution: str = ""  # worked solution if any


def make_row(problem: str, dim: int, inquiry: str | None, expected: str, reference: str | None, *,
             reference_text: str | None = None, judge: str = "accepted", attempts: int = 1, notes: str = "",
             source: str = "synthetic") -> dict[str, Any]:
    d = dimension(dim)
    return {"problem": problem, "dimension": dim, "key": d.key, "stage": d.stage, "inquiry": inquiry,
            "expected": expected, "reference": reference, "reference_text": reference_text, "judge": judge,
            "attempts": attempts, "notes": notes, "source": source}


def expected_for(dim: int) -> str:
    if dim in (2, 3):
        return "unsolvable"
    return "answer"


def available(row: dict[str, Any]) -> bool:
    return row.get("inquiry") is not None and row.get("judge") != "rejected"


# ------------------------------------------------------------------------------------ inquiry files
def validate_rows(rows: Sequence[Any], source: str) -> list[dict[str, Any]]:
    """Check an inquiry file's rows; raise InputError naming the line and field."""
    if not rows:
        raise InputError(f"{source}: no inquiries; expected one JSON line per problem and dimension")
    seen: set[tuple[str, int]] = set()
    originals: set[str] = set()
    out = []
    for n, r in enumerate(rows, start=1):
        if not isinstance(r, dict):
            raise InputError(f"{source}: line {n} is not a JSON object")
        missing = [k for k in REQUIRED if k not in r]
        if missing:
            raise InputError(f"{source}: line {n} lacks field(s) {', '.join(missing)}; expected {', '.join(REQUIRED)}")
        dim = r["dimension"]
        if not isinstance(dim, int) or isinstance(dim, bool) or not 0 <= dim <= 9:
            raise InputError(f"{source}: line {n}: dimension = {dim!r}; expected an integer 0-9")
        pid = str(r["problem"])
        if (pid, dim) in seen:
            raise InputError(f"{source}: line {n}: duplicate problem {pid!r} dimension {dim}")
        seen.add((pid, dim))
        if r["expected"] not in EXPECTED:
            raise InputError(f"{source}: line {n}: expected = {r['expected']!r}; expected one of {', '.join(EXPECTED)}")
        row = dict(r)
        row["problem"] = pid
        row.setdefault("key", DIMENSIONS[dim].key)
        row.setdefault("stage", DIMENSIONS[dim].stage)
        row.setdefault("judge", "accepted")
        if available(row):
            if not isinstance(row["inquiry"], str) or not row["inquiry"].strip():
                raise InputError(f"{source}: line {n}: inquiry must be non-empty text")
            if row["expected"] == "answer" and not parse_answer(str(row["reference"] or "")).found:
                raise InputError(f"{source}: line {n}: reference = {row['reference']!r} is not a number or "
                                 "expression; expected the reference answer")
            if row["expected"] == "explain" and not (row.get("reference_text") or row.get("reference")):
                raise InputError(f"{source}: line {n}: an 'explain' inquiry needs reference_text")
        if dim == 0:
            if not available(row):
                raise InputError(f"{source}: line {n}: the original problem {pid!r} has no text")
            originals.add(pid)
        out.append(row)
    lacking = sorted({p for p, _ in seen} - originals)
    if lacking:
        raise InputError(f"{source}: problem(s) {', '.join(lacking[:5])} have no dimension-0 (original) row")
    return out


def read_inquiries(path: str | os.PathLike) -> list[dict[str, Any]]:
    return validate_rows(io.read_jsonl(path), io.display_name(path))


def write_inquiries(path: str | os.PathLike, rows: Iterable[dict[str, Any]]) -> None:
    io.write_jsonl(path, rows)


# ------------------------------------------------------------------------------------ official files
def final_answer_text(text: Any, cfg: ExtractConfig | None = None) -> str | None:
    """The final answer of a solution text or bare answer, canonical (``"$50,000"`` → ``"50000"``)."""
    if text is None:
        return None
    s = str(text)
    direct = parse_answer(s)
    ans = direct if direct.found else extract_answer(s, cfg)
    return str(ans) if ans.found else None


def read_official(path: str | os.PathLike, *, cfg: ExtractConfig | None = None) -> tuple[list[Problem], list[dict]]:
    """Problems and inquiry rows from a file in the official CogMath JSON layout."""
    name = io.display_name(path)
    data = io.read_json(path)
    if not isinstance(data, dict) or not data:
        raise InputError(f"{name}: expected a JSON object keyed by problem id (the official CogMath layout)")
    problems, rows = [], []
    for pid, entry in data.items():
        if not isinstance(entry, dict):
            raise InputError(f"{name}: problem {pid!r} is not an object")
        for field in ("ori_question", "ori_answer"):
            if not isinstance(entry.get(field), (str, int, float)) or str(entry.get(field)).strip() == "":
                raise InputError(f"{name}: problem {pid!r} lacks field '{field}'; expected the original question "
                                 "and its answer (ori_question, ori_answer)")
        answer = final_answer_text(entry["ori_answer"], cfg)
        if answer is None:
            raise InputError(f"{name}: problem {pid!r}: no final answer in ori_answer {str(entry['ori_answer'])[:60]!r}")
        q = str(entry["ori_question"]).strip()
        problems.append(Problem(str(pid), q, answer, str(entry["ori_answer"])))
        rows.append(make_row(str(pid), 0, q, "answer", answer, reference_text=str(entry["ori_answer"]),
                             judge="imported", attempts=0, source="official"))
        for dim in range(1, 10):
            block = entry.get(f"Dimension {dim}")
            if block is None:
                continue
            if not isinstance(block, dict) or not str(block.get("inquiry") or "").strip():
                raise InputError(f"{name}: problem {pid!r} 'Dimension {dim}' lacks 'inquiry'")
            inquiry = str(block["inquiry"]).strip()
            ref_text = block.get("inquiry answer")
            if dim in (1, 4):
                expected, ref = "answer", answer
            elif dim in (2, 3):
                expected, ref = "unsolvable", None
            elif dim == 8:
                if ref_text is None:
                    raise InputError(f"{name}: problem {pid!r} 'Dimension 8' lacks 'inquiry answer'")
                expected, ref = "explain", final_answer_text(ref_text, cfg)
            else:
                if ref_text is None:
                    raise InputError(f"{name}: problem {pid!r} 'Dimension {dim}' lacks 'inquiry answer'")
                expected, ref = "answer", final_answer_text(ref_text, cfg)
                if ref is None:
                    raise InputError(f"{name}: problem {pid!r} 'Dimension {dim}': no final answer in "
                                     f"'inquiry answer' {str(ref_text)[:60]!r}")
            rows.append(make_row(str(pid), dim, inquiry, expected, ref,
                                 reference_text=None if ref_text is None else str(ref_text), judge="imported",
                                 attempts=0, source="official"))
    return problems, rows


def read_problems(path: str | os.PathLike, *, cfg: ExtractConfig | None = None) -> list[Problem]:
    """Plain problems from JSONL/CSV rows with an id, a question and an answer."""
    name = io.display_name(path)
    fmt = io.detect_format(path, default="jsonl")
    records = io.read_jsonl(path) if fmt == "jsonl" else tables.read_table(path).records()
    if not records:
        raise InputError(f"{name}: no problems")
    out, seen = [], set()
    for n, r in enumerate(records, start=1):
        if not isinstance(r, dict):
            raise InputError(f"{name}: line {n} is not an object")
        q = next((r[k] for k in ("question", "problem", "ori_question") if r.get(k)), None)
        a = next((r[k] for k in ("answer", "solution", "ori_answer") if r.get(k) is not None), None)
        if q is None or a is None:
            raise InputError(f"{name}: line {n} lacks {'question' if q is None else 'answer'}; expected fields "
                             "id, question, answer")
        pid = str(r.get("id", f"p{n - 1}"))
        if pid in seen:
            raise InputError(f"{name}: line {n}: duplicate id {pid!r}")
        seen.add(pid)
        ans = final_answer_text(a, cfg)
        if ans is None:
            raise InputError(f"{name}: line {n}: no final answer in {str(a)[:60]!r}")
        out.append(Problem(pid, str(q).strip(), ans, str(a)))
    return out
