"""Scoring: per-inquiry verdicts, mastery, pass rate, relative pass rates, overestimation (CogMath §3.3).

For problem p, ``pass_0(p)`` is whether the original was answered correctly and ``pass_i(p)`` whether
inquiry i was. With ``avail(p)`` the dimensions p has (the generator or file may lack some):

* **accuracy** = |Pass_0| / N — the plain benchmark accuracy;
* **mastery**: pass_0(p) and pass_i(p) for every i in avail(p); **pass rate** PR = mastered / N;
* **overestimation** = accuracy − PR (and relative: (accuracy − PR) / accuracy);
* **relative pass rate** RPR_i = |Pass_i ∩ Pass_0| / |Pass_0|, over problems that have dimension i
  (a problem lacking i is neither in the numerator nor the denominator of RPR_i);
* per stage s: a problem passes stage s when it passes every available dimension of the stage;
  RPR_s = |Pass_s ∩ Pass_0| / |Pass_0| over problems with at least one dimension in s.

Verdicts: ``answer`` rows pass when the extracted answer equals the reference (:mod:`.extract`);
``unsolvable`` rows when the response declares the problem unsolvable and commits to no number (none
marked, and none concluding the response other than numbers the inquiry gives; :func:`.is_refusal`);
``explain`` rows (official D8) by the LLM judge (``--judge llm``, the faithful grader of a free-form
explanation), or by a rule judge, a heuristic: the response must not refuse and must state a quantity
of the reference explanation that the inquiry does not already give (official D8 questions usually
name the step's result, "Why does Mina sell exactly 18 rolls?", so repeating it proves nothing; one of
the explanation's other quantities, 24 or 6, must be stated). When the reference holds no such quantity
the rule cannot grade: status ``no_key``, not a pass. A failed backend call is an ``error`` verdict:
never a pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from paperkit.methods.cogmath.dimensions import DIMENSIONS, STAGES, stage_dimensions
from paperkit.methods.cogmath.extract import (
    Answer,
    ExtractConfig,
    answers_match,
    equivalent,
    is_refusal,
    numbers_in,
    parse_answer,
)
from paperkit.methods.cogmath.sources import available


def judge_verdict(text: str | None) -> bool | None:
    """Yes/No from a judge reply ("Action: Yes"), the last Action wins; None when there is none."""
    if not text:
        return None
    import re

    found = re.findall(r"action\s*:\s*\**\s*(yes|no)\b", text, flags=re.I)
    if found:
        return found[-1].lower() == "yes"
    words = re.findall(r"\b(yes|no)\b", text.strip().lower())
    return (words[-1] == "yes") if words else None


def score_row(row: dict[str, Any], response: str | None, error: str | None, cfg: ExtractConfig, *,
              judge_response: str | None = None, judge_error: str | None = None) -> dict[str, Any]:
    """Verdict for one inquiry: pass, status, and the extracted answer."""
    out = {"problem": row["problem"], "dimension": row["dimension"], "pass": False, "status": "", "extracted": ""}
    if error is not None or response is None:
        out["status"] = "error"
        return out
    expected = row["expected"]
    if expected == "unsolvable":
        ok = is_refusal(response, cfg, inquiry=row["inquiry"])
        out["pass"], out["status"] = ok, "refused" if ok else "answered"
        return out
    if expected == "explain":
        if judge_response is not None or judge_error is not None:
            verdict = judge_verdict(judge_response)
            if verdict is None:
                out["status"] = "judge_error"
                return out
            out["pass"], out["status"] = verdict, "judge_yes" if verdict else "judge_no"
            return out
        if not explain_keys(row):
            out["status"] = "no_key"
            return out
        ok = rule_explain(response, row, cfg)
        out["pass"], out["status"] = ok, "mentions_key" if ok else "misses_key"
        return out
    ok, got = answers_match(response, str(row["reference"]), cfg)
    out["extracted"] = str(got) if got.found else ""
    if ok:
        out["pass"], out["status"] = True, "correct"
    elif not got.found:
        out["status"] = "refused" if is_refusal(response, cfg, inquiry=row["inquiry"]) else "no_answer"
    else:
        out["status"] = "wrong"
    return out


def _given(row: dict[str, Any]) -> set:
    return {n.exact for n in numbers_in(str(row.get("inquiry") or ""))}


def explain_keys(row: dict[str, Any]) -> list[Answer]:
    """The quantities of an explain row's reference (its explanation text and final answer) that its
    inquiry does not give: what a response must use to show it knows the step."""
    given = _given(row)
    found = numbers_in(str(row.get("reference_text") or ""))
    ref = parse_answer(str(row.get("reference") or ""))
    if ref.found:
        found.append(ref)
    keys, seen = [], set()
    for n in found:
        ident = n.exact if n.exact is not None else n.expr
        if ident in given or ident in seen:
            continue
        seen.add(ident)
        keys.append(n)
    return keys


def rule_explain(response: str, row: dict[str, Any], cfg: ExtractConfig) -> bool:
    """Rule judge for free-form D8 (a heuristic; ``--judge llm`` is the faithful grader): the response
    does not refuse and states a quantity of the reference explanation that the inquiry does not give.
    Numbers the inquiry gives are ignored on both sides."""
    if is_refusal(response, cfg, inquiry=row["inquiry"]):
        return False
    keys = explain_keys(row)
    given = _given(row)
    stated = [n for n in numbers_in(response) if n.exact not in given]
    return any(equivalent(n, k, rounding=cfg.rounding) for n in stated for k in keys)


def _ratio(a: int, b: int) -> float | None:
    return None if b == 0 else round(a / b, 6)


def summarize(rows: Sequence[dict[str, Any]], scores: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The run's summary (see the module docstring); deterministic for the same verdicts."""
    verdict = {(s["problem"], s["dimension"]): bool(s["pass"]) for s in scores}
    problems = sorted({r["problem"] for r in rows if r["dimension"] == 0})
    avail: dict[str, set[int]] = {p: set() for p in problems}
    for r in rows:
        if r["dimension"] > 0 and available(r):
            avail[r["problem"]].add(r["dimension"])
    n = len(problems)
    pass0 = {p for p in problems if verdict.get((p, 0), False)}
    mastered = {p for p in pass0 if all(verdict.get((p, d), False) for d in avail[p])}
    acc, pr = _ratio(len(pass0), n), _ratio(len(mastered), n)
    dims = {}
    for d in DIMENSIONS[1:]:
        has = [p for p in problems if d.index in avail[p]]
        passed = [p for p in has if verdict.get((p, d.index), False)]
        base = [p for p in has if p in pass0]
        dims[str(d.index)] = {
            "key": d.key, "title": d.title, "stage": d.stage, "n": len(has), "passed": len(passed),
            "pass_rate": _ratio(len(passed), len(has)),
            "rpr": _ratio(sum(1 for p in base if verdict.get((p, d.index), False)), len(base)),
        }
    stages = {}
    for s, title in STAGES.items():
        sd = stage_dimensions(s)
        has = [p for p in problems if avail[p] & set(sd)]
        base = [p for p in has if p in pass0]
        ok = [p for p in base if all(verdict.get((p, d), False) for d in avail[p] & set(sd))]
        stages[str(s)] = {"title": title, "dimensions": list(sd), "n": len(has), "rpr": _ratio(len(ok), len(base))}
    errors = sum(1 for s in scores if s["status"] in ("error", "judge_error"))
    missing = sum(9 - len(avail[p]) for p in problems)
    return {
        "n_problems": n, "n_inquiries": sum(1 for r in rows if r["dimension"] > 0 and available(r)),
        "n_missing_dimensions": missing, "n_errors": errors,
        "accuracy": acc, "pass_rate": pr,
        "overestimation": None if acc is None else round(acc - pr, 6),
        "overestimation_relative": None if not acc else round((acc - pr) / acc, 6),
        "dimensions": dims, "stages": stages,
    }



