"""Numba engine: expressions interpreted node by node over all rows, fitted by Levenberg–Marquardt.

Each expression is a prefix token row (see :mod:`.grammar`). Values are computed bottom-up with the
loop over rows innermost (vectorisable); subtrees without constants are computed once per expression.
The Jacobian of the predictions with respect to the constants comes from one reverse (adjoint) pass
through the tree: every node has one parent, so each adjoint is a single product, and the Jacobian
column of constant c is the adjoint at the leaf of c. Levenberg–Marquardt with Marquardt's diagonal
scaling then minimises the mean squared error from the paper's seeded start
(``numpy.random.seed(seed); 2 * rand(k) - 1``), in parallel over expressions with ``prange``.

Plain references: :func:`evaluate_reference` (recursive NumPy), :func:`jacobian_reference` (central
differences), and ``_fit_one.py_func`` (the same Levenberg–Marquardt interpreted by Python), which
the tests compare with the jitted kernels.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from paperkit.methods.sr_apo.grammar import ADD, CONST, DIV, FEAT0, MUL, POW, SUB

# Status codes per expression.
OK, FAILED = 0, 1


@njit(cache=True, error_model="numpy")
def _prepare(tok: np.ndarray, L: int, end: np.ndarray, cidx: np.ndarray, dep: np.ndarray) -> int:
    """Subtree ends, constant numbers and whether each subtree holds a constant; returns k."""
    k = 0
    for i in range(L):
        if tok[i] == CONST:
            cidx[i] = k
            k += 1
        else:
            cidx[i] = -1
    for i in range(L - 1, -1, -1):
        t = tok[i]
        if 1 <= t <= 5:
            a = i + 1
            b = end[a]
            end[i] = end[b]
            dep[i] = dep[a] or dep[b]
        else:
            end[i] = i + 1
            dep[i] = t == CONST
    return k


# exp(x) = 2^k exp(t), x = k ln 2 + t, |t| <= ln 2 / 2 (Cody–Waite split of ln 2; Taylor to t^13, whose
# remainder is below 1e-18 relative): written so that LLVM vectorises the loop over rows, which libm's
# scalar exp does not allow (no SVML here): Pow nodes dominate the fitting time. Within 1 ulp of libm.
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_ROUND = 6755399441055744.0  # 1.5 * 2**52: adding and subtracting it rounds to the nearest integer
_EXP_TAYLOR = tuple(1.0 / math.factorial(j) for j in range(14))


@njit(cache=True, error_model="numpy", inline="always")
def _exp_poly(t: float) -> float:
    c = _EXP_TAYLOR
    return c[0] + t * (c[1] + t * (c[2] + t * (c[3] + t * (c[4] + t * (c[5] + t * (c[6] + t * (
        c[7] + t * (c[8] + t * (c[9] + t * (c[10] + t * (c[11] + t * (c[12] + t * c[13]))))))))))))


@njit(cache=True, error_model="numpy", inline="always")
def _exp_clamp(x: float) -> float:
    c = x if x < 710.0 else 710.0  # exp overflows above 709.79 and is 0 below -745.2
    return c if c > -746.0 else -746.0


@njit(cache=True, error_model="numpy", inline="always")
def _exp_split(x: float) -> float:
    """k = round(x / ln 2) of the clamped x."""
    return (_exp_clamp(x) * _LOG2E + _ROUND) - _ROUND


@njit(cache=True, error_model="numpy")
def _pow_rows(e: np.ndarray, la: np.ndarray, out: np.ndarray, bits: np.ndarray, n: int) -> None:
    """out[r] = |a|^e = exp(e[r] * la[r]) (1 where e = 0), la = log|a|; ``bits``: int64 scratch of n rows.

    Pass 1 leaves exp(t) in ``out`` and the exponent field of 2^k (shifted by -+54 near the ends of the
    range, so subnormal and huge results stay exact) in ``bits``; pass 2 scales.
    """
    for r in range(n):
        k = _exp_split(e[r] * la[r])
        ki = np.int64(k)
        bits[r] = (ki + (54 if k < -1000.0 else (-54 if k > 1000.0 else 0)) + 1023) << 52
        out[r] = _exp_poly((_exp_clamp(e[r] * la[r]) - k * _LN2_HI) - k * _LN2_LO)
    scale = bits.view(np.float64)
    for r in range(n):
        x = e[r] * la[r]
        k = _exp_split(x)
        undo = 5.551115123125783e-17 if k < -1000.0 else (18014398509481984.0 if k > 1000.0 else 1.0)
        v = out[r] * scale[r] * undo
        v = v if x == x else x
        out[r] = 1.0 if e[r] == 0.0 else v


@njit(cache=True, error_model="numpy")
def _node(tok: np.ndarray, i: int, end: np.ndarray, cidx: np.ndarray, dep: np.ndarray, Xt: np.ndarray,
          theta: np.ndarray, V: np.ndarray, LG: np.ndarray, n: int, fresh: bool) -> None:
    """Compute V[i, :] from its children (already computed).

    Pow(a, b) = exp(b * log|a|) with log|a| kept in LG[a]: the adjoint of b reuses it, and for a base
    without constants it is computed once per expression (``fresh``) instead of once per iteration.
    """
    t = tok[i]
    vi = V[i]
    if t == CONST:
        c = theta[cidx[i]]
        for r in range(n):
            vi[r] = c
    elif t >= FEAT0:
        xj = Xt[t - FEAT0]
        for r in range(n):
            vi[r] = xj[r]
    else:
        a = i + 1
        b = end[a]
        va = V[a]
        vb = V[b]
        if t == ADD:
            for r in range(n):
                vi[r] = va[r] + vb[r]
        elif t == SUB:
            for r in range(n):
                vi[r] = va[r] - vb[r]
        elif t == MUL:
            for r in range(n):
                vi[r] = va[r] * vb[r]
        elif t == DIV:
            for r in range(n):
                vi[r] = va[r] / vb[r]
        else:
            la = LG[a]
            if fresh or dep[a]:
                for r in range(n):
                    la[r] = math.log(abs(va[r]))
            _pow_rows(vb, la, vi, LG[i].view(np.int64), n)


@njit(cache=True, error_model="numpy")
def _forward(tok: np.ndarray, L: int, end: np.ndarray, cidx: np.ndarray, dep: np.ndarray, Xt: np.ndarray,
             theta: np.ndarray, V: np.ndarray, LG: np.ndarray, n: int, which: int) -> None:
    """which = 0: nodes without constants; 1: nodes with constants; 2: all nodes."""
    for i in range(L - 1, -1, -1):
        if which == 2 or (which == 1) == dep[i]:
            _node(tok, i, end, cidx, dep, Xt, theta, V, LG, n, which != 1)


@njit(cache=True, error_model="numpy")
def _backward(tok: np.ndarray, L: int, end: np.ndarray, cidx: np.ndarray, dep: np.ndarray, V: np.ndarray,
              LG: np.ndarray, G: np.ndarray, J: np.ndarray, n: int) -> None:
    """Adjoints G[i] = d(root)/d(node i) per row for nodes with constants; J[c] = adjoint at constant c."""
    for r in range(n):
        G[0, r] = 1.0
    for i in range(L):
        if not dep[i]:
            continue
        t = tok[i]
        if t == CONST:
            c = cidx[i]
            for r in range(n):
                J[c, r] = G[i, r]
            continue
        a = i + 1
        b = end[a]
        if t == ADD:
            if dep[a]:
                for r in range(n):
                    G[a, r] = G[i, r]
            if dep[b]:
                for r in range(n):
                    G[b, r] = G[i, r]
        elif t == SUB:
            if dep[a]:
                for r in range(n):
                    G[a, r] = G[i, r]
            if dep[b]:
                for r in range(n):
                    G[b, r] = -G[i, r]
        elif t == MUL:
            if dep[a]:
                for r in range(n):
                    G[a, r] = G[i, r] * V[b, r]
            if dep[b]:
                for r in range(n):
                    G[b, r] = G[i, r] * V[a, r]
        elif t == DIV:
            if dep[a]:
                for r in range(n):
                    G[a, r] = G[i, r] / V[b, r]
            if dep[b]:
                for r in range(n):
                    G[b, r] = -G[i, r] * V[i, r] / V[b, r]
        else:  # Pow: f = |a|^b, df/da = b f / a, df/db = f log|a|; both 0 at a = 0
            if dep[a]:
                for r in range(n):
                    va = V[a, r]
                    G[a, r] = 0.0 if va == 0.0 else G[i, r] * V[b, r] * V[i, r] / va
            if dep[b]:
                for r in range(n):
                    G[b, r] = 0.0 if V[a, r] == 0.0 else G[i, r] * V[i, r] * LG[a, r]


@njit(cache=True, error_model="numpy")
def _ssr(pred: np.ndarray, y: np.ndarray, n: int) -> float:
    s = 0.0
    for r in range(n):
        d = pred[r] - y[r]
        s += d * d
    return s


@njit(cache=True, error_model="numpy")
def _cholesky_solve(A: np.ndarray, b: np.ndarray, x: np.ndarray, k: int, Lw: np.ndarray) -> bool:
    """Solve A x = b for symmetric positive definite A (k x k); False when not positive definite."""
    for i in range(k):
        for j in range(i + 1):
            s = A[i, j]
            for m in range(j):
                s -= Lw[i, m] * Lw[j, m]
            if i == j:
                if not s > 0.0:
                    return False
                Lw[i, i] = math.sqrt(s)
            else:
                Lw[i, j] = s / Lw[j, j]
    for i in range(k):
        s = b[i]
        for m in range(i):
            s -= Lw[i, m] * x[m]
        x[i] = s / Lw[i, i]
    for i in range(k - 1, -1, -1):
        s = x[i]
        for m in range(i + 1, k):
            s -= Lw[m, i] * x[m]
        x[i] = s / Lw[i, i]
    return True


@njit(cache=True, error_model="numpy")
def _fit_one(tok: np.ndarray, L: int, Xt: np.ndarray, y: np.ndarray, x0: np.ndarray, max_iter: int,
             ftol: float, abandon: int, theta_out: np.ndarray, V: np.ndarray, W: np.ndarray, LV: np.ndarray,
             LW: np.ndarray, G: np.ndarray, J: np.ndarray) -> tuple[float, int, int, int]:
    """Fit the constants of one expression; returns (squared-error sum, iterations, evaluations, status).

    ``theta_out[:k]`` receives the constants. V, W: (>= L, n) value buffers (current and trial), LV, LW
    their log|.| buffers, G: adjoints, J: (>= k, n) Jacobian. Stops when the actual and the predicted
    relative decrease of the squared error are both below ``ftol``, when the gradient is orthogonal to
    the residual, after ``max_iter`` iterations, or after ``abandon`` iterations while the fit is still
    worse than predicting the mean (R² < 0: such an expression can be best at no length).
    """
    n = y.shape[0]
    end = np.empty(L, dtype=np.int64)
    cidx = np.empty(L, dtype=np.int64)
    dep = np.empty(L, dtype=np.bool_)
    k = _prepare(tok, L, end, cidx, dep)
    theta = np.empty(max(k, 1))
    for c in range(k):
        theta[c] = x0[c]
    _forward(tok, L, end, cidx, dep, Xt, theta, V, LV, n, 2)
    ssr = _ssr(V[0], y, n)
    for c in range(k):
        theta_out[c] = theta[c]
    if k == 0 or not math.isfinite(ssr):
        return ssr, 0, 1, OK if math.isfinite(ssr) else FAILED
    sst = 0.0
    ybar = 0.0
    for r in range(n):
        ybar += y[r]
    ybar /= n
    for r in range(n):
        sst += (y[r] - ybar) ** 2
    for i in range(L):  # the trial buffers share the constant-free subtrees
        if not dep[i]:
            for r in range(n):
                W[i, r] = V[i, r]
                LW[i, r] = LV[i, r]
    H = np.empty((k, k))
    A = np.empty((k, k))
    Lw = np.empty((k, k))
    g = np.empty(k)
    delta = np.empty(k)
    trial = np.empty(k)
    lam = 1e-3
    nit = 0
    nfev = 1
    for _ in range(max_iter):
        if nit >= abandon and ssr > sst:
            break
        _backward(tok, L, end, cidx, dep, V, LV, G, J, n)
        for p in range(k):
            s = 0.0
            jp = J[p]
            v0 = V[0]
            for r in range(n):
                s += jp[r] * (v0[r] - y[r])
            g[p] = s
            for q in range(p + 1):
                s = 0.0
                jq = J[q]
                for r in range(n):
                    s += jp[r] * jq[r]
                H[p, q] = s
                H[q, p] = s
        finite = True
        gmax = 0.0
        for p in range(k):
            if not (math.isfinite(g[p]) and math.isfinite(H[p, p])):
                finite = False
            elif H[p, p] > 0.0:
                gmax = max(gmax, abs(g[p]) / math.sqrt(H[p, p] * max(ssr, 1e-300)))
        if not finite or gmax <= 1e-12:
            break
        accepted = False
        small = False
        while lam < 1e16:
            for p in range(k):
                for q in range(k):
                    A[p, q] = H[p, q]
                A[p, p] = H[p, p] + lam * max(H[p, p], 1e-12)
            if not _cholesky_solve(A, g, delta, k, Lw):
                lam *= 10.0
                continue
            for p in range(k):
                trial[p] = theta[p] - delta[p]
            _forward(tok, L, end, cidx, dep, Xt, trial, W, LW, n, 1)
            nfev += 1
            new = _ssr(W[0], y, n)
            if math.isfinite(new) and new <= ssr:
                pred = 0.0  # decrease predicted by the local quadratic model, for the stopping test
                for p in range(k):
                    pred += delta[p] * g[p]
                small = (ssr - new) <= ftol * ssr and pred <= 2.0 * ftol * ssr
                ssr = new
                for p in range(k):
                    theta[p] = trial[p]
                V, W = W, V
                LV, LW = LW, LV
                accepted = True
                lam = max(lam * 0.3, 1e-12)
                break
            lam *= 4.0
        nit += 1
        if not accepted or small:
            break
    for c in range(k):
        theta_out[c] = theta[c]
    return ssr, nit, nfev, OK


@njit(cache=True, error_model="numpy")
def _fit_block(e0: int, e1: int, tokens: np.ndarray, lengths: np.ndarray, Xt: np.ndarray, y: np.ndarray,
               starts: np.ndarray, max_iter: int, ftol: float, abandon: int, ssr_out: np.ndarray,
               params_out: np.ndarray, nit_out: np.ndarray, nfev_out: np.ndarray, status_out: np.ndarray) -> None:
    """Fit expressions e0..e1-1 with one set of work buffers (the body of :func:`fit_many`)."""
    width = tokens.shape[1]
    n = y.shape[0]
    kmax = params_out.shape[1]
    n_starts = starts.shape[0]
    V = np.empty((width, n))
    W = np.empty((width, n))
    LV = np.empty((width, n))
    LW = np.empty((width, n))
    G = np.empty((width, n))
    J = np.empty((max(kmax, 1), n))
    theta = np.empty(max(kmax, 1))
    tok = np.empty(width, dtype=np.int64)
    for e in range(e0, e1):
        k = 0
        for i in range(width):
            tok[i] = tokens[e, i]
            if tok[i] == CONST:
                k += 1
        best = np.inf
        total = 0
        ssr_out[e] = np.nan
        nit_out[e] = 0
        status_out[e] = FAILED
        for c in range(kmax):
            params_out[e, c] = np.nan
        for s in range(n_starts if k > 0 else 1):
            ssr, nit, nfev, status = _fit_one(tok, lengths[e], Xt, y, starts[s], max_iter, ftol, abandon,
                                              theta, V, W, LV, LW, G, J)
            total += nfev
            if status == OK and math.isfinite(ssr) and ssr < best:
                best = ssr
                ssr_out[e] = ssr
                nit_out[e] = nit
                status_out[e] = OK
                for c in range(k):
                    params_out[e, c] = theta[c]
        nfev_out[e] = total


@njit(cache=True, parallel=True, error_model="numpy")
def fit_many(tokens: np.ndarray, lengths: np.ndarray, Xt: np.ndarray, y: np.ndarray, starts: np.ndarray,
             max_iter: int, ftol: float, abandon: int, ssr_out: np.ndarray, params_out: np.ndarray,
             nit_out: np.ndarray, nfev_out: np.ndarray, status_out: np.ndarray, block: int) -> None:
    """Fit every expression (rows of ``tokens``) in parallel over blocks of ``block`` expressions.

    ``starts`` (S x >= kmax): the fit from each start row; the lowest squared error wins (the first on
    ties). ``nit_out`` holds the winner's iterations, ``nfev_out`` the evaluations of all starts.
    """
    m = tokens.shape[0]
    n_blocks = (m + block - 1) // block
    for bi in prange(n_blocks):
        _fit_block(bi * block, min(m, (bi + 1) * block), tokens, lengths, Xt, y, starts, max_iter, ftol,
                   abandon, ssr_out, params_out, nit_out, nfev_out, status_out)


# ------------------------------------------------------------------------------------------ references
def evaluate_reference(tokens: np.ndarray | list[int], Xt: np.ndarray, theta: np.ndarray | list[float]) -> np.ndarray:
    """Recursive NumPy evaluation of one expression on ``Xt`` (features x rows)."""
    row = [int(t) for t in tokens if int(t) != 0]
    pos = 0
    nconst = 0
    n = Xt.shape[1]

    def walk() -> np.ndarray:
        nonlocal pos, nconst
        t = row[pos]
        pos += 1
        if t == CONST:
            nconst += 1
            return np.full(n, float(theta[nconst - 1]))
        if t >= FEAT0:
            return Xt[t - FEAT0].astype(np.float64)
        a = walk()
        b = walk()
        with np.errstate(all="ignore"):
            return {ADD: np.add, SUB: np.subtract, MUL: np.multiply, DIV: np.divide,
                    POW: lambda u, v: np.power(np.abs(u), v)}[t](a, b)

    return walk()


def jacobian_reference(tokens: np.ndarray | list[int], Xt: np.ndarray, theta: np.ndarray, eps: float = 1e-6
                       ) -> np.ndarray:
    """Central-difference Jacobian (k x rows) of the predictions with respect to the constants."""
    theta = np.asarray(theta, dtype=np.float64)
    out = np.empty((theta.shape[0], Xt.shape[1]))
    for c in range(theta.shape[0]):
        up, dn = theta.copy(), theta.copy()
        up[c] += eps
        dn[c] -= eps
        out[c] = (evaluate_reference(tokens, Xt, up) - evaluate_reference(tokens, Xt, dn)) / (2 * eps)
    return out


def jacobian(tokens: np.ndarray, Xt: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Adjoint Jacobian of one expression (k x rows) through the jitted kernels (for tests and users)."""
    tok = np.asarray([int(t) for t in tokens if int(t) != 0], dtype=np.int64)
    return _jacobian_one(tok, np.ascontiguousarray(Xt, dtype=np.float64), np.asarray(theta, dtype=np.float64))


