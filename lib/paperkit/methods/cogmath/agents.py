"""LLM agents: the Inquiry–Judge–Reference loop of CogMath (§3.2) run with any backend.

Rounds over all pending (problem, dimension) pairs, so each round is one batch per agent (concurrent
on HTTP backends):

1. the **Inquiry agent** gets the dimension's prompt (``agents.inquiry.<i>``) and answers in the
   paper's Thought/Action format; the proposal is the text after the last ``Action:``;
2. the **Judge agent** (``agents.judge.<i>``) answers Yes/No; a No (or an empty/identical proposal)
   sends the pair to the next round, whose Inquiry prompt carries the attempt number and every rejected
   proposal with the Judge's reasoning (``agents.retry_note``), up to ``max_retries`` rounds; a pair
   never accepted is recorded as missing, as the paper tolerates gaps;
3. the **Reference agent** gives a_i: for D5, D6, D7 and D9 it solves the accepted inquiry and its
   final answer is extracted (no answer → rejected, retried); for D8 it answers the question about the
   solution (an ``explain`` reference). D1 and D4 keep A; D2 and D3 expect a refusal.

Dimension 2 (sentence disruption) is a seeded word shuffle checked by rule (a permutation of P's words
in a different order), as a shuffle needs no language model.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from paperkit.methods.cogmath.backends import CachedBackend
from paperkit.methods.cogmath.extract import extract_answer
from paperkit.methods.cogmath.prompts import Prompts, fill
from paperkit.methods.cogmath.scoring import judge_verdict
from paperkit.methods.cogmath.sources import Problem, make_row
from paperkit.methods.cogmath.synthetic import shuffle_words

_ACTION = re.compile(r"action\s*:\s*", re.I)
_MAX_REASON = 400  # characters of the Judge's reasoning shown to the Inquiry agent on a retry
_MAX_CANDIDATE = 1000  # characters of a rejected proposal shown on a retry
log = logging.getLogger(__name__)


def parse_action(text: str | None) -> str | None:
    """The text after the last ``Action:`` (quotes and markdown stripped), or None."""
    if not text:
        return None
    parts = _ACTION.split(text)
    if len(parts) < 2:
        return None
    out = parts[-1].strip().strip("*").strip()
    if len(out) >= 2 and out[0] == out[-1] and out[0] in "\"'":
        out = out[1:-1].strip()
    return out or None


def _shuffle_row(p: Problem, rng: np.random.Generator, max_retries: int) -> dict[str, Any]:
    for attempt in range(1, max_retries + 1):
        text = shuffle_words(p.question, rng)
        if text != p.question and sorted(text.split()) == sorted(p.question.split()):
            return make_row(p.id, 2, text, "unsolvable", None, attempts=attempt, source="llm")
    return make_row(p.id, 2, None, "unsolvable", None, judge="rejected", attempts=max_retries,
                    notes="rejected: word order could not be changed", source="llm")


def _judge_reason(text: str | None) -> str:
    """The Judge's reasoning (its text before the last ``Action:``), one line, for the retry prompt."""
    body = _ACTION.split(text or "")
    reason = body[0] if len(body) < 2 else "Action:".join(body[:-1])
    reason = re.sub(r"^\s*thought\s*:\s*", "", reason, flags=re.I)
    reason = " ".join(reason.split())
    if len(reason) > _MAX_REASON:
        reason = reason[:_MAX_REASON - 3].rstrip() + "..."
    return reason or "the Judge said No"


def _rejections(history: Sequence[tuple[int, str | None, str]]) -> str:
    lines = []
    for attempt, cand, reason in history:
        shown = "(no proposal)" if cand is None else " ".join(cand.split())
        if len(shown) > _MAX_CANDIDATE:
            shown = shown[:_MAX_CANDIDATE - 3].rstrip() + "..."
        lines.append(f"Attempt {attempt} proposed: {shown}\nIt was rejected because: {reason}")
    return "\n".join(lines)


