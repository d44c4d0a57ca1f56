"""A template-aware rule solver: reads problems written in the generator's sentence grammar back into
programs and solves them — the reference "model under test" of CogMath's mock-model checks.

It sees only text. A sentence it cannot read makes it answer that the problem cannot be understood
(so a shuffled D2 text is refused), a quantity written as "some" makes it say a condition is missing
(D3), a sentence about someone else's things is ignored (D4), a "the word X means Y" preface changes
the meaning of the concept word (D7), "right after she …" asks for the intermediate value (D8), and
``In the problem "…", the answer is N. What is the value of x?`` is solved for ``x`` with sympy (D9).

Failure modes (``FAILURE_MODES``) make it a model with a known weakness, so that the evaluation can
be checked against a known answer: ``literal`` ignores redefinitions (fails D7), ``distracted`` adds
every quantity it reads (fails D4), ``no_refusal`` guesses instead of refusing (fails D2/D3),
``no_backward`` repeats the stated answer for backward questions (fails D9), ``no_intermediate``
gives the final answer when asked for a step (fails D8), ``off_by_one`` adds one to every final
answer (fails everything numeric). The memoriser lives in :mod:`.backends` (it needs the originals).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from paperkit.methods.cogmath import program
from paperkit.methods.cogmath.extract import format_number, numbers_in, parse_answer
from paperkit.methods.cogmath.program import Program

FAILURE_MODES = ("literal", "distracted", "no_refusal", "no_backward", "no_intermediate", "off_by_one")

_NUMWORD = "|".join(program._SMALL_WORDS)
_NUM = rf"(?:\d[\d,]*(?:\.\d+)?|x|some|{_NUMWORD})"
_SLOT_RE = {
    "Name": r"(?P<name>[A-Z][a-z]+)", "Pron": r"(?:She|He)", "pron": r"(?:she|he)", "pos": r"(?:her|his)",
    "Pos": r"(?:Her|His)", "item": r"(?P<item>[a-z]+)", "container": r"[a-z]+", "gain_verb": r"[a-z]+",
    "buy_verb": r"[a-z]+", "relative": r"[a-z]+", "group": r"[a-z]+", "place": r"[a-z]+", "other_item": r"[a-z]+",
    "a": rf"(?P<a>{_NUM})", "g": rf"(?P<g>{_NUM})", "e": rf"(?P<e>{_NUM})", "d": rf"(?P<d>{_NUM})",
    "word": r"(?P<word>double|triple|half|a third|a quarter)",
}
_PCT = r"(?P<p>(?:\d+(?:\.\d+)?|x)(?:%| percent)|some)"
_PRICE = r"(?P<p>\$(?:\d[\d,]*(?:\.\d+)?|x)|some money)"


def _compile(template: str, extra: dict[str, str] | None = None) -> str:
    slots = {**_SLOT_RE, **(extra or {})}
    out, i = [], 0
    for m in re.finditer(r"\{(\w+)\}", template):
        out.append(re.escape(template[i:m.start()]))
        name = m.group(1)
        pattern = slots[name]
        # a named group may appear once per regex; later uses must match the same text
        group = re.match(r"\(\?P<(\w+)>", pattern)
        if group and f"(?P<{group.group(1)}>" in "".join(out):
            pattern = f"(?P={group.group(1)})"
        out.append(pattern)
        i = m.end()
    out.append(re.escape(template[i:]))
    return "".join(out)


_OPENING = r"(?:(?:She|He)(?: then)?|After that, (?:she|he))"
_INIT_RES = [re.compile("^" + _compile(t) + "$") for t in program.INIT_TEMPLATES]
_STEP_RES: list[tuple[str, re.Pattern]] = []
for _kind, _clauses in program.STEP_CLAUSES.items():
    for _c in _clauses:
        extra = {"p": _PCT} if _kind == "lose_pct" else None
        _STEP_RES.append((_kind, re.compile(rf"^{_OPENING} (?P<clause>{_compile(_c, extra)})\.$")))
_DISTRACTOR_RES = [re.compile("^" + _compile(t) + "$") for t in program.DISTRACTOR_TEMPLATES]
_QUESTION_RES: list[tuple[str, re.Pattern]] = []
for _kind, _qs in program.QUESTION_TEMPLATES.items():
    for _q in _qs:
        _QUESTION_RES.append((_kind, re.compile("^" + _compile(_q, {"p": _PRICE}) + "$")))
_INTERMEDIATE_RE = re.compile(r"^How many (?P<item>[a-z]+) does (?P<name>[A-Z][a-z]+) have right after (?:she|he) "
                              r"(?P<clause>.+)\?$")
_BACKWARD_RE = re.compile(r'^In the problem "(?P<inner>.+)", the answer is (?P<ans>.+?)\. What is the value of x\?$',
                          re.S)
_REDEFINE_RE = re.compile(r'^Assume that in this problem the word "(?P<word>[a-z ]+)" means (?P<phrase>[^.]+)\.\s*')
_SENTENCE_SPLIT = re.compile(r"(?<=[.?!])\s+(?=[A-Z\"])")
_FRACTION_WORDS = {"half": Fraction(1, 2), "third": Fraction(1, 3), "quarter": Fraction(1, 4), "fifth": Fraction(1, 5)}


class Unreadable(Exception):
    """The text is not in the grammar this solver reads."""


class Missing(Exception):
    """A quantity the answer depends on is not given."""


@dataclass
class Parsed:
    program: Program
    distractor_numbers: list[Any]
    symbolic: bool


def _amount(token: str) -> Any:
    t = token.strip().replace(",", "").replace("$", "").replace(" percent", "").replace("%", "")
    if t in ("some", "some money"):
        return None
    if t == "x":
        import sympy

        return sympy.Symbol("x")
    if t in program._SMALL_WORDS:
        return Fraction(program._SMALL_WORDS.index(t))
    return Fraction(t)


def _phrase_value(phrase: str) -> Fraction | None:
    p = phrase.strip().lower()
    m = re.fullmatch(r"multiplying by (\w+)", p)
    if m:
        p = m.group(1)
    m = re.fullmatch(r"(?:one|a) (half|third|quarter|fifth)", p)
    if m:
        return _FRACTION_WORDS[m.group(1)]
    if p in program._SMALL_WORDS:
        return Fraction(program._SMALL_WORDS.index(p))
    try:
        return Fraction(p)
    except ValueError:
        return None


def parse_problem(text: str) -> Parsed:
    """Read a problem in the generator's grammar into a program (raises Unreadable)."""
    redefinition = None
    m = _REDEFINE_RE.match(text)
    if m:
        value = _phrase_value(m.group("phrase"))
        if value is None or m.group("word") not in program.MEANINGS:
            raise Unreadable(f"cannot read the redefinition {m.group(0).strip()!r}")
        redefinition = (m.group("word"), m.group("phrase"), value)
        text = text[m.end():]
    sentences = [s.strip() for s in _SENTENCE_SPLIT.split(text.strip()) if s.strip()]
    if len(sentences) < 2:
        raise Unreadable("too few sentences")
    first = None
    for r in _INIT_RES:
        first = r.match(sentences[0])
        if first:
            break
    if first is None:
        raise Unreadable(f"cannot read the first sentence {sentences[0]!r}")
    name, item = first.group("name"), first.group("item")
    steps = [program.Step("init", (_amount(first.group("a")),))]
    clauses = [""]
    distractors: list[Any] = []
    # the question is the last sentence, or the last two (share/money setups)
    question = None
    for n_q in (1, 2):
        if len(sentences) - n_q < 1:
            break
        qtext = " ".join(sentences[-n_q:])
        for kind, r in _QUESTION_RES:
            qm = r.match(qtext)
            if qm and qm.group("item") == item and ("name" not in qm.groupdict() or qm.group("name") in (None, name)):
                amount = _amount(qm.group("a")) if kind == "share" else (
                    _amount(qm.group("p")) if kind == "money" else None)
                question = (program.Question(kind, amount), n_q)
                break
        if question:
            break
    intermediate_clause = None
    if question is None:
        im = _INTERMEDIATE_RE.match(sentences[-1])
        if im is None or im.group("item") != item or im.group("name") != name:
            raise Unreadable(f"cannot read the question {sentences[-1]!r}")
        intermediate_clause = im.group("clause")
        question = (program.Question("count"), 1)
    body = sentences[1:len(sentences) - question[1]]
    for s in body:
        for kind, r in _STEP_RES:
            sm = r.match(s)
            if sm and sm.group("item") == item:
                gd = sm.groupdict()
                if kind in ("gain", "lose", "gain_dozen"):
                    amounts = (_amount(gd["a"]),)
                elif kind == "gain_groups":
                    amounts = (_amount(gd["g"]), _amount(gd["e"]))
                elif kind == "lose_pct":
                    amounts = (_amount(gd["p"]),)
                else:
                    amounts = ()
                word = "dozen" if kind == "gain_dozen" else gd.get("word") if kind in program.WORD_KINDS else None
                steps.append(program.Step(kind, amounts, word))
                clauses.append(sm.group("clause"))
                break
        else:
            for r in _DISTRACTOR_RES:
                dm = r.match(s)
                if dm:
                    distractors.append((len(steps) - 1, _amount(dm.group("d"))))
                    break
            else:
                raise Unreadable(f"cannot read the sentence {s!r}")
    intermediate = None
    if intermediate_clause is not None:
        if intermediate_clause not in clauses[1:]:
            raise Unreadable(f"the question refers to no step: {intermediate_clause!r}")
        intermediate = clauses.index(intermediate_clause)
    lex = program.Lexicon(name, "f", item, "", "", "", "", "", "", "")
    prog = Program(tuple(steps), question[0], lex, redefinition=redefinition, intermediate=intermediate)
    symbolic = any(not isinstance(v, Fraction) and v is not None for v in prog.inputs())
    return Parsed(prog, distractors, symbolic)


