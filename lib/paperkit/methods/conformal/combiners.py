"""Combiners of K fold p-values and the methods built from them (Gasparin & Ramdas 2025, Sections 3-4).

A fold p-value ``p_k(y)`` is valid for the test point; the paper's sets are ``{y : F(p_1..p_K) > level}``
for a combiner ``F`` and a level tied to ``alpha``. The combiners come from Gasparin, Wang & Ramdas,
"Combining exchangeable p-values" (PNAS 2025):

* ``mean``  ``A(p) = mean_k p_k``; ``2 A(p)`` is a valid p-value (mod-cross, level ``alpha``).
* ``e``     ``min_{j<=K} mean(p_1..p_j)``; valid because fold p-values are exchangeable (e-mod-cross).
* ``u``     ``A(p) / (2 - U)`` with ``U ~ Unif(0, 1)`` independent of the data (u-mod-cross).
* ``eu``    ``min(p_1 / (2 - U), e(p))`` (eu-mod-cross).
* ``vovk``  ``(1 + sum_k #{i in S_k : R_i >= R}) / (n + 1)``, Vovk's cross-conformal p-value.
* ``min``   ``min_k p_k`` (Bonferroni, level ``alpha / K`` or ``2 alpha / K``).

Every combiner is non-decreasing in each fold p-value; the exact set computation relies on that.
The "improved Vovk" methods apply ``e``/``u``/``eu`` at ``alpha' = (alpha (n + 1) + K - 1) / (n + K)``:
Vovk's set equals the mod-cross set at ``alpha'`` (equal folds) and ``1 - 2 alpha'`` is Vovk's bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperkit.core.errors import UsageError

# A set keeps y when value > level + TIE_EPS: the paper's strict inequality, with exact rational ties
# (value == level) kept out even when floating point rounds the value a hair above the level.
TIE_EPS = 1e-12

COMBINERS = ("mean", "e", "u", "eu", "vovk", "min")
# Integer codes used inside the numba kernels.
COMBINER_CODE = {name: i for i, name in enumerate(COMBINERS)}


@dataclass(frozen=True)
class Method:
    """A named prediction-set method: how it is built and what it guarantees."""

    name: str
    kind: str  # "combiner" (exact union of intervals from fold p-values) or "interval" (a baseline)
    combiner: str | None
    level: str | None  # "alpha", "alpha_prime", "alpha_over_k", "2alpha_over_k"
    label: str
    randomized: bool = False


METHODS: dict[str, Method] = {m.name: m for m in (
    Method("mod", "combiner", "mean", "alpha", "mod-cross: mean of fold p-values > alpha"),
    Method("e-mod", "combiner", "e", "alpha", "e-mod-cross: min_j mean(p_1..p_j) > alpha"),
    Method("u-mod", "combiner", "u", "alpha", "u-mod-cross: mean(p) / (2 - U) > alpha", randomized=True),
    Method("eu-mod", "combiner", "eu", "alpha", "eu-mod-cross: min(p_1 / (2 - U), e-mean) > alpha",
           randomized=True),
    Method("cross", "combiner", "vovk", "alpha", "Vovk cross-conformal: pooled p-value > alpha"),
    Method("e-cross", "combiner", "e", "alpha_prime", "improved Vovk (e) at alpha'"),
    Method("u-cross", "combiner", "u", "alpha_prime", "improved Vovk (u) at alpha'", randomized=True),
    Method("eu-cross", "combiner", "eu", "alpha_prime", "improved Vovk (eu) at alpha'", randomized=True),
    Method("bonferroni", "combiner", "min", "alpha_over_k", "Bonferroni: min_k p_k > alpha / K"),
    Method("bonferroni-2a", "combiner", "min", "2alpha_over_k", "Bonferroni: min_k p_k > 2 alpha / K"),
    Method("cvplus", "interval", None, None, "CV+ (Barber et al. 2021) on the same folds"),
    Method("jackknife+", "interval", None, None, "jackknife+ (Barber et al. 2021), n leave-one-out fits"),
    Method("split", "interval", None, None, "split conformal, 50/50, level alpha"),
    Method("split-2a", "interval", None, None, "split conformal, 50/50, level 2 alpha"),
    Method("full", "interval", None, None, "full conformal (ridge/OLS refitted for every candidate y; exact)"),
)}
COMBINER_METHODS = tuple(n for n, m in METHODS.items() if m.kind == "combiner")
DEFAULT_METHODS = ("mod", "e-mod", "u-mod", "eu-mod", "cross", "e-cross", "u-cross", "eu-cross", "cvplus", "split")


def parse_methods(spec: str | list[str] | tuple[str, ...], *, allowed: tuple[str, ...] | None = None) -> list[str]:
    """A validated, de-duplicated list of method names from ``"mod,e-mod"`` or a list ("all" = every one)."""
    names = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    allowed = tuple(METHODS) if allowed is None else allowed
    if names == ["all"]:
        return list(allowed)
    if not names:
        raise UsageError("no method given; expected a comma-separated list of " + ", ".join(allowed))
    out: list[str] = []
    for n in names:
        if n not in allowed:
            raise UsageError(f"unknown method '{n}'; expected one of {', '.join(allowed)} (or 'all')")
        if n not in out:
            out.append(n)
    return out


def check_alpha(alpha: float) -> float:
    if not (isinstance(alpha, (int, float, np.floating)) and 0.0 < float(alpha) <= 0.5):
        raise UsageError(f"alpha = {alpha!r} is out of range; expected a value in (0, 0.5]")
    return float(alpha)


def alpha_prime(alpha: float, n: int, n_folds: int) -> float:
    """The level at which mod-cross equals Vovk's cross-conformal set: (alpha (n+1) + K - 1) / (n + K)."""
    return (alpha * (n + 1) + n_folds - 1) / (n + n_folds)


