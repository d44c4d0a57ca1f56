"""Full conformal prediction for ridge and least squares, exact (the paper's "full conformal" baseline).

Full conformal refits the model on the n training rows plus the test row ``(x, z)`` for every
candidate ``z`` and keeps ``z`` when ``p(z) = #{i <= n + 1 : |r_i(z)| >= |r_{n+1}(z)|} / (n + 1) > alpha``
(coverage >= 1 - alpha). For a linear smoother (ridge, OLS, min-norm OLS; intercept unpenalised) the
refitted residuals are affine in ``z``: ``r(z) = a + b z`` with ``a = (I - H) (y, 0)`` and
``b = (I - H) e_{n+1}`` (Vovk, Gammerman & Shafer's ridge regression confidence machine; Burnaev &
Vovk 2014; Lei 2019). So ``{z : |a_i + b_i z| >= |a_{n+1} + b_{n+1} z|}`` is the set where the product
``(a_i - a_{n+1} + (b_i - b_{n+1}) z)(a_i + a_{n+1} + (b_i + b_{n+1}) z)`` is >= 0: an interval, the
complement of one, a half-line, everything or nothing, with end points at the two roots. The count is
constant between sorted roots; one sweep gives the exact set (a union of closed intervals) per test row,
O(n log n) after an O(n d) residual path, instead of a refit per grid point.

A ``StandardScaler`` in front of the ridge (``--model ridge`` is such a pipeline) is refitted too: it
is fitted on the n + 1 feature rows, which do not depend on ``z``; ridge on standardised features is
ridge on the raw ones with penalty ``lambda * sum_j s_j^2 beta_j^2`` (``s_j`` the column's standard
deviation over the n + 1 rows, centring absorbed by the intercept), so ``H`` is computed per test row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit.core.errors import UsageError
from paperkit.methods.conformal.combiners import in_set
from paperkit.methods.conformal.sets import PredictionSets

SNAP = 1e-9  # |a|, |b| below this (relative to max |y| and to 1) are rounding noise of an exact 0
FULL_MODELS = "ols (LinearRegression), minnorm-ols, ridge (with or without its StandardScaler)"


def linear_spec(estimator: Any) -> tuple[float, bool, bool]:
    """``(penalty, intercept, standardise)`` of a supported linear model; UsageError otherwise."""
    from sklearn.linear_model import LinearRegression, Ridge
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    from paperkit.methods.conformal.models import MinNormOLS

    scaled = False
    est = estimator
    if isinstance(est, Pipeline):
        steps = [s for _, s in est.steps if s is not None and s != "passthrough"]
        if len(steps) == 2 and isinstance(steps[0], StandardScaler) and steps[0].with_mean and steps[0].with_std:
            scaled, est = True, steps[1]
        elif len(steps) == 1:
            est = steps[0]
        else:
            est = None
    if isinstance(est, Ridge) and not getattr(est, "positive", False) and np.ndim(est.alpha) == 0:
        if float(est.alpha) < 0:
            raise UsageError(f"ridge alpha = {est.alpha} is negative; full conformal needs alpha >= 0")
        return float(est.alpha), bool(est.fit_intercept), scaled
    if isinstance(est, LinearRegression) and not est.positive:
        return 0.0, bool(est.fit_intercept), scaled
    if isinstance(est, MinNormOLS):
        return 0.0, bool(est.fit_intercept), scaled
    raise UsageError(f"the full conformal method is exact for linear smoothers only; expected the model to be "
                     f"{FULL_MODELS}, got {type(estimator).__name__}")


def residual_paths(X: np.ndarray, y: np.ndarray, x_test: np.ndarray, penalty: float, intercept: bool,
                   scaled: bool) -> tuple[np.ndarray, np.ndarray]:
    """``a``, ``b`` (T, n + 1): refitted residuals ``a + b z`` of the n training rows and the test row
    (last column) when the test row's target is ``z``."""
    X = np.asarray(X, dtype=np.float64)
    x_test = np.asarray(x_test, dtype=np.float64)
    n, p = X.shape
    T = len(x_test)
    Z0 = np.hstack([np.ones((n, 1)), X]) if intercept else X
    zt = np.hstack([np.ones((T, 1)), x_test]) if intercept else x_test
    d = Z0.shape[1]
    G0 = Z0.T @ Z0
    c = Z0.T @ y
    A = G0[None, :, :] + zt[:, :, None] * zt[:, None, :]
    if penalty > 0:
        if scaled:  # the scaler's variances over the n + 1 rows (ddof 0), 1 for a constant column
            s1, s2 = X.sum(axis=0), (X * X).sum(axis=0)
            mean = (s1[None, :] + x_test) / (n + 1)
            var = (s2[None, :] + x_test * x_test) / (n + 1) - mean * mean
            var = np.maximum(var, 0.0)
            # sklearn sets the scale of a (numerically) constant column to 1
            const = np.sqrt(var) < 10 * np.finfo(np.float64).eps * np.maximum(np.abs(mean), 1.0)
            pen = np.where(const, 1.0, var) * penalty
        else:
            pen = np.full((T, p), penalty)
        idx = np.arange(int(intercept), d)
        A[:, idx, idx] += pen
        rhs = np.stack([np.broadcast_to(c, (T, d)), zt], axis=2)  # (T, d, 2)
        sol = np.linalg.solve(A, rhs)
    else:  # least squares: the pseudo-inverse gives the projection (min-norm when p > n)
        sol = np.linalg.pinv(A, hermitian=True) @ np.stack([np.broadcast_to(c, (T, d)), zt], axis=2)
    beta0, w = sol[:, :, 0], sol[:, :, 1]  # coefficients at z = 0 and their derivative in z
    a = np.empty((T, n + 1))
    b = np.empty((T, n + 1))
    a[:, :n] = y[None, :] - beta0 @ Z0.T
    b[:, :n] = -(w @ Z0.T)
    a[:, n] = -np.einsum("td,td->t", zt, beta0)
    b[:, n] = 1.0 - np.einsum("td,td->t", zt, w)
    # Rounding noise of an interpolating fit (p >= n: every refitted residual is 0, so p(z) = 1 and
    # the set is the whole line) would otherwise decide ties at random: snap it to 0.
    a[np.abs(a) <= SNAP * max(1.0, float(np.max(np.abs(y), initial=0.0)))] = 0.0
    b[np.abs(b) <= SNAP] = 0.0
    return a, b