def missing_inputs(prog: Program) -> list[tuple[int, int]]:
    return [s for s in prog.slots() if prog.get(s) is None]


def depends_on_missing(prog: Program) -> bool:
    """Whether the answer depends on the missing inputs: exact evaluation at two points proves it when the
    values differ; otherwise sympy decides."""
    missing = missing_inputs(prog)
    if not missing:
        return False
    results = []
    for fill_value in (Fraction(7), Fraction(13)):
        p = prog
        for slot in missing:
            p = p.set(slot, fill_value)
        try:
            results.append(program.execute(p))
        except ZeroDivisionError:
            results.append(None)
    if None not in results and results[0] != results[1]:
        return True
    return bool(symbolic_answer(prog).free_symbols)


def symbolic_answer(prog: Program) -> Any:
    """The answer as a sympy expression, with every missing input a fresh symbol."""
    import sympy

    out = prog
    for k, slot in enumerate(prog.slots()):
        v = prog.get(slot)
        if v is None:
            v = sympy.Symbol(f"m{k}")
        elif isinstance(v, Fraction):
            v = sympy.Rational(v.numerator, v.denominator)
        out = out.set(slot, v)
    meanings = {k: sympy.Rational(v.numerator, v.denominator) for k, v in program.MEANINGS.items()}
    if prog.redefinition is not None:
        w, _, val = prog.redefinition
        meanings[w] = sympy.Rational(val.numerator, val.denominator)
    value = program.execute(replace(out, redefinition=None), meanings)
    # the program computes with Fractions and sympy objects; convert explicitly (no string is ever parsed)
    if isinstance(value, Fraction):
        return sympy.Rational(value.numerator, value.denominator)
    if isinstance(value, int):
        return sympy.Integer(value)
    if not isinstance(value, sympy.Basic):
        raise TypeError(f"program value of type {type(value).__name__} is not a number")
    return value