@njit(cache=True, error_model="numpy")
def _jacobian_one(tok: np.ndarray, Xt: np.ndarray, theta: np.ndarray) -> np.ndarray:
    L = tok.shape[0]
    n = Xt.shape[1]
    end = np.empty(L, dtype=np.int64)
    cidx = np.empty(L, dtype=np.int64)
    dep = np.empty(L, dtype=np.bool_)
    k = _prepare(tok, L, end, cidx, dep)
    V = np.empty((L, n))
    LG = np.empty((L, n))
    G = np.empty((L, n))
    J = np.zeros((max(k, 1), n))
    _forward(tok, L, end, cidx, dep, Xt, theta, V, LG, n, 2)
    if k > 0:
        _backward(tok, L, end, cidx, dep, V, LG, G, J, n)
    return J[:k]


@njit(cache=True, error_model="numpy")
def evaluate(tok: np.ndarray, Xt: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Jitted evaluation of one expression (tokens without padding)."""
    L = tok.shape[0]
    n = Xt.shape[1]
    end = np.empty(L, dtype=np.int64)
    cidx = np.empty(L, dtype=np.int64)
    dep = np.empty(L, dtype=np.bool_)
    _prepare(tok, L, end, cidx, dep)
    V = np.empty((L, n))
    LG = np.empty((L, n))
    _forward(tok, L, end, cidx, dep, Xt, theta, V, LG, n, 2)
    return V[0].copy()
