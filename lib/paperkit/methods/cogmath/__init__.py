"""CogMath (Liu et al., ICML 2025): nine-dimension evaluation of LLMs' mathematical ability.

Public API:

* problems and inquiries — :func:`synthetic.generate` (program-backed problems + rule agents),
  :func:`sources.read_official`, :func:`sources.read_problems`, :func:`sources.read_inquiries`,
  :func:`agents.llm_inquiries` (LLM Inquiry–Judge–Reference agents);
* answering — :mod:`backends` (openai, shell, hf, rule, replay) with the response cache :mod:`cache`;
* scoring — :mod:`extract` (answer extraction, refusals), :mod:`scoring` (mastery, PR, RPR,
  overestimation), :func:`run.evaluate`; orchestration of the commands in :mod:`run`; :mod:`report` (tables, plot).
"""

from paperkit.methods.cogmath.dimensions import DIMENSIONS, STAGES, Dimension
from paperkit.methods.cogmath.extract import (
    Answer,
    ExtractConfig,
    answers_match,
    equivalent,
    extract_answer,
    is_refusal,
    parse_answer,
)
from paperkit.methods.cogmath.scoring import score_row, summarize

__all__ = ["DIMENSIONS", "STAGES", "Answer", "Dimension", "ExtractConfig", "answers_match", "equivalent",
           "extract_answer", "is_refusal", "parse_answer", "score_row", "summarize"]