def solve_backward(prog: Program, answer: Fraction) -> list[Fraction]:
    """Rational solutions for ``x`` of ``answer(prog) == answer``, exactly (sympy).

    The answer is a rational function of ``x``; its numerator after clearing denominators is a
    polynomial whose roots (that do not zero the denominator) are the solutions.
    """
    import sympy

    x = sympy.Symbol("x")
    diff = sympy.together(symbolic_answer(prog) - sympy.Rational(answer.numerator, answer.denominator))
    num, den = sympy.fraction(diff)
    if x not in num.free_symbols:
        return []
    poly = sympy.Poly(num, x)
    if poly.degree() == 1:
        c1, c0 = poly.all_coeffs()
        roots = [-c0 / c1]
    else:
        roots = [r for r in sympy.roots(poly) if r.is_Rational]
    return [Fraction(int(r.p), int(r.q)) for r in roots if r.is_Rational and den.subs(x, r) != 0]


# -------------------------------------------------------------------------------------------- solving
REFUSE_UNREADABLE = "I cannot make sense of this text: it is not a well-formed problem, so it cannot be solved."
REFUSE_MISSING = "The problem cannot be solved: a quantity it needs is not given (not enough information)."


def _answer_lines(prog: Program, final: Fraction) -> str:
    body = program.solution_text(prog).rsplit("\n", 1)[0]
    return f"Let's work through it.\n{body}\n#### {format_number(final)}"