def method_level(method: str, alpha: float, n: int, n_folds: int) -> float:
    """The threshold the method's combined value must exceed."""
    level = METHODS[method].level
    if level == "alpha":
        return alpha
    if level == "alpha_prime":
        return alpha_prime(alpha, n, n_folds)
    if level == "alpha_over_k":
        return alpha / n_folds
    if level == "2alpha_over_k":
        return 2 * alpha / n_folds
    raise ValueError(f"method '{method}' has no combiner level")


def guarantee(method: str, alpha: float, n: int, n_folds: int) -> float:
    """The method's marginal coverage guarantee (a lower bound; may be negative, i.e. vacuous).

    Cross-conformal bounds assume folds of equal size (n divisible by K), as in the paper.
    """
    K = n_folds
    vovk = 1 - 2 * alpha - 2 * (1 - alpha) * (K - 1) / (n + K)
    table = {
        "mod": 1 - 2 * alpha, "e-mod": 1 - 2 * alpha, "u-mod": 1 - 2 * alpha, "eu-mod": 1 - 2 * alpha,
        "cross": vovk, "e-cross": vovk, "u-cross": vovk, "eu-cross": vovk,
        "bonferroni": 1 - alpha, "bonferroni-2a": 1 - 2 * alpha,
        # Barber et al. (2021), Theorem 4.
        "cvplus": 1 - 2 * alpha - min(2 * (1 - 1 / K) / (n / K + 1), (1 - K / n) / (K + 1)),
        "jackknife+": 1 - 2 * alpha,
        "split": 1 - alpha, "split-2a": 1 - 2 * alpha, "full": 1 - alpha,
    }
    return float(table[method])