def llm_inquiries(problems: Sequence[Problem], backend: CachedBackend, prompts: Prompts, *, seed: int = 0,
                  max_retries: int = 3, dimensions: Sequence[int] = tuple(range(1, 10)),
                  tick: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """Inquiry rows for ``problems`` made by LLM agents through ``backend``.

    From the second attempt on, the Inquiry agent's prompt carries the ``retry_note``: the attempt
    number and every earlier rejected proposal of that (problem, dimension) with the reason (the
    Judge's reasoning, a missing ``Action:``, an unchanged problem, or a Reference agent that reached no
    answer). Each attempt is therefore a new prompt, never a cache hit of the previous one. An attempt
    that failed only because a call failed (HTTP error, timeout) repeats the same prompts: failed calls
    are not cached, so that is a real retry.
    """
    from paperkit.core.seeding import spawn_seeds

    cfg = prompts.extraction
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    notes: dict[tuple[str, int], list[str]] = {}
    history: dict[tuple[str, int], list[tuple[int, str | None, str]]] = {}
    by_id = {p.id: p for p in problems}
    seeds = spawn_seeds(seed, len(problems))
    for p, s in zip(problems, seeds, strict=True):
        rows[(p.id, 0)] = make_row(p.id, 0, p.question, "answer", p.answer, reference_text=p.solution or None,
                                   attempts=0, source="llm")
        if 2 in dimensions:
            rows[(p.id, 2)] = _shuffle_row(p, np.random.default_rng(int(s)), max_retries)
    pending = [(p.id, d) for p in problems for d in dimensions if d != 2]
    for attempt in range(1, max_retries + 1):
        if not pending:
            break

        def values(key: tuple[str, int], candidate: str | None = None, attempt: int = attempt) -> dict[str, Any]:
            p = by_id[key[0]]
            seen = history.get(key)
            note = fill(prompts.agent("retry_note"), attempt=attempt, rejections=_rejections(seen)) if seen else ""
            return {"question": p.question, "answer": p.answer, "solution": p.solution or p.answer,
                    "candidate": candidate, "note": note}

        def reject(key: tuple[str, int], cand: str | None, reason: str, note: str, attempt: int = attempt) -> None:
            history.setdefault(key, []).append((attempt, cand, reason))
            notes.setdefault(key, []).append(note)

        proposals = backend.complete([fill(prompts.agent("inquiry", d), **values((pid, d))) for pid, d in pending])
        proposed = []
        for key, c in zip(pending, proposals, strict=True):
            cand = parse_action(c.text)
            if c.error is not None:
                notes.setdefault(key, []).append(f"inquiry agent failed: {c.error}")
            elif cand is None:
                reject(key, None, 'the reply had no "Action:" followed by a proposal', "no usable proposal")
            elif cand.strip() == by_id[key[0]].question.strip():
                reject(key, cand, "it repeats the original problem unchanged", "no usable proposal")
            else:
                proposed.append((key, cand))
        verdicts = backend.complete([fill(prompts.agent("judge", k[1]), **values(k, cand)) for k, cand in proposed])
        accepted = []
        for (key, cand), v in zip(proposed, verdicts, strict=True):
            verdict = judge_verdict(v.text)
            if verdict:
                accepted.append((key, cand))
            elif v.error is not None:
                notes.setdefault(key, []).append(f"judge failed: {v.error}")
            elif verdict is None:
                reject(key, cand, "the Judge gave no Yes/No verdict on it", "judge gave no verdict")
            else:
                reject(key, cand, _judge_reason(v.text), "judge said no")
        needs_ref = [(k, cand) for k, cand in accepted if k[1] in (5, 6, 7, 8, 9)]
        ref_prompts = [fill(prompts.agent("reference_explain" if k[1] == 8 else "reference"), **values(k, cand))
                       for k, cand in needs_ref]
        refs = dict(zip([k for k, _ in needs_ref], backend.complete(ref_prompts), strict=True))
        still = set(pending)
        for key, cand in accepted:
            pid, d = key
            p = by_id[pid]
            extra = "; ".join(f"rejected: {n}" for n in notes.get(key, []))
            if d in (1, 4):
                row = make_row(pid, d, cand, "answer", p.answer, attempts=attempt, notes=extra, source="llm")
            elif d == 3:
                row = make_row(pid, d, cand, "unsolvable", None, attempts=attempt, notes=extra, source="llm")
            else:
                ref = refs[key]
                if ref.error is not None:
                    notes.setdefault(key, []).append(f"reference agent failed: {ref.error}")
                    continue
                final = extract_answer(ref.text, cfg) if ref.text else None
                if final is None or not final.found:
                    reject(key, cand, "solving it step by step reached no final answer", "reference agent gave no answer")
                    continue
                row = make_row(pid, d, cand, "explain" if d == 8 else "answer", str(final),
                               reference_text=ref.text, attempts=attempt, notes=extra, source="llm")
            rows[key] = row
            still.discard(key)
        pending = [k for k in pending if k in still]
        if tick:
            tick(0)
    for pid, d in pending:
        rows[(pid, d)] = make_row(pid, d, None, "unsolvable" if d in (2, 3) else "answer", None, judge="rejected",
                                  attempts=max_retries, source="llm",
                                  notes="; ".join(f"rejected: {n}" for n in notes.get((pid, d), [])))
    _warn_missing(rows, len(problems), [d for d in dimensions if d != 0], max_retries)
    order = {p.id: i for i, p in enumerate(problems)}
    return [rows[k] for k in sorted(rows, key=lambda k: (order[k[0]], k[1]))]


def _warn_missing(rows: dict[tuple[str, int], dict[str, Any]], n_problems: int, dimensions: Sequence[int],
                  max_retries: int) -> None:
    """Log how many inquiries the agents never got accepted (a warning when it is half or more)."""
    missing: dict[int, int] = {}
    for (_, d), r in rows.items():
        if d > 0 and r["inquiry"] is None:
            missing[d] = missing.get(d, 0) + 1
    total = n_problems * len(dimensions)
    n = sum(missing.values())
    if not n:
        return
    per = ", ".join(f"D{d}: {missing[d]}" for d in sorted(missing))
    if 2 * n >= total:
        log.warning("%d of %d inquiries were never accepted in %d attempts and are missing (%s); is the agent "
                    "backend a capable instruction-following model?", n, total, max_retries, per)
    else:
        log.info("%d of %d inquiries were never accepted in %d attempts and are missing (%s)", n, total,
                 max_retries, per)