def _regions(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per training row, ``{z : |a_i + b_i z| >= |a_t + b_t z|}`` as two closed intervals
    ``[l1, r1] u [l2, r2]`` (empty when l > r; +-inf for unbounded ends)."""
    at, bt = a[-1], b[-1]
    am, dm = a[:-1] - at, b[:-1] - bt
    ap, dp = a[:-1] + at, b[:-1] + bt
    n = len(am)
    inf = np.inf
    l1, r1 = np.full(n, inf), np.full(n, -inf)  # empty
    l2, r2 = np.full(n, inf), np.full(n, -inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        z1, z2 = -am / dm, -ap / dp
    both = (dm != 0) & (dp != 0)
    lo, hi = np.minimum(z1, z2), np.maximum(z1, z2)
    outer = both & (dm * dp > 0)   # the product grows at both ends: (-inf, lo] u [hi, inf)
    inner = both & (dm * dp < 0)   # [lo, hi]
    l1[outer], r1[outer], l2[outer], r2[outer] = -inf, lo[outer], hi[outer], inf
    l1[inner], r1[inner] = lo[inner], hi[inner]
    # one factor constant: a half-line (or everything when that constant is 0)
    for flat, const, slope, root in ((dm == 0, am, dp, z2), (dp == 0, ap, dm, z1)):
        one = flat & (slope != 0)
        zero = one & (const == 0)
        l1[zero], r1[zero] = -inf, inf
        up = one & (const * slope > 0)
        down = one & (const * slope < 0)
        l1[up], r1[up] = root[up], inf
        l1[down], r1[down] = -inf, root[down]
    none = (dm == 0) & (dp == 0)
    every = none & (am * ap >= 0)
    l1[every], r1[every] = -inf, inf
    return l1, r1, l2, r2


def _exact_set(a: np.ndarray, b: np.ndarray, alpha: float) -> list[tuple[float, float]]:
    n = len(a) - 1
    l1, r1, l2, r2 = _regions(a, b)
    lows = np.concatenate([l1, l2])
    highs = np.concatenate([r1, r2])
    keep = lows <= highs
    lows, highs = lows[keep], highs[keep]
    ends = np.concatenate([lows, highs])
    bp = np.unique(ends[np.isfinite(ends)])
    m = len(bp)
    # pieces: (-inf, bp0), {bp0}, (bp0, bp1), ..., {bp_m-1}, (bp_m-1, inf): indices 0..2m
    first = np.where(np.isfinite(lows), 2 * np.searchsorted(bp, lows) + 1, 0)
    last = np.where(np.isfinite(highs), 2 * np.searchsorted(bp, highs) + 1, 2 * m)
    diff = np.bincount(first, minlength=2 * m + 2) - np.bincount(last + 1, minlength=2 * m + 2)
    count = 1 + np.cumsum(diff[:-1])  # + the test row itself
    inside = in_set(count / (n + 1), alpha)
    left = np.concatenate([[-np.inf], np.repeat(bp, 2)])
    right = np.concatenate([np.repeat(bp, 2), [np.inf]])
    edges = np.diff(np.concatenate([[0], inside.astype(np.int8), [0]]))
    starts = np.flatnonzero(edges == 1)
    stops = np.flatnonzero(edges == -1) - 1
    return [(float(left[s]), float(right[e])) for s, e in zip(starts, stops, strict=True)]


def full_conformal(estimator: Any, X: np.ndarray, y: np.ndarray, X_test: np.ndarray, alpha: float,
                   *, chunk: int = 256) -> PredictionSets:
    """Exact full-conformal sets (absolute residual score) of a ridge / OLS ``estimator`` (unfitted
    template; its settings are read, it is not fitted)."""
    penalty, intercept, scaled = linear_spec(estimator)
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).ravel()
    X_test = np.asarray(X_test, dtype=np.float64)
    lists: list[list[tuple[float, float]]] = []
    for s in range(0, len(X_test), chunk):
        a, b = residual_paths(X, y, X_test[s:s + chunk], penalty, intercept, scaled)
        lists.extend(_exact_set(a[t], b[t], alpha) for t in range(len(a)))
    return PredictionSets.from_lists(lists)


def full_pvalue_bruteforce(estimator: Any, X: np.ndarray, y: np.ndarray, x: np.ndarray, z: float) -> float:
    """The full-conformal p-value at candidate ``z`` by an actual refit on the n + 1 rows (for tests)."""
    from sklearn.base import clone

    Xa = np.vstack([X, x[None, :]])
    ya = np.append(y, z)
    r = np.abs(ya - clone(estimator).fit(Xa, ya).predict(Xa))
    return float(np.sum(r >= r[-1]) / len(ya))
