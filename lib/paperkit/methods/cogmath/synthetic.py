"""Rule agents: the Inquiry–Judge–Reference loop of CogMath (§3.2) over program-backed problems.

For each dimension the Inquiry agent proposes q_i from the problem's program (a random draw), the
Judge agent checks it meets the dimension's requirement — independently of how it was made: it reads
the text back with the rule parser and checks the property with exact arithmetic or sympy — and on
rejection the Inquiry agent tries again, up to ``max_retries`` times. A dimension still rejected is
recorded as missing (the paper tolerates gaps). The Reference agent computes a_i by executing the
program (D5–D7), the program up to a step (D8) or by solving for the masked input with sympy (D9).

What each judge checks:

* D1 the text differs and reads back to the same program (same steps, numbers and question);
* D2 the words are a permutation of the original's, in a different order, and the text is unreadable;
* D3 the answer, with the vague quantity as a symbol, depends on that symbol (a necessary condition);
* D4 the new sentence adds a quantity the answer does not use: the text reads back to answer A;
* D5 same step structure, different lexicon (theme and name), valid numbers, answer re-executed;
* D6 the same story with changed numbers and a changed answer;
* D7 the concept word occurs in P and redefining it changes the answer;
* D8 the intermediate value is neither the answer nor a given number;
* D9 ``x`` replaces a given number that differs from A, and sympy finds exactly one solution, equal to it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np

from paperkit.methods.cogmath import program, solver
from paperkit.methods.cogmath.extract import format_number
from paperkit.methods.cogmath.program import Program
from paperkit.methods.cogmath.sources import make_row


@dataclass
class Candidate:
    inquiry: str
    expected: str  # answer | unsolvable
    reference: Fraction | None
    program: Program | None = None
    notes: str = ""


@dataclass
class SyntheticProblem:
    id: str
    program: Program
    text: str
    answer: Fraction
    solution: str


def _d7_options(prog: Program) -> list[tuple[str, str, Fraction]]:
    return [(w, phrase, value) for w in sorted(set(prog.concept_words())) for phrase, value in program.REDEFINITIONS[w]]


def _positive_under(prog: Program, word: str, value: Fraction) -> bool:
    return all(v > 0 for v in program.trace(prog, {word: value}))


def _d8_steps(prog: Program) -> list[int]:
    values, answer, inputs = program.trace(prog), program.execute(prog), prog.inputs()
    clauses = program.render(prog).clauses  # a step the question can name unambiguously
    return [k for k in range(1, len(prog.steps))
            if values[k] != answer and values[k] not in inputs and clauses.count(clauses[k]) == 1]


def _d9_slots(prog: Program) -> list[tuple[int, int]]:
    answer = program.execute(prog)
    return [s for s in prog.slots() if prog.get(s) != answer]


def supports_all_dimensions(prog: Program) -> bool:
    """The program admits every dimension: a redefinable word that keeps quantities positive (D7), an
    intermediate that is neither the answer nor a given number (D8), an input that differs from the answer (D9)."""
    return (any(_positive_under(prog, w, v) for w, _, v in _d7_options(prog)) and bool(_d8_steps(prog))
            and bool(_d9_slots(prog)))


def make_problem(pid: str, rng: np.random.Generator, *, min_steps: int = 2, max_steps: int = 4,
                 tries: int = 200) -> SyntheticProblem:
    """A program-backed problem that admits all nine dimensions (redrawn until it does)."""
    for _ in range(tries):
        prog = program.random_program(rng, min_steps=min_steps, max_steps=max_steps)
        if supports_all_dimensions(prog):
            break
    return SyntheticProblem(pid, prog, program.render(prog).text, program.execute(prog), program.solution_text(prog))


# ----------------------------------------------------------------------------------- inquiry agents
def _new_variants(prog: Program, rng: np.random.Generator) -> Program:
    steps = tuple(replace(s, variant=(s.variant + 1 + int(rng.integers(2))) % 3) for s in prog.steps)
    q = replace(prog.question, variant=(prog.question.variant + 1 + int(rng.integers(2))) % 3)
    return replace(prog, steps=steps, question=q)


def propose_d1(sp: SyntheticProblem, rng: np.random.Generator) -> Candidate:
    prog = _new_variants(sp.program, rng)
    words = bool(rng.integers(2))
    return Candidate(program.render(prog, words=words).text, "answer", sp.answer, prog)


def propose_d2(sp: SyntheticProblem, rng: np.random.Generator) -> Candidate:
    return Candidate(shuffle_words(sp.text, rng), "unsolvable", None)


def shuffle_words(text: str, rng: np.random.Generator) -> str:
    tokens = text.split()
    order = rng.permutation(len(tokens))
    return " ".join(tokens[i] for i in order)


def propose_d3(sp: SyntheticProblem, rng: np.random.Generator) -> Candidate:
    slots = sp.program.slots()
    slot = slots[int(rng.integers(len(slots)))]
    prog = sp.program.set(slot, None)
    return Candidate(program.render(prog).text, "unsolvable", None, prog, notes=f"removed input {slot}")


def propose_d4(sp: SyntheticProblem, rng: np.random.Generator) -> Candidate:
    pos = int(rng.integers(len(sp.program.steps)))
    template = int(rng.integers(len(program.DISTRACTOR_TEMPLATES)))
    d = Fraction(int(rng.integers(2, 100)))
    prog = replace(sp.program, distractor=(pos, template, d))
    return Candidate(program.render(prog).text, "answer", sp.answer, prog, notes=f"distractor {format_number(d)}")


def propose_d5(sp: SyntheticProblem, rng: np.random.Generator) -> Candidate | None:
    lex = program.random_lexicon(rng, avoid_theme=sp.program.lexicon.item, avoid_name=sp.program.lexicon.name)
    prog = program.resample_numbers(replace(_new_variants(sp.program, rng), lexicon=lex), rng)
    if prog is None:
        return None
    return Candidate(program.render(prog).text, "answer", program.execute(prog), prog)


def propose_d6(sp: SyntheticProblem, rng: np.random.Generator) -> Candidate | None:
    prog = program.resample_numbers(sp.program, rng)
    if prog is None:
        return None
    return Candidate(program.render(prog).text, "answer", program.execute(prog), prog)


def propose_d7(sp: SyntheticProblem, rng: np.random.Generator) -> Candidate | None:
    # The agent picks a redefinition at random, preferring one that keeps every quantity whole (as a
    # person writing one would), else one that keeps them positive.
    options = _d7_options(sp.program)
    if not options:
        return None
    order = [options[i] for i in rng.permutation(len(options))]
    whole = [o for o in order if all(v > 0 and v.denominator == 1 for v in program.trace(sp.program, {o[0]: o[2]}))]
    positive = [o for o in order if _positive_under(sp.program, o[0], o[2])]
    word, phrase, value = (whole or positive or order)[0]
    prog = replace(sp.program, redefinition=(word, phrase, value))
    return Candidate(program.render(prog).text, "answer", program.execute(prog), prog, notes=f'"{word}" means {phrase}')


def propose_d8(sp: SyntheticProblem, rng: np.random.Generator) -> Candidate | None:
    steps = _d8_steps(sp.program) or list(range(1, len(sp.program.steps)))
    k = steps[int(rng.integers(len(steps)))]
    prog = replace(sp.program, intermediate=k)
    return Candidate(program.render(prog).text, "answer", program.execute(prog), prog, notes=f"value after step {k}")


def propose_d9(sp: SyntheticProblem, rng: np.random.Generator) -> Candidate | None:
    import sympy

    slots = _d9_slots(sp.program) or sp.program.slots()
    slot = slots[int(rng.integers(len(slots)))]
    masked = sp.program.set(slot, sympy.Symbol("x"))
    text = program.BACKWARD_TEMPLATE.replace("{problem}", program.render(masked).text).replace(
        "{answer}", program.render_number(sp.answer, money=sp.program.question.kind == "money"))
    return Candidate(text, "answer", sp.program.get(slot), masked, notes=f"masked input {slot}")


PROPOSERS: dict[int, Callable[[SyntheticProblem, np.random.Generator], Candidate | None]] = {
    1: propose_d1, 2: propose_d2, 3: propose_d3, 4: propose_d4, 5: propose_d5, 6: propose_d6, 7: propose_d7,
    8: propose_d8, 9: propose_d9,
}


# ------------------------------------------------------------------------------------- judge agents
def _reads_back(text: str) -> solver.Parsed | None:
    try:
        return solver.parse_problem(text)
    except solver.Unreadable:
        return None


def _same_semantics(a: Program, b: Program) -> bool:
    return (tuple((s.kind, s.amounts, s.word) for s in a.steps) == tuple((s.kind, s.amounts, s.word) for s in b.steps)
            and (a.question.kind, a.question.amount) == (b.question.kind, b.question.amount))


def judge(dim: int, sp: SyntheticProblem, c: Candidate) -> tuple[bool, str]:
    """Does the candidate meet dimension ``dim``'s requirement? (verdict, reason when rejected)"""
    if dim == 1:
        if c.inquiry == sp.text:
            return False, "identical to the original"
        back = _reads_back(c.inquiry)
        if back is None or not _same_semantics(back.program, sp.program):
            return False, "does not keep the original's quantities and relations"
        return True, ""
    if dim == 2:
        if sorted(c.inquiry.split()) != sorted(sp.text.split()):
            return False, "not a permutation of the original's words"
        if c.inquiry == sp.text:
            return False, "word order unchanged"
        if _reads_back(c.inquiry) is not None:
            return False, "still readable"
        return True, ""
    if dim == 3:
        back = _reads_back(c.inquiry)
        if back is None:
            return False, "unreadable"
        missing = solver.missing_inputs(back.program)
        if not missing:
            return False, "no quantity is missing"
        if not solver.depends_on_missing(back.program):
            return False, "the removed quantity is not needed"
        return True, ""
    if dim == 4:
        back = _reads_back(c.inquiry)
        if back is None or not back.distractor_numbers:
            return False, "no added condition read back"
        if program.execute(back.program) != sp.answer:
            return False, "the added condition changes the answer"
        return True, ""
    if dim in (5, 6, 7):
        back = _reads_back(c.inquiry)
        if back is None:
            return False, "unreadable"
        value = program.execute(back.program)
        if value != c.reference:
            return False, "reference disagrees with re-execution"
        if value <= 0 or (dim != 7 and value.denominator != 1 and back.program.question.kind != "money"):
            return False, f"answer {format_number(value)} is not a positive whole quantity"
        if dim == 5:
            if c.program.structure() != sp.program.structure():
                return False, "structure differs"
            if c.program.lexicon.item == sp.program.lexicon.item or c.program.lexicon.name == sp.program.lexicon.name:
                return False, "same story"
        if dim == 6:
            if back.program.inputs() == sp.program.inputs() or value == sp.answer:
                return False, "numbers or answer unchanged"
        if dim == 7:
            if back.program.redefinition is None or value == sp.answer:
                return False, "the redefinition does not change the answer"
            word, _, meaning = back.program.redefinition
            if not _positive_under(back.program, word, meaning):
                return False, "the redefinition makes a quantity non-positive"
        return True, ""
    if dim == 8:
        back = _reads_back(c.inquiry)
        if back is None or back.program.intermediate is None:
            return False, "unreadable"
        value = program.execute(back.program)
        if value != c.reference:
            return False, "reference disagrees with re-execution"
        if value == sp.answer or value in sp.program.inputs():
            return False, "the intermediate equals the answer or a given number"
        return True, ""
    if dim == 9:
        if c.reference == sp.answer:
            return False, "the masked number equals the answer"
        m = solver._BACKWARD_RE.match(c.inquiry)
        back = _reads_back(m.group("inner")) if m else None
        if back is None:
            return False, "unreadable"
        sols = solver.solve_backward(back.program, sp.answer)
        if sols != [c.reference]:
            return False, f"sympy solutions {[format_number(s) for s in sols]} are not the masked number"
        return True, ""
    raise ValueError(dim)


