"""A safe reader for short math answers (CogMath §3.3 scoring: symbolic answers such as ``2\\sqrt{2}``).

Model output is untrusted text, so it is never handed to ``sympy.sympify``/``parse_expr`` (both
evaluate Python). This module reads it with a whitelist tokenizer and a small recursive-descent
parser that builds the sympy tree directly from ``Integer``/``Rational``/``Add``/``Mul``/``Pow`` and a
fixed set of functions. Anything outside the grammar is "not an expression" (``None``), never an error.

Grammar (plain and LaTeX spellings)::

    expr    := term (('+' | '-') term)*
    term    := unary (('*' | '/' | '\\cdot' | '\\times' | '×' | '·' | '\\div' | '÷') unary | implicit)*
    unary   := ('+' | '-') unary | power
    power   := primary (('^' | '**') unary)?
    primary := NUMBER | '(' expr ')' | '{' expr '}' | 'pi' | '\\pi' | 'π'
             | '\\frac' '{' expr '}' '{' expr '}' | '\\sqrt' ['[' expr ']'] '{' expr '}' | '√' primary
             | FUNC '(' expr ')' | FUNC '{' expr '}' | FUNC NUMBER | LETTER

``implicit`` is juxtaposition before anything but a number (``2\\sqrt{2}``, ``2 (3)``, ``2pi``).
FUNC is one of sqrt, sin, cos, tan, log, ln, exp, abs (also as ``\\sin`` …). A single letter is a
symbol (the caller decides whether a variable is acceptable); any longer unknown word is rejected.

Every input is bounded: its length, the number of tokens, the nesting depth, the digits of a number
and the size of an exact power, so a crafted answer costs microseconds, not minutes or a stack overflow.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

MAX_CHARS = 1000
MAX_TOKENS = 256
MAX_DEPTH = 40
MAX_DIGITS = 120
MAX_POWER_BITS = 100_000  # an exact power may have at most this many bits
MAX_EXPONENT = 10_000  # |exponent| of a numeric non-integer power

FUNCTIONS = ("sqrt", "sin", "cos", "tan", "log", "ln", "exp", "abs")

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<num>(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,4}(?![0-9]))?)
  | (?P<cmd>\\[A-Za-z]+)
  | (?P<word>[A-Za-z]+)
  | (?P<pow>\*\*)
  | (?P<op>[-+*/^(){}\[\]×·÷√π])
    """,
    re.VERBOSE | re.ASCII,
)
_THOUSANDS = re.compile(r"(?<=[0-9]),(?=[0-9]{3}(?![0-9]))")
_OPS = {"×": "*", "·": "*", "÷": "/", "**": "^", "\\cdot": "*", "\\times": "*", "\\div": "/", "π": "pi",
        "\\pi": "pi", "√": "sqrt", "\\sqrt": "\\sqrt", "\\frac": "\\frac", "\\dfrac": "\\frac", "\\tfrac": "\\frac"}


class _Reject(Exception):
    """The text is not an expression of the grammar (or exceeds a bound)."""


def tokenize(text: str) -> list[tuple[str, str]] | None:
    """``[(kind, value), ...]`` with kinds num, op, func, name, sym; None when a character is outside
    the whitelist or a bound is exceeded."""
    if len(text) > MAX_CHARS:
        return None
    text = _THOUSANDS.sub("", text)
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            return None
        pos = m.end()
        kind = m.lastgroup
        s = m.group()
        if kind == "ws":
            continue
        if kind == "num":
            if len(s) > MAX_DIGITS:
                return None
            out.append(("num", s))
        elif kind in ("cmd", "op", "pow"):
            s = _OPS.get(s, s)
            if s.startswith("\\"):
                name = s[1:]
                if s in ("\\frac", "\\sqrt"):
                    out.append(("op", s))
                elif name in FUNCTIONS:
                    out.append(("func", name))
                else:
                    return None  # an unknown LaTeX command
            elif s == "pi":
                out.append(("name", "pi"))
            elif s == "sqrt":
                out.append(("func", "sqrt"))
            else:
                out.append(("op", s))
        else:  # a word
            if s in FUNCTIONS:
                out.append(("func", s))
            elif s == "pi":
                out.append(("name", "pi"))
            elif len(s) == 1:
                out.append(("sym", s))
            else:
                return None
        if len(out) > MAX_TOKENS:
            return None
    return out


def _number(s: str) -> Any:
    import sympy

    mant, _, exp = s.lower().partition("e")
    value = Fraction(mant if mant != "." else "0")
    if exp:
        value *= Fraction(10) ** int(exp)
    return sympy.Rational(value.numerator, value.denominator)


