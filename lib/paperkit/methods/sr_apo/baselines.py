"""The paper's constant fitting: ``scipy.optimize.minimize`` with default settings, per expression.

This is the fidelity engine and the speed baseline of the numba engine. As in the official script,
each expression is turned into a Python function of ``(x, xdata)`` built from Add/Sub/Mul/Div/Pow on
NumPy arrays, the mean squared error is minimised from ``numpy.random.seed(seed); 2 * rand(k) - 1``
with one of eight scipy methods, and a fit whose prediction is not finite (or that raises) is a
failure (NaN). Constant-free expressions are scored directly.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np

from paperkit.methods.sr_apo.grammar import to_official

SCIPY_METHODS = ("BFGS", "CG", "L-BFGS-B", "Nelder-Mead", "Powell", "SLSQP", "TNC", "trust-constr")


def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.power(np.abs(a), b)


_NAMESPACE = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide, "Pow": _pow,
              "__builtins__": {}}


def compile_expression(official: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``'Mul(xdata[0],x[0])'`` → ``f(x, xdata)``. Only strings made by :func:`to_official` are accepted."""
    if any(ch not in "AddSubMulDivPowxdat[],0123456789()" for ch in official):
        raise ValueError(f"not an expression of the grammar: {official!r}")
    return eval("lambda x, xdata: " + official, dict(_NAMESPACE))  # noqa: S307 - grammar-checked above


def _mse(x: np.ndarray, xdata: np.ndarray, y: np.ndarray, f: Callable) -> float:
    return float(np.mean((f(x, xdata) - y) ** 2))


def fit_scipy_one(official: str, Xt: np.ndarray, y: np.ndarray, x0: np.ndarray, method: str
                  ) -> tuple[float, np.ndarray, float, bool]:
    """Fit one expression; returns (mean squared error, constants, iterations, ok)."""
    from scipy.optimize import minimize

    f = compile_expression(official)
    k = official.count("x[")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if k:
                res = minimize(_mse, x0=x0[:k].copy(), args=(Xt, y, f), method=method)
                theta = np.asarray(res.x, dtype=np.float64)
                nit = float(getattr(res, "nit", math.nan))
            else:
                theta = np.empty(0)
                nit = math.nan
            pred = np.broadcast_to(f(theta, Xt), y.shape)
        except (RuntimeError, ValueError, ArithmeticError):
            return math.nan, np.full(k, np.nan), math.nan, False
        if not np.all(np.isfinite(pred)):
            return math.nan, theta, nit, False
        return float(np.mean((pred - y) ** 2)), theta, nit, True


def fit_scipy(tokens: np.ndarray, Xt: np.ndarray, y: np.ndarray, x0: np.ndarray, method: str,
              kmax: int) -> dict[str, np.ndarray]:
    """Fit every expression (token rows) in this process; arrays like the numba engine's."""
    m = tokens.shape[0]
    out = {"ssr": np.full(m, np.nan), "params": np.full((m, max(kmax, 0)), np.nan),
           "nit": np.full(m, np.nan), "ok": np.zeros(m, dtype=bool)}
    n = y.shape[0]
    for e in range(m):
        mse, theta, nit, ok = fit_scipy_one(to_official(tokens[e]), Xt, y, x0, method)
        out["ssr"][e] = mse * n
        out["params"][e, :theta.shape[0]] = theta
        out["nit"][e] = nit
        out["ok"][e] = ok
    return out
