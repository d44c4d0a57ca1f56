"""LLM agents: the Inquiry–Judge–Reference loop of CogMath (§3.2) run with any backend.

Rounds over all pending (problem, dimension) pairs, so each round is one batch per agent (concurrent
on HTTP backends):

1. the **Inquiry agent** gets the dimension's prompt (``agents.inquiry.<i>``) and answers in the
   paper's Thought/Action format; the proposal is the text after the last ``Action:``;
2. the **Judge agent** (``agents.judge.<i>``) answers Yes/No; a No (or an empty/identical proposal)
   sends the pair to the next round with a "write a different one" note, up to ``max_retries`` rounds;
   a pair never accepted is recorded as missing, as the paper tolerates gaps;
3. the **Reference agent** gives a_i: for D5, D6, D7 and D9 it solves the accepted inquiry and its
   final answer is extracted (no answer → rejected, retried); for D8 it answers the question about the
   solution (an ``explain`` reference). D1 and D4 keep A; D2 and D3 expect a refusal.

Dimension 2 (sentence disruption) is a seeded word shuffle checked by rule (a permutation of P's words
in a different order), as a shuffle needs no language model.
"""

from __future__ import annotations

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


def llm_inquiries(problems: Sequence[Problem], backend: CachedBackend, prompts: Prompts, *, seed: int = 0,
                  max_retries: int = 3, dimensions: Sequence[int] = tuple(range(1, 10)),
                  tick: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """Inquiry rows for ``problems`` made by LLM agents through ``backend``."""
    from paperkit.core.seeding import spawn_seeds

    cfg = prompts.extraction
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    notes: dict[tuple[str, int], list[str]] = {}
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
        note = fill(prompts.agent("retry_note")) if attempt > 1 else ""

        def values(key: tuple[str, int], candidate: str | None = None, note: str = note) -> dict[str, Any]:
            p = by_id[key[0]]
            return {"question": p.question, "answer": p.answer, "solution": p.solution or p.answer,
                    "candidate": candidate, "note": note}

        proposals = backend.complete([fill(prompts.agent("inquiry", d), **values((pid, d))) for pid, d in pending])
        proposed = []
        for key, c in zip(pending, proposals, strict=True):
            cand = parse_action(c.text)
            if c.error is not None:
                notes.setdefault(key, []).append(f"inquiry agent failed: {c.error}")
            elif cand is None or cand.strip() == by_id[key[0]].question.strip():
                notes.setdefault(key, []).append("no usable proposal")
            else:
                proposed.append((key, cand))
        verdicts = backend.complete([fill(prompts.agent("judge", k[1]), **values(k, cand)) for k, cand in proposed])
        accepted = []
        for (key, cand), v in zip(proposed, verdicts, strict=True):
            if judge_verdict(v.text):
                accepted.append((key, cand))
            else:
                notes.setdefault(key, []).append("judge said no" if v.error is None else f"judge failed: {v.error}")
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
                final = extract_answer(ref.text, cfg) if ref.text else None
                if ref.text is None or final is None or not final.found:
                    notes.setdefault(key, []).append("reference agent gave no answer")
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
    order = {p.id: i for i, p in enumerate(problems)}
    return [rows[k] for k in sorted(rows, key=lambda k: (order[k[0]], k[1]))]