def _bits(e: Any) -> int:
    """An upper bound on the bits of the rational numbers inside ``e``."""
    import sympy

    best = 1
    for a in e.atoms(sympy.Rational):
        best = max(best, abs(int(a.p)).bit_length(), int(a.q).bit_length())
    return best


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]):
        import sympy

        self.sp = sympy
        self.toks = tokens
        self.i = 0
        self.depth = 0

    # -- helpers
    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> tuple[str, str]:
        t = self.peek()
        if t is None:
            raise _Reject
        self.i += 1
        return t

    def expect(self, value: str) -> None:
        if self.take() != ("op", value):
            raise _Reject

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Reject

    # -- grammar
    def parse(self) -> Any:
        if not self.toks:
            raise _Reject
        e = self.expr()
        if self.i != len(self.toks):
            raise _Reject
        return e

    def expr(self) -> Any:
        self.enter()
        e = self.term()
        while self.peek() in (("op", "+"), ("op", "-")):
            op = self.take()[1]
            t = self.term()
            e = self.sp.Add(e, t if op == "+" else -t)
        self.depth -= 1
        return e

    def _starts_implicit(self, t: tuple[str, str] | None) -> bool:
        return t is not None and (t[0] in ("func", "name", "sym") or t in (
            ("op", "("), ("op", "{"), ("op", "\\frac"), ("op", "\\sqrt")))

    def term(self) -> Any:
        e = self.unary()
        while True:
            t = self.peek()
            if t in (("op", "*"), ("op", "/")):
                self.take()
                f = self.unary()
                if t[1] == "/":
                    if f == 0:
                        raise _Reject  # division by zero is not an answer
                    f = self.sp.Pow(f, -1)
                e = self.sp.Mul(e, f)
            elif self._starts_implicit(t):
                e = self.sp.Mul(e, self.power())
            else:
                return e

    def unary(self) -> Any:
        t = self.peek()
        if t in (("op", "+"), ("op", "-")):
            self.take()
            self.enter()
            e = self.unary()
            self.depth -= 1
            return -e if t[1] == "-" else e
        return self.power()

    def power(self) -> Any:
        base = self.primary()
        if self.peek() == ("op", "^"):
            self.take()
            self.enter()
            exp = self.unary()
            self.depth -= 1
            return self._pow(base, exp)
        return base

    def _pow(self, base: Any, exp: Any) -> Any:
        sp = self.sp
        if exp.free_symbols or base.free_symbols:
            return sp.Pow(base, exp)
        if exp.is_Rational:
            if base == 0 and exp.is_negative:
                raise _Reject
            # an exact power is computed eagerly: bound its size before sympy builds it
            if abs(int(exp.p)) * _bits(base) > MAX_POWER_BITS:
                raise _Reject
            return sp.Pow(base, exp)
        try:
            size = abs(complex(exp.evalf(15)))
        except (TypeError, ValueError):
            raise _Reject from None
        if not size <= MAX_EXPONENT:
            raise _Reject
        return sp.Pow(base, exp)

    def group(self, open_: str = "{", close: str = "}") -> Any:
        self.expect(open_)
        e = self.expr()
        self.expect(close)
        return e

    def primary(self) -> Any:
        sp = self.sp
        self.enter()
        kind, value = self.take()
        if kind == "num":
            e = _number(value)
        elif kind == "name":  # pi
            e = sp.pi
        elif kind == "sym":
            e = sp.Symbol(value)
        elif kind == "func":
            nxt = self.peek()
            if nxt == ("op", "("):
                arg = self.group("(", ")")
            elif nxt == ("op", "{"):
                arg = self.group()
            elif nxt is not None and nxt[0] in ("num", "name") or (value == "sqrt" and nxt is not None):
                arg = self.primary()  # sqrt 2, √2, \sin 1
            else:
                raise _Reject
            e = self._apply(value, arg)
        elif (kind, value) == ("op", "("):
            e = self.expr()
            self.expect(")")
        elif (kind, value) == ("op", "{"):
            e = self.expr()
            self.expect("}")
        elif (kind, value) == ("op", "\\frac"):
            num = self.group()
            den = self.group()
            if den == 0:
                raise _Reject
            e = sp.Mul(num, sp.Pow(den, -1))
        elif (kind, value) == ("op", "\\sqrt"):
            index = self.group("[", "]") if self.peek() == ("op", "[") else None
            arg = self.group()
            if index is None:
                e = sp.sqrt(arg)
            else:
                if not (index.is_Integer and 2 <= int(index) <= 1000):
                    raise _Reject
                e = sp.root(arg, index)
        else:
            raise _Reject
        self.depth -= 1
        return e

    def _apply(self, name: str, arg: Any) -> Any:
        sp = self.sp
        if name == "sqrt":
            return sp.sqrt(arg)
        if name in ("log", "ln"):
            if arg == 0:
                raise _Reject
            return sp.log(arg)
        if name == "abs":
            return sp.Abs(arg)
        if name == "exp":
            if not arg.free_symbols:
                try:
                    if not abs(complex(arg.evalf(15))) <= MAX_EXPONENT:
                        raise _Reject
                except (TypeError, ValueError):
                    raise _Reject from None
            return sp.exp(arg)
        return {"sin": sp.sin, "cos": sp.cos, "tan": sp.tan}[name](arg)


def to_sympy(text: str) -> Any | None:
    """The sympy expression of ``text`` under the grammar above, or None (never raises, never evaluates
    Python). Infinite or undefined results (``1/0``, ``tan(pi/2)``) are None too."""
    toks = tokenize(text)
    if toks is None:
        return None
    try:
        e = _Parser(toks).parse()
    except (_Reject, ZeroDivisionError, OverflowError, ValueError, TypeError, RecursionError):
        return None
    import sympy

    if e.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        return None
    return e


def from_fraction(x: Fraction) -> Any:
    import sympy

    return sympy.Rational(x.numerator, x.denominator)
