"""The evaluation run: prompts for every available inquiry, answers from a backend, verdicts, summary."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from paperkit.methods.cogmath.backends import CachedBackend
from paperkit.methods.cogmath.prompts import Prompts, fill
from paperkit.methods.cogmath.scoring import score_row, summarize
from paperkit.methods.cogmath.sources import available


@dataclass
class EvalResult:
    responses: list[dict[str, Any]]
    scores: list[dict[str, Any]]
    summary: dict[str, Any]


def build_prompts(rows: Sequence[dict[str, Any]], prompts: Prompts) -> list[tuple[int, str]]:
    """(row index, prompt) for every available row, in file order."""
    return [(i, fill(prompts.solve, inquiry=r["inquiry"])) for i, r in enumerate(rows) if available(r)]


def evaluate(rows: Sequence[dict[str, Any]], backend: CachedBackend, prompts: Prompts, *, judge: str = "rule",
             judge_backend: CachedBackend | None = None, tick: Callable[[int], None] | None = None) -> EvalResult:
    """Ask ``backend`` every available inquiry and score the answers.

    ``judge='llm'`` sends free-form (explain) answers to ``judge_backend`` (default: ``backend``) with the
    ``score_judge`` prompt; numeric and unsolvable inquiries are always scored by rule.
    """
    cfg = prompts.extraction
    todo = build_prompts(rows, prompts)
    done: dict[int, Any] = {}

    def on_done(j: int, c: Any) -> None:
        done[j] = c
        if tick:
            tick(1)

    completions = backend.complete([p for _, p in todo], on_done=on_done)
    judged: dict[int, Any] = {}
    if judge == "llm":
        jb = judge_backend or backend
        jobs = [(k, fill(prompts.score_judge, inquiry=rows[i]["inquiry"],
                         reference=rows[i].get("reference_text") or rows[i].get("reference"),
                         response=completions[k].text))
                for k, (i, _) in enumerate(todo) if rows[i]["expected"] == "explain" and completions[k].text is not None]
        if jobs:
            jc = jb.complete([p for _, p in jobs])
            judged = {k: c for (k, _), c in zip(jobs, jc, strict=True)}
    responses, scores = [], []
    for k, (i, prompt) in enumerate(todo):
        r, c = rows[i], completions[k]
        j = judged.get(k)
        resp = {"problem": r["problem"], "dimension": r["dimension"], "key": backend.key(prompt),
                "response": c.text, "error": c.error}
        if j is not None:
            resp["judge_response"], resp["judge_error"] = j.text, j.error
        responses.append(resp)
        scores.append(score_row(r, c.text, c.error, cfg, judge_response=None if j is None else j.text,
                                judge_error=None if j is None else (j.error or None)))
    for s in scores:
        s["pass"] = int(bool(s["pass"]))
    return EvalResult(responses, scores, summarize(rows, scores))
