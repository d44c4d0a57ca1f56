"""The exhaustive grammar of the APO fronts (Fong & Motani, ICML 2025, Sec. 3).

Operators are all binary: Add, Sub, Mul, Div (unprotected) and Pow(a, b) = |a|^b. A leaf is a feature
or a constant. Structures are gene-expression-programming K-expressions of head length ``h`` over
{Add, Sub, Mul, Div, Pow, R} followed by a tail of ``h + 1`` leaf slots ``R``, decoded breadth-first;
the children of Add and Mul are ordered by node symbol and the distinct trees are kept (151 for
h = 3, 976 for h = 4). Every leaf slot then becomes one of the F features or a constant; any operator
whose children are both constants is folded into one constant, repeatedly; constants are renumbered
left to right and duplicates are dropped. Length is the node count after folding.

Expressions are held as prefix token rows (int8): 0 pads, 1..5 are Add, Sub, Mul, Div, Pow, 6 is a
constant (numbered by order of appearance) and 7 + j is feature j. A row maps one-to-one to the
official string form, e.g. ``Sub(Mul(xdata[0],x[0]),Div(x[1],xdata[2]))``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from itertools import product

import numpy as np
from numba import njit

from paperkit.core.errors import ResourceError, UsageError

PAD, ADD, SUB, MUL, DIV, POW, CONST, FEAT0 = 0, 1, 2, 3, 4, 5, 6, 7
OPERATORS = ("Add", "Sub", "Mul", "Div", "Pow")
OP_CODE = {name: i + 1 for i, name in enumerate(OPERATORS)}
SYMMETRIC = frozenset({"Add", "Mul"})
INFIX = {ADD: "+", SUB: "-", MUL: "*", DIV: "/"}
# The order the official script lists head symbols in; only the order of enumeration depends on it.
HEAD_SYMBOLS = ("Pow", "Mul", "Add", "Sub", "Div", "R")
MAX_HEAD = 8


def max_length(head: int) -> int:
    """Most nodes an expression of head length ``head`` can have (a full binary tree of ``head`` operators)."""
    return 2 * head + 1


# ------------------------------------------------------------------------------------------ structures
class _Node:
    __slots__ = ("symbol", "children")

    def __init__(self, symbol: str) -> None:
        self.symbol = symbol
        self.children: list[_Node] = []


def decode_kexpression(kexp: tuple[str, ...] | list[str], *, ordered: bool = True) -> tuple[str, ...]:
    """Decode a K-expression breadth-first into a tree; returns its prefix symbols.

    With ``ordered``, the children of the symmetric operators (Add, Mul) are sorted by their own
    symbol (a stable sort), as in the paper, so ``Add(R, Mul(R, R))`` becomes ``Add(Mul(R, R), R)``.
    """
    symbols = iter(kexp)
    root = _Node(next(symbols))
    queue = [root]
    nodes = [root]
    head = 0
    while head < len(queue):
        node = queue[head]
        head += 1
        if node.symbol in OP_CODE:
            for _ in range(2):
                try:
                    child = _Node(next(symbols))
                except StopIteration:
                    raise ValueError(f"K-expression {list(kexp)} is too short for its head") from None
                node.children.append(child)
                queue.append(child)
                nodes.append(child)
    if ordered:
        for node in nodes:
            if node.symbol in SYMMETRIC:
                node.children.sort(key=lambda c: c.symbol)
    out: list[str] = []

    def walk(n: _Node) -> None:
        out.append(n.symbol)
        for c in n.children:
            walk(c)

    walk(root)
    return tuple(out)


def structure_string(prefix: tuple[str, ...]) -> str:
    """``('Add', 'R', 'R')`` → ``'Add(R,R)'``."""
    pos = 0

    def walk() -> str:
        nonlocal pos
        s = prefix[pos]
        pos += 1
        if s in OP_CODE:
            a = walk()
            b = walk()
            return f"{s}({a},{b})"
        return s

    return walk()


@cache
def structures(head: int) -> tuple[tuple[str, ...], ...]:
    """Distinct tree structures of head length ``head`` (prefix symbols with ``'R'`` leaf slots), sorted."""
    head = check_head(head)
    tail = ("R",) * (head + 1)
    found = {decode_kexpression(h + tail) for h in product(HEAD_SYMBOLS, repeat=head)}
    return tuple(sorted(found, key=lambda p: (len(p), structure_string(p))))


def check_head(head: int) -> int:
    if not isinstance(head, (int, np.integer)) or isinstance(head, bool) or head < 1:
        raise UsageError(f"head length = {head!r} is invalid; expected an integer >= 1")
    if head > MAX_HEAD:
        raise UsageError(f"head length = {head} is too large; expected at most {MAX_HEAD} "
                         f"(6**{head} K-expressions to decode)")
    return int(head)


def raw_count(head: int, n_features: int) -> int:
    """Leaf assignments before folding and deduplication: an upper bound on the expression count."""
    return sum((n_features + 1) ** sum(1 for s in p if s == "R") for p in structures(head))


def _alphabet(n_features: int) -> int:
    return FEAT0 + n_features


def _check_codable(head: int, n_features: int) -> None:
    if _alphabet(n_features) ** max_length(head) >= 2**63:
        raise ResourceError(f"head length {head} with {n_features} features cannot be enumerated "
                            "(expression codes exceed 63 bits); use fewer features or a shorter head")


# ------------------------------------------------------------------------------- leaf assignment/fold
def _template(prefix: tuple[str, ...]) -> np.ndarray:
    return np.array([OP_CODE.get(s, PAD) for s in prefix], dtype=np.int64)


@njit(cache=True)
def _subtree_ends(tok: np.ndarray, n: int) -> np.ndarray:
    """end[i] = one past the last prefix position of the subtree rooted at i."""
    end = np.empty(n, dtype=np.int64)
    for i in range(n - 1, -1, -1):
        if 1 <= tok[i] <= 5:
            end[i] = end[end[i + 1]]
        else:
            end[i] = i + 1
    return end


@njit(cache=True)
def assign_fold_encode(template: np.ndarray, n_features: int, width: int) -> np.ndarray:
    """All leaf assignments of one structure, folded and encoded as integer codes.

    ``template`` holds operator codes and 0 at leaf slots. Each slot takes a feature 0..F-1 or the
    constant (value F), in ``itertools.product`` order. Maximal all-constant subtrees fold to one
    constant. The folded prefix tokens t_0..t_{m-1}, padded with zeros to ``width``, encode as
    sum_i t_i * B**(width-1-i), B = 7 + F: the code order is the lexicographic token order.
    """
    n = template.shape[0]
    base = FEAT0 + n_features
    slots = np.empty(n, dtype=np.int64)
    m = 0
    for i in range(n):
        if template[i] == 0:
            slots[m] = i
            m += 1
    total = 1
    for _ in range(m):
        total *= n_features + 1
    end = _subtree_ends(template, n)
    tok = template.copy()
    allc = np.empty(n, dtype=np.bool_)
    digits = np.zeros(m, dtype=np.int64)
    out = np.empty(total, dtype=np.int64)
    for a in range(total):
        rem = a
        for s in range(m - 1, -1, -1):
            digits[s] = rem % (n_features + 1)
            rem //= n_features + 1
        for s in range(m):
            d = digits[s]
            tok[slots[s]] = CONST if d == n_features else FEAT0 + d
        for i in range(n - 1, -1, -1):
            if 1 <= tok[i] <= 5:
                allc[i] = allc[i + 1] and allc[end[i + 1]]
            else:
                allc[i] = tok[i] == CONST
        code = 0
        written = 0
        i = 0
        while i < n:
            if allc[i]:
                code = code * base + CONST
                i = end[i]
            else:
                code = code * base + tok[i]
                i += 1
            written += 1
        for _ in range(width - written):
            code = code * base
        out[a] = code
    return out


def assign_fold_reference(prefix: tuple[str, ...], n_features: int) -> list[str]:
    """Plain-Python reference of the leaf assignment and folding on official strings (tests only)."""
    import re

    base = structure_string(prefix)
    fold = re.compile(r"\w{3}\(erc,erc\)")
    out = []
    for combo in product(range(n_features + 1), repeat=base.count("R")):
        s = base
        for c in combo:
            s = s.replace("R", "erc" if c == n_features else f"xdata[{c}]", 1)
        m = fold.search(s)
        while m:
            s = s.replace(m.group(), "erc")
            m = fold.search(s)
        for i in range(s.count("erc")):
            s = s.replace("erc", f"x[{i}]", 1)
        out.append(s)
    return out


# --------------------------------------------------------------------------------------- expressions
@dataclass(frozen=True)
class Expressions:
    """The deduplicated expressions of one (head, F): prefix token rows sorted by (length, tokens)."""

    head: int
    n_features: int
    tokens: np.ndarray  # (m, 2h+1) int8, zero-padded
    length: np.ndarray  # (m,) int8, node count
    n_const: np.ndarray  # (m,) int8

    def __len__(self) -> int:
        return int(self.tokens.shape[0])

    def counts_by_length(self) -> dict[int, int]:
        lengths, counts = np.unique(self.length, return_counts=True)
        return {int(a): int(b) for a, b in zip(lengths, counts, strict=True)}

    def subset(self, index: np.ndarray) -> Expressions:
        return Expressions(self.head, self.n_features, self.tokens[index], self.length[index], self.n_const[index])

    def shard(self, k: int, n: int) -> np.ndarray:
        """Indices of shard ``k`` of ``n`` (1-based): every n-th expression, so shards stay balanced."""
        return np.arange(k - 1, len(self), n, dtype=np.int64)


def enumerate_expressions(head: int, n_features: int, *, limit: int | None = None) -> Expressions:
    """Every distinct folded expression of head length ``head`` over ``n_features`` features.

    Refuses (UsageError: an absurd size is a bad option, exit 2) when the raw assignment count exceeds
    ``limit`` (sr-apo-search's --max-expressions).
    """
    head = check_head(head)
    if n_features < 1:
        raise UsageError(f"number of features = {n_features}; expected at least 1")
    raw = raw_count(head, n_features)
    if limit is not None and raw > limit:
        raise UsageError(f"head length {head} with {n_features} features means up to {raw:,} expressions to "
                         f"fit, above --max-expressions {limit:,}; raise --max-expressions to run it anyway")
    _check_codable(head, n_features)
    width = max_length(head)
    codes = _sorted_distinct(np.concatenate([assign_fold_encode(_template(p), n_features, width)
                                             for p in structures(head)]))
    base = _alphabet(n_features)
    tokens = np.empty((codes.shape[0], width), dtype=np.int8)
    rest = codes.copy()
    for i in range(width - 1, -1, -1):
        tokens[:, i] = rest % base
        rest //= base
    length = (tokens != PAD).sum(axis=1).astype(np.int8)
    n_const = (tokens == CONST).sum(axis=1).astype(np.int8)
    order = np.argsort(length, kind="stable")  # by length, then token order (codes are sorted)
    return Expressions(head, n_features, tokens[order], length[order], n_const[order])


def _sorted_distinct(codes: np.ndarray) -> np.ndarray:
    """np.unique by an in-place sort: numpy >= 2.3's hash-based unique took 48 s of the 54 s that
    enumerating h = 4, F = 6 (11 million codes) took; sorting takes about one."""
    codes.sort()
    keep = np.empty(codes.shape[0], dtype=bool)
    keep[:1] = True
    np.not_equal(codes[1:], codes[:-1], out=keep[1:])
    return codes[keep]


# ------------------------------------------------------------------------------------------ rendering
def _row(tokens: np.ndarray | list[int]) -> list[int]:
    return [int(t) for t in tokens if int(t) != PAD]


def to_official(tokens: np.ndarray | list[int]) -> str:
    """Official prefix string: ``Sub(Mul(xdata[0],x[0]),Div(x[1],xdata[2]))``."""
    row = _row(tokens)
    pos = 0
    nconst = 0

    def walk() -> str:
        nonlocal pos, nconst
        t = row[pos]
        pos += 1
        if ADD <= t <= POW:
            a = walk()
            b = walk()
            return f"{OPERATORS[t - 1]}({a},{b})"
        if t == CONST:
            nconst += 1
            return f"x[{nconst - 1}]"
        return f"xdata[{t - FEAT0}]"

    return walk()


def parse_official(text: str, n_features: int | None = None) -> list[int]:
    """Inverse of :func:`to_official` (constants must be numbered left to right from 0)."""
    import re

    tokens: list[int] = []
    pos = 0
    nconst = 0
    pattern = re.compile(r"\s*(?:(Add|Sub|Mul|Div|Pow)\(|xdata\[(\d+)\]|x\[(\d+)\]|(,)|(\)))")
    depth_ok = True
    while pos < len(text):
        m = pattern.match(text, pos)
        if not m:
            raise ValueError(f"cannot parse expression {text!r} at position {pos}")
        pos = m.end()
        if m.group(1):
            tokens.append(OP_CODE[m.group(1)])
        elif m.group(2) is not None:
            j = int(m.group(2))
            if n_features is not None and j >= n_features:
                raise ValueError(f"expression {text!r} uses xdata[{j}] but there are {n_features} features")
            tokens.append(FEAT0 + j)
        elif m.group(3) is not None:
            if int(m.group(3)) != nconst:
                depth_ok = False
            nconst += 1
            tokens.append(CONST)
    if not depth_ok:
        raise ValueError(f"expression {text!r}: constants must be numbered x[0], x[1], ... left to right")
    return tokens


def to_infix(tokens: np.ndarray | list[int], feature_names: list[str] | None = None,
             constants: np.ndarray | list[float] | None = None, *, digits: int = 6) -> str:
    """Readable infix: ``(x0 * c0) - (c1 / x2)``; ``|a|^b`` for Pow. Constants as values when given."""
    row = _row(tokens)
    pos = 0
    nconst = 0

    def leaf(t: int) -> str:
        nonlocal nconst
        if t == CONST:
            nconst += 1
            if constants is not None:
                return f"{float(constants[nconst - 1]):.{digits}g}"
            return f"c{nconst - 1}"
        j = t - FEAT0
        return feature_names[j] if feature_names is not None else f"x{j}"

    def walk(top: bool) -> str:
        nonlocal pos
        t = row[pos]
        pos += 1
        if ADD <= t <= POW:
            a = walk(False)
            b = walk(False)
            s = f"|{a}|^{b}" if t == POW else f"{a} {INFIX[t]} {b}"
            return s if top else f"({s})"
        return leaf(t)

    return walk(True)
