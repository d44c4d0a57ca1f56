"""The nine CogMath dimensions and three stages (Liu et al., ICML 2025, §3 and Table 1).

Each dimension turns a problem P with answer A into an inquiry q_i with an expected outcome:

* ``same``        — the answer stays A (D1 paraphrasing, D4 redundant condition);
* ``unsolvable``  — the model should say the problem cannot be solved (D2 disruption, D3 missing condition);
* ``recomputed``  — a new reference answer a_i, produced by the Reference agent (D5–D7, D9);
* ``explain``     — D8 intermediate-step questioning: a reference explanation, judged (rule or LLM); the
  offline generator asks for a named intermediate quantity instead, which has an exact numeric reference.

Dimension 0 is the original problem itself (stage 0).
"""

from __future__ import annotations

from dataclasses import dataclass

from paperkit.core.errors import InputError


@dataclass(frozen=True)
class Dimension:
    index: int
    key: str
    title: str
    stage: int
    outcome: str  # same | unsolvable | recomputed | explain | original


DIMENSIONS: tuple[Dimension, ...] = (
    Dimension(0, "original", "Original problem", 0, "original"),
    Dimension(1, "paraphrasing", "Sentence Paraphrasing", 1, "same"),
    Dimension(2, "disruption", "Sentence Disruption", 1, "unsolvable"),
    Dimension(3, "missing_condition", "Missing Condition", 1, "unsolvable"),
    Dimension(4, "redundant_condition", "Redundant Condition", 1, "same"),
    Dimension(5, "analogical", "Analogical Reasoning", 2, "recomputed"),
    Dimension(6, "numerical", "Numerical Transformation", 2, "recomputed"),
    Dimension(7, "redefinition", "Knowledge Redefinition", 2, "recomputed"),
    Dimension(8, "intermediate_step", "Intermediate Step Questioning", 3, "explain"),
    Dimension(9, "backward", "Backward Reasoning", 3, "recomputed"),
)
INQUIRY_DIMENSIONS: tuple[int, ...] = tuple(range(1, 10))
STAGES: dict[int, str] = {1: "problem comprehension", 2: "problem solving", 3: "solution summarization"}
UNSOLVABLE_DIMENSIONS = frozenset({2, 3})


def dimension(index: int) -> Dimension:
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index <= 9:
        raise InputError(f"dimension = {index!r} is invalid; expected an integer 0 (original) to 9")
    return DIMENSIONS[index]


def stage_dimensions(stage: int) -> tuple[int, ...]:
    return tuple(d.index for d in DIMENSIONS if d.stage == stage)
