"""A safe parser and evaluator for the equation strings of other symbolic-regression tools (PySR ...).

``sr-apo-compare`` scores a PySR hall-of-fame file itself: each ``equation`` string is parsed here —
never by ``eval``, ``sympify`` or ``parse_expr`` — into a small tree, evaluated with numpy on the data,
and its nodes counted. The grammar is PySR's infix syntax:

* binary ``+ - * /`` and power ``^`` or ``**`` (right-associative, binding tighter than unary minus:
  ``-x0^2`` is ``-(x0^2)``); unary ``-`` and ``+``; parentheses;
* numbers (``1.5``, ``-2e-3``, ``inf`` is refused), variables ``x0, x1, ...`` (0-based feature
  indices, PySR's convention) or the data's column names (a column named ``xK`` at another position than K
  is refused as ambiguous);
* the functions in :data:`FUNCTIONS` (``sin(x0)``, ``square(x1)``, ``pow(a, b)``, ...).

The node count (every number, variable and operator or function application is one node) is the
length used against the APO front, the same count as the paper's length (which has binary operators
only) and PySR's default complexity.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from paperkit.core.errors import InputError

MAX_CHARS = 10_000
MAX_DEPTH = 100  # nesting of parentheses, signs and powers (the parser recurses on these)

# name -> (arity, numpy implementation)
FUNCTIONS = {
    "sin": (1, np.sin), "cos": (1, np.cos), "tan": (1, np.tan), "exp": (1, np.exp), "log": (1, np.log),
    "log2": (1, np.log2), "log10": (1, np.log10), "log1p": (1, np.log1p), "sqrt": (1, np.sqrt),
    "abs": (1, np.abs), "square": (1, np.square), "cube": (1, lambda a: a * a * a), "neg": (1, np.negative),
    "inv": (1, lambda a: 1.0 / a), "sinh": (1, np.sinh), "cosh": (1, np.cosh), "tanh": (1, np.tanh),
    "asin": (1, np.arcsin), "acos": (1, np.arccos), "atan": (1, np.arctan), "asinh": (1, np.arcsinh),
    "acosh": (1, np.arccosh), "atanh": (1, np.arctanh), "sign": (1, np.sign), "relu": (1, lambda a: np.maximum(a, 0.0)),
    "floor": (1, np.floor), "ceil": (1, np.ceil), "erf": (1, None), "gamma": (1, None),
    "add": (2, np.add), "sub": (2, np.subtract), "mult": (2, np.multiply), "mul": (2, np.multiply),
    "div": (2, np.divide), "pow": (2, np.power), "max": (2, np.maximum), "min": (2, np.minimum),
    "mod": (2, np.mod),
}
_BINARY = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide, "^": np.power}
_TOKEN = re.compile(r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_.]*)"
                    r"|(?P<op>\*\*|[-+*/^(),]))")


@dataclass(frozen=True)
class Node:
    kind: str  # "num", "var", "op" (binary operator), "fn" (function), "neg"
    value: float | int | str = 0
    children: tuple[Node, ...] = ()

    def count(self) -> int:
        """Nodes in the tree (iteratively: deep trees cannot exhaust the stack)."""
        n, stack = 0, [self]
        while stack:
            node = stack.pop()
            n += 1
            stack.extend(node.children)
        return n


class _Parser:
    def __init__(self, text: str, names: Sequence[str]) -> None:
        self.text = text
        self.names = {n: j for j, n in enumerate(names)}
        self.tokens = self._tokenize(text)
        self.i = 0
        self.depth = 0

    def _tokenize(self, text: str) -> list[tuple[str, str, int]]:
        out, pos = [], 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if not m:
                raise ValueError(f"unexpected character {text[pos:].lstrip()[:1]!r} at position {pos}")
            kind = m.lastgroup
            out.append((kind, m.group(kind), m.start(kind)))
            pos = m.end()
        return out

    def _peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def _take(self, op: str | None = None) -> tuple[str, str, int]:
        t = self._peek()
        if t is None:
            raise ValueError("unexpected end of the equation")
        if op is not None and t[1] != op:
            raise ValueError(f"expected {op!r} at position {t[2]}, found {t[1]!r}")
        self.i += 1
        return t

    def _enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ValueError(f"nested more than {MAX_DEPTH} levels deep")

    def parse(self) -> Node:
        if not self.tokens:
            raise ValueError("empty equation")
        node = self.expr()
        t = self._peek()
        if t is not None:
            raise ValueError(f"unexpected {t[1]!r} at position {t[2]}")
        return node

    def expr(self) -> Node:
        self._enter()
        node = self.term()
        while (t := self._peek()) is not None and t[1] in ("+", "-"):
            self.i += 1
            node = Node("op", t[1], (node, self.term()))
        self.depth -= 1
        return node

    def term(self) -> Node:
        node = self.unary()
        while (t := self._peek()) is not None and t[1] in ("*", "/"):
            self.i += 1
            node = Node("op", t[1], (node, self.unary()))
        return node

    def unary(self) -> Node:
        t = self._peek()
        if t is not None and t[1] in ("-", "+"):
            self.i += 1
            self._enter()
            inner = self.unary()
            self.depth -= 1
            if t[1] == "+":
                return inner
            if inner.kind == "num":  # a negative constant is one node, as PySR counts it
                return Node("num", -float(inner.value))
            return Node("neg", "-", (inner,))
        return self.power()

    def power(self) -> Node:
        base = self.atom()
        t = self._peek()
        if t is not None and t[1] in ("^", "**"):
            self.i += 1
            self._enter()
            exponent = self.unary()  # right-associative; -x^2 = -(x^2), 2^-1 allowed
            self.depth -= 1
            return Node("op", "^", (base, exponent))
        return base

    def atom(self) -> Node:
        kind, text, pos = self._take()
        if kind == "num":
            value = float(text)
            if not math.isfinite(value):
                raise ValueError(f"number {text!r} at position {pos} is not finite")
            return Node("num", value)
        if kind == "name":
            nxt = self._peek()
            if nxt is not None and nxt[1] == "(":
                fn = text.lower()
                if fn not in FUNCTIONS or FUNCTIONS[fn][1] is None:
                    raise ValueError(f"unknown function {text!r} at position {pos}; known: "
                                     + ", ".join(k for k, v in FUNCTIONS.items() if v[1] is not None))
                self._take("(")
                args = [self.expr()]
                while (t := self._peek()) is not None and t[1] == ",":
                    self.i += 1
                    args.append(self.expr())
                self._take(")")
                if len(args) != FUNCTIONS[fn][0]:
                    raise ValueError(f"{text}() takes {FUNCTIONS[fn][0]} argument(s), got {len(args)} at position {pos}")
                return Node("fn", fn, tuple(args))
            m = re.fullmatch(r"x(\d+)", text)
            if text in self.names:
                if m and int(m.group(1)) != self.names[text]:
                    # PySR writes x0, x1, ... for the feature columns in order; data whose columns are named
                    # x1, x2, ... make x1 mean two different columns: refuse rather than guess
                    raise ValueError(f"{text!r} is ambiguous: the data's column {text!r} is x{self.names[text]} "
                                     f"(0-based), while x{m.group(1)} means feature {m.group(1)}; rename the "
                                     "data's columns (e.g. a, b, ...) so that x0, x1, ... mean features by position")
                return Node("var", self.names[text])
            if m:
                return Node("var", int(m.group(1)))
            raise ValueError(f"unknown variable {text!r} at position {pos}; expected x0, x1, ... or a column "
                             f"name ({', '.join(list(self.names)[:10])})")
        if text == "(":
            node = self.expr()
            self._take(")")
            return node
        raise ValueError(f"unexpected {text!r} at position {pos}")


def parse_equation(text: str, names: Sequence[str] = ()) -> Node:
    """Parse an equation string (PySR syntax) safely; ValueError with the position on bad text."""
    text = str(text)
    if len(text) > MAX_CHARS:
        raise ValueError(f"equation of {len(text):,} characters; at most {MAX_CHARS:,}")
    return _Parser(text, names).parse()


def evaluate_equation(node: Node, X: np.ndarray) -> np.ndarray:
    """The tree's value at every row of ``X`` (rows x features); NaN/inf where the formula is undefined."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]

    def leaf(nd: Node) -> np.ndarray:
        if nd.kind == "num":
            return np.full(n, float(nd.value))
        j = int(nd.value)
        if j >= X.shape[1]:
            raise ValueError(f"the equation uses x{j} (0-based) but the data has {X.shape[1]} feature(s)")
        return X[:, j]

    # post-order with an explicit stack: a long chain a + b + c + ... is a deep tree
    values: dict[int, np.ndarray] = {}
    stack: list[tuple[Node, bool]] = [(node, False)]
    with np.errstate(all="ignore"):
        while stack:
            nd, ready = stack.pop()
            if not nd.children:
                values[id(nd)] = leaf(nd)
                continue
            if not ready:
                stack.append((nd, True))
                stack.extend((c, False) for c in nd.children)
                continue
            args = [values.pop(id(c)) for c in nd.children]
            if nd.kind == "neg":
                values[id(nd)] = -args[0]
            elif nd.kind == "op":
                values[id(nd)] = _BINARY[str(nd.value)](args[0], args[1])
            else:
                values[id(nd)] = FUNCTIONS[str(nd.value)][1](*args)
        return np.asarray(values[id(node)], dtype=np.float64)


def r2_score(y: np.ndarray, pred: np.ndarray) -> float:
    """1 - SSR / SST; NaN when a prediction is not finite."""
    y = np.asarray(y, dtype=np.float64)
    pred = np.broadcast_to(np.asarray(pred, dtype=np.float64), y.shape)
    if not np.all(np.isfinite(pred)):
        return math.nan
    return float(1.0 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2))


def score_equations(equations: Sequence[str], X: np.ndarray, y: np.ndarray, names: Sequence[str] = (),
                    source: str = "models") -> list[tuple[int, float]]:
    """(node count, R² on (X, y)) of each equation; a string that does not parse is an InputError naming
    its row (0-based)."""
    out = []
    for i, text in enumerate(equations):
        try:
            node = parse_equation(text, names)
            out.append((node.count(), r2_score(y, evaluate_equation(node, X))))
        except ValueError as e:
            raise InputError(f"{source}: row {i} (0-based): equation {str(text)[:80]!r}: {e}") from None
    return out
