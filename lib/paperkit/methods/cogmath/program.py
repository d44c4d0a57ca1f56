"""GSM8K-style word problems as small programs: the offline problem source of CogMath.

The paper runs its nine inquiries on GSM8K/MATH/MExam with GPT-4 agents. Offline we need problems whose
every inquiry has an *exact* reference, so a problem here is a program — a starting quantity, a chain
of steps, a question — rendered to English from sentence templates over a lexicon (a name, an item, a
container, verbs). Because the text comes from a program:

* the answer, every named intermediate (D8) and any re-executed variant (D5 new lexicon and numbers,
  D6 new numbers, D7 a redefined concept word) are computed exactly with :class:`fractions.Fraction`;
* masking an input as ``x`` (D9) gives a sympy expression that is solved for ``x``;
* a missing quantity (D3) becomes a free symbol, so "unsolvable" is checked, not assumed.

The sentence grammar (``STEP_TEMPLATES`` and friends) is shared with the template-aware rule solver
(:mod:`.solver`), which reads the text back; the generator never hands the solver anything but text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from paperkit.methods.cogmath.extract import format_number

# ---------------------------------------------------------------------------------------- the lexicon
# (item plural, container plural, gain verb, buy verb)
THEMES: tuple[tuple[str, str, str, str], ...] = (
    ("apples", "baskets", "picks", "buys"), ("cookies", "trays", "bakes", "buys"),
    ("stamps", "albums", "collects", "orders"), ("marbles", "bags", "wins", "buys"),
    ("seashells", "buckets", "gathers", "buys"), ("stickers", "sheets", "earns", "buys"),
    ("eggs", "cartons", "collects", "buys"), ("books", "boxes", "borrows", "orders"),
    ("cupcakes", "trays", "bakes", "orders"), ("pencils", "packs", "finds", "buys"),
    ("tomatoes", "crates", "harvests", "buys"), ("beads", "jars", "makes", "buys"),
    ("postcards", "envelopes", "receives", "buys"), ("muffins", "tins", "bakes", "buys"),
)
NAMES: tuple[tuple[str, str], ...] = (
    ("Maya", "f"), ("Janet", "f"), ("Sofia", "f"), ("Lena", "f"), ("Priya", "f"), ("Grace", "f"), ("Amara", "f"),
    ("Olivia", "f"), ("Hana", "f"), ("Nora", "f"), ("Liam", "m"), ("Omar", "m"), ("Kevin", "m"), ("Diego", "m"),
    ("Ravi", "m"), ("Tom", "m"), ("Felix", "m"), ("Marco", "m"), ("Yusuf", "m"), ("Theo", "m"),
)
RELATIVES = ("friend", "cousin", "brother", "sister", "neighbour", "teacher", "classmate")
GROUPS = ("friends", "classmates", "cousins", "neighbours")
PLACES = ("market", "library", "park", "school", "station")

# The concept words a step may use and what they mean; D7 redefines one of them.
MEANINGS: dict[str, Fraction] = {"double": Fraction(2), "triple": Fraction(3), "half": Fraction(1, 2),
                                 "a third": Fraction(1, 3), "a quarter": Fraction(1, 4), "dozen": Fraction(12)}
# D7 alternatives: (phrase used in the redefinition sentence, value)
REDEFINITIONS: dict[str, tuple[tuple[str, Fraction], ...]] = {
    "double": (("multiplying by three", Fraction(3)), ("multiplying by four", Fraction(4))),
    "triple": (("multiplying by two", Fraction(2)), ("multiplying by four", Fraction(4))),
    "half": (("one third", Fraction(1, 3)), ("one quarter", Fraction(1, 4))),
    "a third": (("one half", Fraction(1, 2)), ("one quarter", Fraction(1, 4))),
    "a quarter": (("one half", Fraction(1, 2)), ("one third", Fraction(1, 3))),
    "dozen": (("10", Fraction(10)), ("15", Fraction(15))),
}


@dataclass(frozen=True)
class Lexicon:
    name: str
    gender: str  # f | m
    item: str
    container: str
    gain_verb: str
    buy_verb: str
    relative: str
    group: str
    place: str
    other_item: str  # for distractor sentences

    @property
    def theme(self) -> str:
        return self.item

    def slots(self) -> dict[str, str]:
        f = self.gender == "f"
        return {"Name": self.name, "Pron": "She" if f else "He", "pron": "she" if f else "he",
                "pos": "her" if f else "his", "item": self.item, "container": self.container,
                "gain_verb": self.gain_verb, "buy_verb": self.buy_verb, "relative": self.relative,
                "group": self.group, "place": self.place, "other_item": self.other_item}


def random_lexicon(rng: Any, *, avoid_theme: str | None = None, avoid_name: str | None = None) -> Lexicon:
    themes = [t for t in THEMES if t[0] != avoid_theme]
    names = [n for n in NAMES if n[0] != avoid_name]
    item, container, gain, buy = themes[int(rng.integers(len(themes)))]
    name, gender = names[int(rng.integers(len(names)))]
    others = [t[0] for t in THEMES if t[0] != item]
    return Lexicon(name, gender, item, container, gain, buy, RELATIVES[int(rng.integers(len(RELATIVES)))],
                   GROUPS[int(rng.integers(len(GROUPS)))], PLACES[int(rng.integers(len(PLACES)))],
                   others[int(rng.integers(len(others)))])


# ------------------------------------------------------------------------------------- the templates
# Every step sentence is "<opening> <clause>." with the clause starting at the verb, so D8 can ask
# "... right after she <clause>?". Slots: {a} {g} {e} {p} numbers, {word} concept word.
INIT_TEMPLATES = ("{Name} has {a} {item}.", "{Name} starts with {a} {item}.", "At first, {Name} owns {a} {item}.")
OPENINGS = ("{Pron}", "{Pron} then", "After that, {pron}")
STEP_CLAUSES: dict[str, tuple[str, ...]] = {
    "gain": ("{gain_verb} {a} more {item}", "{gain_verb} another {a} {item}", "{gain_verb} {a} additional {item}"),
    "gain_groups": ("{buy_verb} {g} {container} with {e} {item} in each", "{buy_verb} {g} {container}, each holding {e} {item}",
                    "{buy_verb} {g} {container} that hold {e} {item} each"),
    "lose": ("gives {a} {item} to {pos} {relative}", "hands {a} of the {item} to {pos} {relative}",
             "gives away {a} {item} to {pos} {relative}"),
    "lose_pct": ("donates {p} of {pos} {item} to the school", "gives {p} of the {item} to the school",
                 "donates {p} of the {item} {pron} has to the school"),
    "scale": ("{word}s the number of {item} {pron} has", "manages to {word} {pos} {item}",
              "{word}s {pos} collection of {item}"),
    "lose_frac": ("gives away {word} of {pos} {item}", "uses {word} of the {item} {pron} has", "loses {word} of {pos} {item}"),
    "gain_dozen": ("{gain_verb} {a} dozen more {item}", "{gain_verb} another {a} dozen {item}",
                   "{gain_verb} {a} more dozen {item}"),
}
QUESTION_TEMPLATES: dict[str, tuple[str, ...]] = {
    "count": ("How many {item} does {Name} have now?", "How many {item} does {Name} end up with?",
              "What is the number of {item} {Name} has in the end?"),
    "share": ("{Pron} shares all of {pos} {item} equally among {a} {group}. How many {item} does each of them get?",
              "{Pron} splits the {item} equally among {a} {group}. How many {item} does each one receive?",
              "{Name} divides the {item} evenly among {a} {group}. How many {item} does each of them get?"),
    "money": ("{Pron} sells all of {pos} {item} for {p} each. How many dollars does {pron} make?",
              "{Pron} sells every one of the {item} at {p} apiece. How much money, in dollars, does {pron} earn?",
              "{Name} sells the {item} for {p} each. How much money does {pron} make in dollars?"),
}
DISTRACTOR_TEMPLATES = ("{Pos} {relative} has {d} {other_item}.", "Each of the {item} weighs {d} grams.",
                        "The {place} is {d} kilometres away from {pos} home.")
INTERMEDIATE_QUESTION = "How many {item} does {Name} have right after {pron} {clause}?"
BACKWARD_TEMPLATE = 'In the problem "{problem}", the answer is {answer}. What is the value of x?'
REDEFINE_TEMPLATE = 'Assume that in this problem the word "{word}" means {phrase}.'
VAGUE = "some"

STEP_KINDS = tuple(STEP_CLAUSES)
WORD_KINDS = {"scale": ("double", "triple"), "lose_frac": ("half", "a third", "a quarter"), "gain_dozen": ("dozen",)}
N_AMOUNTS = {"init": 1, "gain": 1, "gain_groups": 2, "lose": 1, "lose_pct": 1, "scale": 0, "lose_frac": 0,
             "gain_dozen": 1}
PERCENTS = (10, 20, 25, 50, 75)
PRICES = (Fraction(2), Fraction(3), Fraction(4), Fraction(5), Fraction(3, 2), Fraction(5, 2), Fraction(1, 2))


# ------------------------------------------------------------------------------------------ programs
@dataclass(frozen=True)
class Step:
    kind: str
    amounts: tuple[Any, ...] = ()  # Fraction, a sympy Symbol (D9 / D3), or None (vague, D3)
    word: str | None = None
    variant: int = 0

    def with_amounts(self, amounts: Sequence[Any]) -> Step:
        return replace(self, amounts=tuple(amounts))


@dataclass(frozen=True)
class Question:
    kind: str  # count | share | money
    amount: Any = None
    variant: int = 0


@dataclass(frozen=True)
class Program:
    steps: tuple[Step, ...]  # steps[0] is the init step
    question: Question
    lexicon: Lexicon
    distractor: tuple[int, int, Any] | None = None  # (insert after step index, template, number)
    redefinition: tuple[str, str, Fraction] | None = None  # (word, phrase, value)
    intermediate: int | None = None  # D8: ask for the value right after this step instead of the question

    # -- inputs ----------------------------------------------------------------------------------------
    def slots(self) -> list[tuple[int, int]]:
        """Addresses of the numeric inputs: (step index, amount index); step -1 is the question."""
        out = [(i, j) for i, s in enumerate(self.steps) for j in range(len(s.amounts))]
        if self.question.kind != "count":
            out.append((-1, 0))
        return out

    def get(self, slot: tuple[int, int]) -> Any:
        i, j = slot
        return self.question.amount if i == -1 else self.steps[i].amounts[j]

    def set(self, slot: tuple[int, int], value: Any) -> Program:
        i, j = slot
        if i == -1:
            return replace(self, question=replace(self.question, amount=value))
        amounts = list(self.steps[i].amounts)
        amounts[j] = value
        steps = list(self.steps)
        steps[i] = steps[i].with_amounts(amounts)
        return replace(self, steps=tuple(steps))

    def inputs(self) -> list[Any]:
        return [self.get(s) for s in self.slots()]

    def structure(self) -> tuple:
        """What D5 keeps: the kinds, the concept words and the question kind (not numbers or words)."""
        return tuple((s.kind, s.word) for s in self.steps) + (self.question.kind,)

    def concept_words(self) -> list[str]:
        return [s.word for s in self.steps if s.word is not None]


def step_value(kind: str, v: Any, amounts: Sequence[Any], word: str | None, meanings: Mapping[str, Any]) -> Any:
    if kind == "init":
        return amounts[0]
    if kind == "gain":
        return v + amounts[0]
    if kind == "gain_groups":
        return v + amounts[0] * amounts[1]
    if kind == "lose":
        return v - amounts[0]
    if kind == "lose_pct":
        return v - v * amounts[0] / 100
    if kind == "scale":
        return v * meanings[word]
    if kind == "lose_frac":
        return v - v * meanings[word]
    if kind == "gain_dozen":
        return v + amounts[0] * meanings["dozen"]
    raise ValueError(f"unknown step kind {kind!r}")


def question_value(kind: str, v: Any, amount: Any) -> Any:
    if kind == "count":
        return v
    if kind == "share":
        return v / amount
    if kind == "money":
        return v * amount
    raise ValueError(f"unknown question kind {kind!r}")


def trace(program: Program, meanings: Mapping[str, Any] | None = None) -> list[Any]:
    """The running value after each step (index i = after steps[i])."""
    m = dict(MEANINGS)
    if meanings:
        m.update(meanings)
    values, v = [], None
    for s in program.steps:
        v = step_value(s.kind, v, s.amounts, s.word, m)
        values.append(v)
    return values


def execute(program: Program, meanings: Mapping[str, Any] | None = None) -> Any:
    """The answer of the program (the intermediate value when it asks for one); exact or symbolic."""
    m = dict(MEANINGS)
    if program.redefinition is not None:
        m[program.redefinition[0]] = program.redefinition[2]
    if meanings:
        m.update(meanings)
    values = trace(program, m)
    if program.intermediate is not None:
        return values[program.intermediate]
    return question_value(program.question.kind, values[-1], program.question.amount)


# ---------------------------------------------------------------------------------------- rendering
_SMALL_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                "twelve")


def render_number(value: Any, *, money: bool = False, percent: bool = False, words: bool = False) -> str:
    if value is None:
        return VAGUE
    if not isinstance(value, Fraction):  # a sympy symbol (D9)
        s = str(value)
        return f"${s}" if money else (f"{s}%" if percent else s)
    if money:
        if value.denominator == 1:
            return f"${value.numerator:,}"
        return f"${float(value):,.2f}"
    if value.denominator != 1:
        s = format_number(value)
    elif words and 0 <= value.numerator <= 12:
        s = _SMALL_WORDS[value.numerator]
    else:
        s = f"{value.numerator:,}"
    return f"{s}%" if percent else s


def _fill(template: str, slots: Mapping[str, str]) -> str:
    out = template
    for k, v in slots.items():
        out = out.replace("{" + k + "}", v)
    return out


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def render_step(step: Step, lex: Lexicon, *, index: int, words: bool = False) -> tuple[str, str]:
    """(sentence, clause) of one step."""
    slots = lex.slots()
    if step.kind == "init":
        slots["a"] = render_number(step.amounts[0], words=words)
        return _fill(INIT_TEMPLATES[step.variant % 3], slots), ""
    clause_t = STEP_CLAUSES[step.kind][step.variant % 3]
    if step.kind in ("gain", "lose", "gain_dozen"):
        slots["a"] = render_number(step.amounts[0], words=words)
    elif step.kind == "gain_groups":
        slots["g"] = render_number(step.amounts[0], words=words)
        slots["e"] = render_number(step.amounts[1], words=words)
    elif step.kind == "lose_pct":
        a = step.amounts[0]
        slots["p"] = VAGUE if a is None else (render_number(a) + " percent" if step.variant == 2
                                              else render_number(a, percent=True))
    if step.word is not None:
        slots["word"] = step.word
    clause = _fill(clause_t, slots)
    opening = _fill(OPENINGS[(step.variant + index) % 3], slots)
    return f"{opening} {clause}.", clause


def render_question(q: Question, lex: Lexicon, *, words: bool = False) -> str:
    slots = lex.slots()
    if q.kind == "share":
        slots["a"] = render_number(q.amount, words=words)
    elif q.kind == "money":
        slots["p"] = "some money" if q.amount is None else render_number(q.amount, money=True)
    return _fill(QUESTION_TEMPLATES[q.kind][q.variant % 3], slots)


@dataclass
class Rendered:
    text: str
    clauses: list[str] = field(default_factory=list)
    body: str = ""  # the statements without the question


def render(program: Program, *, words: bool = False) -> Rendered:
    lex = program.lexicon
    sentences, clauses = [], []
    for i, s in enumerate(program.steps):
        sentence, clause = render_step(s, lex, index=i, words=words)
        sentences.append(sentence)
        clauses.append(clause)
        if program.distractor is not None and program.distractor[0] == i:
            _, t, d = program.distractor
            slots = lex.slots()
            slots["Pos"] = _cap(slots["pos"])
            slots["d"] = render_number(d)
            sentences.append(_fill(DISTRACTOR_TEMPLATES[t % 3], slots))
    body = " ".join(sentences)
    if program.intermediate is not None:
        slots = lex.slots()
        slots["clause"] = clauses[program.intermediate]
        question = _fill(INTERMEDIATE_QUESTION, slots)
    else:
        question = render_question(program.question, lex, words=words)
    text = body + " " + question
    if program.redefinition is not None:
        word, phrase, _ = program.redefinition
        text = _fill(REDEFINE_TEMPLATE, {"word": word, "phrase": phrase}) + " " + text
    return Rendered(text, clauses, body)


def solution_text(program: Program) -> str:
    """A GSM8K-style worked solution ending in ``#### <answer>`` (the reference solution of P)."""
    m = dict(MEANINGS)
    if program.redefinition is not None:
        m[program.redefinition[0]] = program.redefinition[2]
    lines, v = [], None
    item = program.lexicon.item
    for s in program.steps:
        new = step_value(s.kind, v, s.amounts, s.word, m)
        a = [format_number(x) for x in s.amounts]
        if s.kind == "init":
            lines.append(f"{program.lexicon.name} starts with {a[0]} {item}.")
        elif s.kind == "gain":
            lines.append(f"{format_number(v)} + {a[0]} = {format_number(new)} {item}.")
        elif s.kind == "gain_groups":
            lines.append(f"{a[0]} * {a[1]} = {format_number(s.amounts[0] * s.amounts[1])} more, so "
                         f"{format_number(v)} + {format_number(s.amounts[0] * s.amounts[1])} = {format_number(new)} {item}.")
        elif s.kind == "lose":
            lines.append(f"{format_number(v)} - {a[0]} = {format_number(new)} {item}.")
        elif s.kind == "lose_pct":
            lines.append(f"{a[0]}% of {format_number(v)} is {format_number(v - new)}, so "
                         f"{format_number(v)} - {format_number(v - new)} = {format_number(new)} {item}.")
        elif s.kind == "scale":
            lines.append(f"{format_number(v)} * {format_number(m[s.word])} = {format_number(new)} {item}.")
        elif s.kind == "lose_frac":
            lines.append(f"{s.word} of {format_number(v)} is {format_number(v - new)}, so "
                         f"{format_number(v)} - {format_number(v - new)} = {format_number(new)} {item}.")
        elif s.kind == "gain_dozen":
            lines.append(f"{a[0]} dozen is {format_number(s.amounts[0] * m['dozen'])}, so "
                         f"{format_number(v)} + {format_number(s.amounts[0] * m['dozen'])} = {format_number(new)} {item}.")
        v = new
    ans = execute(program)
    q = program.question
    if program.intermediate is None and q.kind == "share":
        lines.append(f"{format_number(v)} / {format_number(q.amount)} = {format_number(ans)} each.")
    elif program.intermediate is None and q.kind == "money":
        lines.append(f"{format_number(v)} * {format_number(q.amount)} = {format_number(ans)} dollars.")
    lines.append(f"#### {format_number(ans)}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------- sampling
MAX_VALUE = 10_000


def _valid(program: Program) -> bool:
    """Every running value and the answer are positive, below MAX_VALUE, integral except money answers."""
    vals = trace(program)
    if any(v <= 0 or v.denominator != 1 or v >= MAX_VALUE for v in vals):
        return False
    ans = execute(program)
    if program.question.kind == "money":
        return 0 < ans < MAX_VALUE and (ans * 100).denominator == 1
    return 0 < ans < MAX_VALUE and ans.denominator == 1


def _draw_amounts(kind: str, rng: Any) -> tuple[Fraction, ...]:
    r = lambda lo, hi: Fraction(int(rng.integers(lo, hi + 1)))  # noqa: E731
    if kind == "init":
        return (r(5, 60),)
    if kind == "gain":
        return (r(2, 40),)
    if kind == "gain_groups":
        return (r(2, 8), r(2, 15))
    if kind == "lose":
        return (r(1, 30),)
    if kind == "lose_pct":
        return (Fraction(PERCENTS[int(rng.integers(len(PERCENTS)))]),)
    if kind == "gain_dozen":
        return (r(1, 5),)
    return ()


def _draw_question_amount(kind: str, rng: Any) -> Fraction | None:
    if kind == "share":
        return Fraction(int(rng.integers(2, 9)))
    if kind == "money":
        return PRICES[int(rng.integers(len(PRICES)))]
    return None


def resample_numbers(program: Program, rng: Any, *, tries: int = 200) -> Program | None:
    """The same structure with new numbers that keep every value valid (None if none found)."""
    for _ in range(tries):
        steps = tuple(s.with_amounts(_draw_amounts(s.kind, rng)) for s in program.steps)
        q = replace(program.question, amount=_draw_question_amount(program.question.kind, rng))
        cand = replace(program, steps=steps, question=q)
        if _valid(cand):
            return cand
    return None


def random_program(rng: Any, *, min_steps: int = 2, max_steps: int = 4, tries: int = 500) -> Program:
    """A random valid program with ``min_steps..max_steps`` steps after the start, at least one concept word."""
    for _ in range(tries):
        n = int(rng.integers(min_steps, max_steps + 1))
        kinds = [STEP_KINDS[int(rng.integers(len(STEP_KINDS)))] for _ in range(n)]
        if not any(k in WORD_KINDS for k in kinds):
            kinds[int(rng.integers(n))] = tuple(WORD_KINDS)[int(rng.integers(len(WORD_KINDS)))]
        steps = [Step("init", (), None, int(rng.integers(3)))]
        for k in kinds:
            word = None
            if k in WORD_KINDS:
                options = WORD_KINDS[k]
                word = options[int(rng.integers(len(options)))]
            steps.append(Step(k, (), word, int(rng.integers(3))))
        qkind = ("count", "share", "money")[int(rng.integers(3))]
        skeleton = Program(tuple(steps), Question(qkind, None, int(rng.integers(3))), random_lexicon(rng))
        prog = resample_numbers(skeleton, rng, tries=60)
        if prog is not None:
            return prog
    raise RuntimeError("could not draw a valid program; widen the step range")
