"""Front formulas in the user's units and column names (the search fits standardised data).

sr-apo-search fits every expression to standardised features ``z_j = (x_j - mean_j) / std_j`` and the
z-scored target ``(y - mean_y) / std_y``, both with the population standard deviation (ddof = 0), as
the paper's script. A front expression ``f`` therefore predicts ``y = mean_y + std_y * f(z)``; this
module writes that formula with the data's column names and the constants at full double precision
(17 significant digits; nothing rounded to 6), and exports it as sympy, LaTeX or Python (numpy) text.

The expression tree is built from our own token rows (never from text), so sympy only sees trees we
made.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from paperkit.core import io
from paperkit.core.errors import InputError, UsageError

EXPORTS = ("sympy", "latex", "python")
STANDARDISATION_FILE = "standardisation.json"
_DPS = 17  # significant digits that round-trip every double


@dataclass(frozen=True)
class Standardisation:
    """How a search standardised its data: per-feature mean and std, the target's, ddof = 0."""

    features: tuple[str, ...]
    x_mean: tuple[float, ...]
    x_std: tuple[float, ...]
    target: str
    y_mean: float
    y_std: float
    ddof: int = 0

    @classmethod
    def of(cls, X: np.ndarray, y: np.ndarray, features: Sequence[str], target: str) -> Standardisation:
        """The standardisation sr-apo-search applies (:func:`paperkit.methods.sr_apo.data.prepare`)."""
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        return cls(tuple(features), tuple(map(float, X.mean(axis=0))), tuple(map(float, X.std(axis=0))), target,
                   float(np.mean(y)), float(np.std(y)))

    def to_json(self) -> dict:
        d = asdict(self)
        d["note"] = "z_j = (x_j - x_mean_j) / x_std_j, y = y_mean + y_std * f(z); std with ddof = 0"
        return d

    @classmethod
    def from_json(cls, d: dict, source: str = "standardisation") -> Standardisation:
        try:
            s = cls(tuple(map(str, d["features"])), tuple(map(float, d["x_mean"])), tuple(map(float, d["x_std"])),
                    str(d["target"]), float(d["y_mean"]), float(d["y_std"]), int(d.get("ddof", 0)))
        except (KeyError, TypeError, ValueError) as e:
            raise InputError(f"{source}: not a standardisation record ({e}); expected features, x_mean, x_std, "
                             "target, y_mean, y_std") from None
        if not (len(s.features) == len(s.x_mean) == len(s.x_std)):
            raise InputError(f"{source}: features, x_mean and x_std have different lengths")
        if not all(math.isfinite(v) for v in (*s.x_mean, *s.x_std, s.y_mean, s.y_std)) or min(s.x_std) <= 0 \
                or s.y_std <= 0:
            raise InputError(f"{source}: means must be finite and standard deviations positive")
        return s


def read_standardisation(path: str | os.PathLike) -> Standardisation:
    return Standardisation.from_json(io.read_json(path), io.display_name(path))


def write_standardisation(path: str | os.PathLike, s: Standardisation) -> None:
    io.write_json(path, s.to_json())


def _num(v: float):
    import sympy

    return sympy.Float(float(v), _DPS)


def prefix_to_sympy(tokens: Sequence[int], constant, feature):
    """A prefix token row as a sympy tree; ``constant(i)`` and ``feature(j)`` give the leaves (0-based)."""
    import sympy

    from paperkit.methods.sr_apo.grammar import ADD, CONST, DIV, FEAT0, MUL, SUB

    row = [int(t) for t in tokens if int(t) != 0]
    pos = 0
    nconst = 0

    def walk():
        nonlocal pos, nconst
        t = row[pos]
        pos += 1
        if t == CONST:
            nconst += 1
            return constant(nconst - 1)
        if t >= FEAT0:
            return feature(t - FEAT0)
        a = walk()
        b = walk()
        if t == ADD:
            return a + b
        if t == SUB:
            return a - b
        if t == MUL:
            return a * b
        if t == DIV:
            return a / b
        return sympy.Abs(a) ** b

    return walk()


def original_formula(tokens: Sequence[int], params: Sequence[float], s: Standardisation):
    """``mean_y + std_y * f((x - mean) / std)`` as a sympy expression in the data's column names."""
    import sympy

    params = [float(p) for p in params]
    symbols = [sympy.Symbol(name, real=True) for name in s.features]

    def constant(i):
        if i >= len(params):
            raise InputError(f"the expression has more constants than the {len(params)} parameter(s) given")
        return _num(params[i])

    def feature(j):
        if j >= len(symbols):
            raise InputError(f"the expression uses feature {j} (0-based) but the standardisation has "
                             f"{len(symbols)} features")
        return (symbols[j] - _num(s.x_mean[j])) / _num(s.x_std[j])

    return _num(s.y_mean) + _num(s.y_std) * prefix_to_sympy(tokens, constant, feature)


def export(expr, fmt: str = "sympy") -> str:
    """The expression as text: sympy's own syntax, LaTeX, or a Python expression over numpy arrays."""
    import sympy

    if fmt == "sympy":
        return str(expr)
    if fmt == "latex":
        return sympy.latex(expr)
    if fmt == "python":
        from sympy.printing.numpy import NumPyPrinter

        return NumPyPrinter({"fully_qualified_modules": True}).doprint(expr)
    raise UsageError(f"export = {fmt!r}; expected one of {', '.join(EXPORTS)}")