def alpha_for_coverage(method: str, coverage: float, n: int, n_folds: int) -> float:
    """The ``alpha`` at which ``method``'s guarantee equals ``coverage`` (``--coverage`` in conformal-cv).

    Every guarantee is affine in alpha (``1 - 2 alpha`` for the mod-cross family, ``1 - alpha`` for split
    and Bonferroni, Vovk's and CV+'s bounds with their finite-sample terms), so the level is solved
    exactly. Raises UsageError when no alpha in (0, 0.5] reaches ``coverage`` (e.g. Vovk's bound with
    few rows per fold).
    """
    if not 0.0 < float(coverage) < 1.0:
        raise UsageError(f"coverage = {coverage!r} is out of range; expected a value in (0, 1)")
    g0, g1 = guarantee(method, 0.0, n, n_folds), guarantee(method, 1.0, n, n_folds)
    alpha = (g0 - float(coverage)) / (g0 - g1)
    if not 0.0 < alpha <= 0.5 + 1e-12:
        best = guarantee(method, 1e-9, n, n_folds)
        raise UsageError(f"coverage {coverage:g} is out of reach for {method} with n = {n}, K = {n_folds} "
                         f"(its guarantee is at most {best:.4f} and at least {guarantee(method, 0.5, n, n_folds):.4f}); "
                         "lower --coverage or drop the method")
    # 12 significant digits: (1 - 0.9) / 2 is 0.05, not 0.04999999999999999
    return min(float(f"{alpha:.12g}"), 0.5)


# ------------------------------------------------------------------------------- plain combiners
def _as_pvalues(p: np.ndarray) -> np.ndarray:
    p = np.asarray(p, dtype=np.float64)
    if p.ndim == 0 or p.shape[-1] < 1:
        raise UsageError(f"fold p-values have shape {p.shape}; expected (..., K) with K >= 1 folds")
    return p


def _u_values(u: np.ndarray | float | None, shape: tuple[int, ...]) -> np.ndarray:
    if u is None:
        raise UsageError("the u and eu combiners need U ~ Unif(0, 1) values")
    u = np.broadcast_to(np.asarray(u, dtype=np.float64), shape)
    return u


def combine(p: np.ndarray, combiner: str, u: np.ndarray | float | None = None) -> np.ndarray:
    """Combine fold p-values along the last axis (folds in their random order).

    ``u`` (for ``u``/``eu``) broadcasts against ``p.shape[:-1]``: one ``U`` per test point.
    Not for ``vovk``, which needs the fold counts (see :func:`vovk_from_pvalues`).
    """
    p = _as_pvalues(p)
    if combiner == "mean":
        return p.mean(axis=-1)
    if combiner == "e":
        return e_combine(p)
    if combiner == "u":
        return p.mean(axis=-1) / (2.0 - _u_values(u, p.shape[:-1]))
    if combiner == "eu":
        return np.minimum(p[..., 0] / (2.0 - _u_values(u, p.shape[:-1])), e_combine(p))
    if combiner == "min":
        return p.min(axis=-1)
    raise UsageError(f"unknown combiner '{combiner}'; expected one of mean, e, u, eu, min")


def e_combine(p: np.ndarray) -> np.ndarray:
    """``min_j (p_1 + ... + p_j) / j`` along the last axis (running sums in fold order)."""
    p = _as_pvalues(p)
    K = p.shape[-1]
    return (np.cumsum(p, axis=-1) / np.arange(1, K + 1)).min(axis=-1)


def vovk_from_pvalues(p: np.ndarray, fold_sizes: np.ndarray) -> np.ndarray:
    """Vovk's pooled p-value from fold p-values ``(1 + c_k) / (m_k + 1)``: ``(1 + sum c_k) / (n + 1)``."""
    p = _as_pvalues(p)
    m = np.asarray(fold_sizes, dtype=np.float64)
    counts = np.rint(p * (m + 1) - 1)
    return (1 + counts.sum(axis=-1)) / (m.sum() + 1)


def in_set(value: np.ndarray, level: float) -> np.ndarray:
    """Whether each combined value keeps its candidate (strictly above the level)."""
    return np.asarray(value) > level + TIE_EPS