# ------------------------------------------------------------------------------------------ the loop
def inquiries_for(sp: SyntheticProblem, rng: np.random.Generator, *, max_retries: int = 3,
                  dimensions: tuple[int, ...] = tuple(range(1, 10))) -> list[dict[str, Any]]:
    """Rows for the original and each dimension of one problem (the Inquiry–Judge–Reference loop)."""
    rows = [make_row(sp.id, 0, sp.text, "answer", format_number(sp.answer), reference_text=sp.solution, attempts=0)]
    for dim in dimensions:
        reasons = []
        for attempt in range(1, max_retries + 1):
            cand = PROPOSERS[dim](sp, rng)
            if cand is None:
                reasons.append("no candidate")
                continue
            ok, why = judge(dim, sp, cand)
            if ok:
                ref = None if cand.reference is None else format_number(cand.reference)
                rows.append(make_row(sp.id, dim, cand.inquiry, cand.expected, ref, attempts=attempt,
                                     notes="; ".join(filter(None, [cand.notes] + [f"rejected: {r}" for r in reasons]))))
                break
            reasons.append(why)
        else:
            rows.append(make_row(sp.id, dim, None, "unsolvable" if dim in (2, 3) else "answer", None,
                                 judge="rejected", attempts=max_retries,
                                 notes="; ".join(f"rejected: {r}" for r in reasons)))
    return rows


def generate(n: int, seed: int, *, max_retries: int = 3, min_steps: int = 2, max_steps: int = 4,
             progress: Callable[[int], None] | None = None) -> tuple[list[SyntheticProblem], list[dict[str, Any]]]:
    """``n`` synthetic problems and their inquiry rows; problem i depends only on (seed, i)."""
    from paperkit.core.seeding import spawn_seeds

    problems, rows = [], []
    for i, s in enumerate(spawn_seeds(seed, n)):
        rng = np.random.default_rng(int(s))
        sp = make_problem(f"syn-{i:05d}", rng, min_steps=min_steps, max_steps=max_steps)
        problems.append(sp)
        rows.extend(inquiries_for(sp, rng, max_retries=max_retries))
        if progress is not None:
            progress(1)
    return problems, rows
