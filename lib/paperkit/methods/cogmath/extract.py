"""Answer extraction and matching (CogMath §3.3 scoring; the failure cases peer harnesses report).

A response passes a numeric inquiry when the answer extracted from it equals the reference. Extraction
is where harnesses lose most points (run-on generations, last number taken instead of the first
``####``, dropped minus signs, thousands separators, ``\\boxed{}``), so it is explicit and configurable:

1. **Markers, in priority order** (default ``####``, ``\\boxed``, ``final answer``, ``answer is``,
   ``answer:``): the first marker *in that order* that occurs in the text wins, and within it the first
   occurrence (``occurrence='first'``), so a model that keeps generating new "Question: … #### 7"
   blocks after its answer is scored on its own answer. The answer is read from the first sentence
   after the marker: the whole of it when it is one number or expression, else the number after its
   last ``=`` ("The answer is 5 - 2 = 3." gives 3), else its first number.
2. **Fallback** when no marker occurs: the last number in the text (the GSM8K convention), the first,
   or none (no answer).

Numbers: optional sign (``-``, ``−``), currency (``$``), thousands separators (``1,234`` and LaTeX
``1{,}234``), decimals, ``a/b`` fractions, a trailing ``%`` (kept as the number before it, the GSM8K
convention), ``\\frac{a}{b}``; other LaTeX (``\\sqrt``, ``\\pi``, powers) is read into a sympy
expression by the whitelist parser of :mod:`.mathparse` (model output is never evaluated as Python).
Values are exact :class:`fractions.Fraction` where the text is a plain number, so matching needs no
floating point; symbolic answers are compared with sympy (canonical form, then their values at 30
digits agreeing to 1e-12 relative).

Matching is exact, with one allowance for references written rounded: when either side is a decimal
with ``k >= 2`` places, the other passes if it rounds to it at ``k`` places (``2.414`` ≡ √2 + 1).

Refusals (D2/D3): a response passes an "unsolvable" inquiry when it says so in words (configurable
phrases such as "cannot be solved", "not enough information") and does not commit to a numeric answer:
no marked answer, and (unless ``fallback`` is ``none``) no number after the sentence of its last refusal
phrase other than numbers the inquiry itself gives ("Let me see what is missing: 3 + 4 = 7. The total
is 7." commits to 7; "It cannot be solved: we know she has 12 apples, not the price." does not).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from paperkit.core.errors import ConfigError
from paperkit.methods.cogmath.mathparse import from_fraction, to_sympy

DEFAULT_MARKERS: tuple[str, ...] = ("####", "\\boxed", "final answer", "answer is", "answer:")
DEFAULT_REFUSALS: tuple[str, ...] = (
    "cannot be solved", "can't be solved", "can not be solved", "cannot solve", "can't solve", "unsolvable",
    "not solvable", "insufficient information", "not enough information", "missing information",
    "information is missing", "cannot be determined", "can't be determined", "cannot determine",
    "can't determine", "impossible to determine", "impossible to solve", "impossible to answer",
    "not possible to determine", "not possible to solve", "not possible to answer", "does not make sense",
    "doesn't make sense", "problem is incomplete", "question is incomplete", "is not well-defined", "ill-posed",
    "cannot be answered", "can't be answered", "no way to know", "lacks the information",
    "lacks the necessary", "lacks necessary", "missing a necessary", "missing the necessary",
)

_NUMBER = re.compile(
    r"(?<![\w.])(?P<lead>\$\s?)?(?P<sign>[-−–]\s?)?(?P<cur>\$\s?)?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:\s*/\s*(?P<den>\d+(?:\.\d+)?)(?![\d.]))?(?P<pct>\s?%)?"
)
_LATEX_NOISE = (("{,}", ","), ("\\!", ""), ("\\,", ""), ("\\;", ""), ("\\ ", " "), ("\\$", "$"), ("\\%", "%"),
                ("\\left", ""), ("\\right", ""), ("\\dfrac", "\\frac"), ("\\tfrac", "\\frac"), ("−", "-"))
_TEXT_CMD = re.compile(r"\\(?:text|textbf|mathrm|mbox|mathbf)\{([^{}]*)\}")
_SYMBOLIC_HINT = re.compile(r"\\(?:sqrt|pi|frac|cdot|times)|\^|[a-z]\s*\(|(?<![a-z])pi\b|sqrt|[√π]")


@dataclass(frozen=True)
class Answer:
    """An extracted answer: an exact number, or a symbolic expression (``expr`` its text, ``value`` its sympy
    tree, built by :mod:`.mathparse`); ``raw`` is the source text."""

    exact: Fraction | None = None
    expr: str | None = None
    raw: str = ""
    decimals: int = 0  # decimal places as written (for rounded references)
    value: Any = field(default=None, compare=False, repr=False)  # the sympy expression behind ``expr``

    @property
    def found(self) -> bool:
        return self.exact is not None or self.expr is not None

    def __str__(self) -> str:
        if self.exact is not None:
            return format_number(self.exact)
        return self.expr or ""


@dataclass(frozen=True)
class ExtractConfig:
    markers: tuple[str, ...] = DEFAULT_MARKERS
    occurrence: str = "first"  # first | last occurrence of the winning marker
    fallback: str = "last"  # last | first | none: which bare number to take when no marker occurs
    refusals: tuple[str, ...] = DEFAULT_REFUSALS
    rounding: bool = True  # allow a match at the precision of a decimal written with >= 2 places
    _refusal_re: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.occurrence not in ("first", "last"):
            raise ConfigError(f"extraction occurrence = {self.occurrence!r} is invalid; expected 'first' or 'last'")
        if self.fallback not in ("first", "last", "none"):
            raise ConfigError(f"extraction fallback = {self.fallback!r} is invalid; expected first, last or none")
        if not self.markers or not all(isinstance(m, str) and m.strip() for m in self.markers):
            raise ConfigError("extraction markers must be a non-empty list of non-empty strings")
        pattern = "|".join(re.escape(p.lower()) for p in self.refusals) if self.refusals else r"(?!x)x"
        object.__setattr__(self, "_refusal_re", re.compile(pattern))

    @classmethod
    def from_mapping(cls, data: dict | None) -> ExtractConfig:
        data = dict(data or {})
        allowed = {"markers", "occurrence", "fallback", "refusals", "rounding"}
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise ConfigError(f"extraction: unknown key(s) {', '.join(unknown)}; expected {', '.join(sorted(allowed))}")
        for key in ("markers", "refusals"):
            if key in data:
                if not isinstance(data[key], (list, tuple)):
                    raise ConfigError(f"extraction: '{key}' must be a list of strings")
                data[key] = tuple(str(v) for v in data[key])
        return cls(**data)


# --------------------------------------------------------------------------------------------- numbers
def format_number(x: Fraction) -> str:
    """Exact, canonical text: ``18``, ``-3``, ``37.5``, ``5/3`` (decimal when it terminates)."""
    if x.denominator == 1:
        return str(x.numerator)
    d = x.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    if d == 1:
        s = f"{x.numerator / x.denominator!r}"
        # repr of a float may lose exactness for long expansions; rebuild exactly when it does
        if Fraction(s) == x:
            return s
    return f"{x.numerator}/{x.denominator}"


_MAX_NUMBER_CHARS = 400  # longer digit runs are not answers (and int() refuses over 4300 digits)


def _match_value(m: re.Match) -> tuple[Fraction, int]:
    """The value of a number match; ZeroDivisionError for ``a/0``, ValueError for an absurdly long number."""
    num = m.group("num").replace(",", "")
    if len(num) > _MAX_NUMBER_CHARS or len(m.group("den") or "") > _MAX_NUMBER_CHARS:
        raise ValueError("number too long")
    value = Fraction(num)
    decimals = len(num.split(".", 1)[1]) if "." in num else 0
    if m.group("den") is not None:
        den = Fraction(m.group("den"))
        if den == 0:
            raise ZeroDivisionError
        value, decimals = value / den, 0
    if m.group("sign"):
        value = -value
    return value, decimals


def _after_operand(text: str, i: int) -> bool:
    """Whether ``text[:i]`` ends with a number or a closing bracket (then spaces)."""
    i -= 1
    while i >= 0 and text[i].isspace():
        i -= 1
    return i >= 0 and (text[i].isdigit() or text[i] in ")]}")


def numbers_in(text: str) -> list[Answer]:
    """Every plain number in ``text``, in order (signs, ``$``, commas, decimals, ``a/b``, ``%`` handled).

    A minus after a number or a closing bracket is subtraction, not a sign: ``24 - 6`` is 24 and 6."""
    out = []
    text = _clean_latex(text)
    for m in _NUMBER.finditer(text):
        try:
            value, decimals = _match_value(m)
        except (ZeroDivisionError, ValueError):
            continue
        raw = m.group(0).strip()
        if m.group("sign") and _after_operand(text, m.start()):
            value, raw = -value, raw.lstrip("-−–").strip()
        out.append(Answer(exact=value, raw=raw, decimals=decimals))
    return out


def parse_answer(text: str) -> Answer:
    """The value of a short answer text such as ``$1,234.50``, ``-3``, ``3/4``, ``\\frac{3}{4}``, ``2\\sqrt{2}``."""
    s = _clean_latex(text).strip().strip(".").strip()
    s = re.sub(r"^\$+|\$+$", "", s).strip()
    if not s:
        return Answer(raw=text)
    m = _NUMBER.fullmatch(s.replace("−", "-"))
    if m is None:
        # a number followed by words ("18 dollars", "9 eggs") is that number
        m2 = _NUMBER.match(s)
        if m2 is not None and not _SYMBOLIC_HINT.search(s) and re.fullmatch(r"[\s%a-zA-Z.,]*", s[m2.end():]):
            m = m2
    if m is not None:
        try:
            value, decimals = _match_value(m)
            return Answer(exact=value, raw=text.strip(), decimals=decimals)
        except (ZeroDivisionError, ValueError):
            return Answer(raw=text)
    expr = latex_to_sympy(s)
    if expr is None:
        return Answer(raw=text)
    return Answer(exact=_exact_if_rational(expr), expr=str(expr), raw=text.strip(), value=expr)


def _clean_latex(text: str) -> str:
    for a, b in _LATEX_NOISE:
        text = text.replace(a, b)
    text = _TEXT_CMD.sub(lambda m: m.group(1), text)
    return text


def _braced(text: str, start: int) -> tuple[str, int] | None:
    """Content of the brace group opening at ``text[start] == '{'`` and the index after it."""
    if start >= len(text) or text[start] != "{":
        return None
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1:i], i + 1
    return None


def latex_to_sympy(s: str) -> Any | None:
    """The sympy expression of a small LaTeX/plain math answer, or None if it is not one (or names a
    variable, which is not an answer we can compare). Read by :mod:`.mathparse`, never evaluated."""
    t = s.strip().replace("$", "")
    expr = to_sympy(t)
    if expr is None or expr.free_symbols:
        return None
    return expr


def _exact_if_rational(expr: Any) -> Fraction | None:
    if expr.is_Rational:
        return Fraction(int(expr.p), int(expr.q))
    return None


# ------------------------------------------------------------------------------------------ extraction
def _marker_segments(text: str, lower: str, marker: str) -> list[str]:
    m = marker.lower()
    segments = []
    start = 0
    while True:
        i = lower.find(m, start)
        if i < 0:
            break
        j = i + len(m)
        if m in ("\\boxed", "\\fbox"):
            k = j
            while k < len(text) and text[k] == " ":
                k += 1
            got = _braced(text, k)
            if got is not None:
                segments.append(("boxed", got[0]))
                start = got[1]
                continue
            start = j
            continue
        end = text.find("\n", j)
        seg = text[j:] if end < 0 else text[j:end]
        segments.append(("line", seg))
        start = j
    return segments


_DEFAULT_CONFIG: ExtractConfig | None = None


def _default() -> ExtractConfig:
    global _DEFAULT_CONFIG
    if _DEFAULT_CONFIG is None:
        _DEFAULT_CONFIG = ExtractConfig()
    return _DEFAULT_CONFIG


def extract_answer(text: str | None, config: ExtractConfig | None = None, *, fallback: str | None = None) -> Answer:
    """The answer a response gives (see the module docstring for the rules); ``fallback`` overrides the
    configured one."""
    if not text:
        return Answer()
    cfg = config or _default()
    fallback = cfg.fallback if fallback is None else fallback
    lower = text.lower()
    for marker in cfg.markers:
        segs = _marker_segments(text, lower, marker)
        if not segs:
            continue
        ordered = segs if cfg.occurrence == "first" else list(reversed(segs))
        for kind, seg in ordered:
            ans = _segment_answer(kind, seg)
            if ans.found:
                return ans
        # the marker is there but carries no number ("#### unsolvable"): no numeric answer
        return Answer(raw=ordered[0][1].strip())
    if fallback == "none":
        return Answer()
    nums = numbers_in(text)
    if not nums:
        return Answer()
    return nums[-1] if fallback == "last" else nums[0]


def _segment_answer(kind: str, seg: str) -> Answer:
    if kind == "boxed":
        return parse_answer(seg)
    seg = seg.strip().lstrip(":").strip()
    # "The answer is $18$." / "#### 18" / "Answer: \boxed{18}"
    boxed = _marker_segments(seg, seg.lower(), "\\boxed")
    if boxed:
        return parse_answer(boxed[0][1])
    first_sentence = re.split(r"\.(?:\s|$)", seg, maxsplit=1)[0]
    whole = parse_answer(first_sentence)
    if whole.found:
        return whole
    # "The answer is 5 - 2 = 3.": the result after the last "=" (a parenthetical "(= 3 × 4)" is a remark)
    core = re.sub(r"\([^()]*\)", " ", first_sentence)
    if not numbers_in(core):
        core = first_sentence
    if "=" in core:
        tail = core.rsplit("=", 1)[1]
        after = parse_answer(tail)
        if after.found:
            return after
        nums = numbers_in(tail)
        if nums:
            return nums[0]
    nums = numbers_in(core)
    return nums[0] if nums else Answer()


def has_marked_answer(text: str | None, config: ExtractConfig | None = None) -> bool:
    """True when a marker in the response carries a number (a committed answer, not a refusal)."""
    if not text:
        return False
    return extract_answer(text, config, fallback="none").found


_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
_LIST_MARKER = re.compile(r"(?m)^\s*(?:\d+[.)]|[-*•])\s+")


def is_refusal(text: str | None, config: ExtractConfig | None = None, *, inquiry: str | None = None) -> bool:
    """The response declares the problem unsolvable and commits to no numeric answer.

    It commits when a marker carries a number, or (fallback ``first``/``last``) when a number follows
    the sentence holding its last refusal phrase — the response concludes with a result. Numbers that
    ``inquiry`` gives (restated facts) and list enumerators are not results.
    """
    if not text:
        return False
    cfg = config or _default()
    low = text.lower().replace("’", "'")
    said = list(cfg._refusal_re.finditer(low))
    if not said:
        return False
    if has_marked_answer(text, cfg):
        return False
    if cfg.fallback == "none":
        return True
    end = _SENTENCE_END.search(low, said[-1].end())
    after = _LIST_MARKER.sub(" ", low[end.end():]) if end else ""
    given = {n.exact for n in numbers_in(inquiry)} if inquiry else set()
    return all(n.exact in given for n in numbers_in(after))


# ---------------------------------------------------------------------------------------------- match
def _rounds_to(value: Fraction, ref: Answer) -> bool:
    if ref.exact is None or ref.decimals < 2:
        return False
    half = Fraction(1, 2 * 10 ** ref.decimals)
    return abs(value - ref.exact) <= half


def _sympy_value(a: Answer) -> Any | None:
    """The sympy value of an answer: its tree, its exact number, or its ``expr`` text read safely."""
    if a.value is not None:
        return a.value
    if a.exact is not None:
        return from_fraction(a.exact)
    return latex_to_sympy(a.expr or "")


def equivalent(a: Answer, b: Answer, *, rounding: bool = True) -> bool:
    """Numeric/symbolic equivalence of two answers (exact; rounding allowance as documented)."""
    if not a.found or not b.found:
        return False
    if a.exact is not None and b.exact is not None:
        if a.exact == b.exact:
            return True
        return rounding and (_rounds_to(a.exact, b) or _rounds_to(b.exact, a))
    ea, eb = _sympy_value(a), _sympy_value(b)
    if ea is None or eb is None:
        return False
    if ea == eb:  # sympy's canonical form already equates sqrt(8)/2 and sqrt(2)
        return True
    # Numbers only, at 30 digits: sympy.simplify takes super-exponential time on nested functions
    # (sin(sin(...(1)))), and a crafted answer must not stall scoring; the parser admits no variables.
    try:
        va, vb = complex(ea.evalf(30)), complex(eb.evalf(30))
    except Exception:  # noqa: BLE001 - non-numeric or out of range: not equivalent
        return False
    if abs(va - vb) <= 1e-12 * max(1.0, abs(vb)):
        return True
    if rounding and va.imag == 0 and vb.imag == 0:
        for x, ref in ((va.real, b), (vb.real, a)):
            if ref.exact is not None and ref.decimals >= 2 and abs(x - float(ref.exact)) <= 0.5 * 10 ** -ref.decimals:
                return True
    return False


def answers_match(response: str | None, reference: str, config: ExtractConfig | None = None) -> tuple[bool, Answer]:
    """Whether ``response`` gives the ``reference`` answer; also returns what was extracted."""
    cfg = config or _default()
    got = extract_answer(response, cfg)
    ref = parse_answer(reference)
    if not ref.found:
        ref = extract_answer(reference, cfg)
    return equivalent(got, ref, rounding=cfg.rounding), got