def solve(text: str, failures: Iterable[str] = ()) -> str:
    """A full response (reasoning lines and ``#### answer``, or a refusal) to one problem text."""
    fails = set(failures)
    bad = fails - set(FAILURE_MODES)
    if bad:
        raise ValueError(f"unknown failure mode(s) {sorted(bad)}")
    text = " ".join(text.split())
    bm = _BACKWARD_RE.match(text)
    if bm:
        stated = parse_answer(bm.group("ans"))
        if "no_backward" in fails and stated.exact is not None:
            return f"The answer is given: #### {format_number(stated.exact)}"
        try:
            parsed = parse_problem(bm.group("inner"))
        except Unreadable:
            return _guess(text) if "no_refusal" in fails else REFUSE_UNREADABLE
        if stated.exact is None or missing_inputs(parsed.program):
            return REFUSE_MISSING
        sols = solve_backward(parsed.program, stated.exact)
        if len(sols) != 1:
            return "The value of x cannot be determined uniquely, so the problem cannot be solved."
        x = sols[0] + (1 if "off_by_one" in fails else 0)
        return f"Setting the problem's answer equal to {format_number(stated.exact)} and solving for x gives " \
               f"x = {format_number(sols[0])}.\n#### {format_number(x)}"
    try:
        parsed = parse_problem(text)
    except Unreadable:
        return _guess(text) if "no_refusal" in fails else REFUSE_UNREADABLE
    prog = parsed.program
    if "literal" in fails:
        prog = replace(prog, redefinition=None)
    if "no_intermediate" in fails and prog.intermediate is not None:
        prog = replace(prog, intermediate=None)
    if "distracted" in fails and parsed.distractor_numbers:
        steps = list(prog.steps)
        for pos, d in sorted(parsed.distractor_numbers, reverse=True):
            steps.insert(pos + 1, program.Step("gain", (d,)))
        shift = sum(1 for pos, _ in parsed.distractor_numbers if prog.intermediate is not None
                    and pos < prog.intermediate)
        prog = replace(prog, steps=tuple(steps),
                       intermediate=None if prog.intermediate is None else prog.intermediate + shift)
    if missing_inputs(prog) or parsed.symbolic:
        if "no_refusal" not in fails:
            return REFUSE_MISSING
        for slot in prog.slots():
            if not isinstance(prog.get(slot), Fraction):
                prog = prog.set(slot, Fraction(1))
    if prog.intermediate is None and prog.question.kind == "share" and prog.question.amount == 0:
        return REFUSE_MISSING
    final = program.execute(prog)
    if "off_by_one" in fails:
        final += 1
    return _answer_lines(prog, final)


def _guess(text: str) -> str:
    nums = numbers_in(text)
    guess = nums[-1].exact if nums else Fraction(0)
    return f"Taking the numbers as they come, my best guess is {format_number(guess)}.\n#### {format_number(guess)}"
