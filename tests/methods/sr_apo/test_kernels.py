"""Numba kernels against plain references: evaluation, adjoint Jacobian, Levenberg–Marquardt."""

import numpy as np
import pytest

from paperkit.methods.sr_apo.data import start_points
from paperkit.methods.sr_apo.grammar import enumerate_expressions, parse_official
from paperkit.methods.sr_apo.kernels import (
    _fit_one,
    _pow_rows,
    evaluate,
    evaluate_reference,
    fit_many,
    jacobian,
    jacobian_reference,
)


def _tok(s):
    return np.asarray(parse_official(s), dtype=np.int64)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    Xt = rng.normal(size=(3, 40))
    y = Xt[0] * 0.7 - np.abs(Xt[1]) ** 0.5 + 0.1 * rng.normal(size=40)
    return Xt, (y - y.mean()) / y.std()


def test_vectorised_pow_is_within_one_ulp_of_libm_and_exact_at_the_edges():
    rng = np.random.default_rng(0)
    edges = [0.0, 1.0, -1.0, 709.78, 709.79, 710.0, -708.5, -720.0, -745.1, -745.2, -1000.0, 1000.0, 1e300,
             -1e300, 5e-324, np.inf, -np.inf, np.nan]
    x = np.concatenate([rng.uniform(-760, 720, 50_000), rng.normal(0, 3, 50_000), edges])
    log_base = np.log(np.abs(rng.uniform(-3, 3, x.size)))
    exponent = x / log_base  # so that exponent * log|base| = x up to rounding
    got, bits = np.empty(x.size), np.empty(x.size, dtype=np.int64)
    _pow_rows(exponent, log_base, got, bits, x.size)
    with np.errstate(all="ignore"):
        want = np.exp(exponent * log_base)
    finite = np.isfinite(want)
    assert np.all(np.abs(got - want)[finite] <= np.spacing(np.abs(want[finite])))
    np.testing.assert_array_equal(got[~finite], want[~finite])
    assert np.mean(got == want) > 0.8  # most values are correctly rounded, like libm's
    zero = np.zeros(3)
    _pow_rows(zero, np.array([np.inf, np.nan, -np.inf]), got[:3], bits[:3], 3)
    assert np.all(got[:3] == 1.0)  # |a|^0 = 1, even for a = 0 or inf


def test_evaluate_matches_numpy_reference(data):
    Xt, _ = data
    e = enumerate_expressions(3, 3)
    rng = np.random.default_rng(0)
    for i in rng.choice(len(e), 400, replace=False):
        row = e.tokens[i]
        theta = rng.uniform(-2, 2, 4)
        tok = np.asarray([t for t in row if t], dtype=np.int64)
        got = evaluate(tok, Xt, theta)
        want = evaluate_reference(row, Xt, theta)
        both = np.isfinite(got) & np.isfinite(want)
        assert np.array_equal(np.isfinite(got), np.isfinite(want))
        np.testing.assert_allclose(got[both], want[both], rtol=1e-10, atol=1e-12)


def test_adjoint_jacobian_matches_central_differences(data):
    Xt, _ = data
    Xpos = np.abs(Xt) + 0.5  # keep Pow bases away from 0 and denominators away from poles
    e = enumerate_expressions(3, 3)
    rng = np.random.default_rng(1)
    checked = 0
    for i in rng.choice(np.flatnonzero(e.n_const > 0), 300, replace=False):
        row = e.tokens[i]
        theta = rng.uniform(0.5, 1.5, int(e.n_const[i]))
        J = jacobian(row, Xpos, theta)
        Jr = jacobian_reference(row, Xpos, theta)
        if not (np.all(np.isfinite(Jr)) and np.abs(Jr).max() < 1e4):
            continue
        np.testing.assert_allclose(J, Jr, rtol=1e-5, atol=1e-6)
        checked += 1
    assert checked > 200


def test_jitted_fit_equals_interpreted_fit(data):
    Xt, y = data
    starts = start_points(11284, 7)
    n = y.shape[0]
    for s in ["Sub(Mul(xdata[0],x[0]),Pow(xdata[1],x[1]))", "Div(xdata[0],Add(x[0],Mul(xdata[1],x[1])))",
              "Add(Mul(x[0],xdata[0]),x[1])", "Pow(x[0],xdata[2])"]:
        tok = np.zeros(7, dtype=np.int64)
        t = _tok(s)
        tok[:len(t)] = t
        outs = []
        for fn in (_fit_one, _fit_one.py_func):
            theta = np.empty(4)
            bufs = [np.empty((7, n)) for _ in range(5)] + [np.empty((4, n))]
            ssr, nit, nfev, status = fn(tok, len(t), Xt, y, starts[0], 200, 1e-12, 30, theta, *bufs)
            outs.append((ssr, nit, nfev, status, theta[: (t == 6).sum()].copy()))
        assert outs[0][1:4] == outs[1][1:4]
        assert outs[0][0] == pytest.approx(outs[1][0], rel=1e-12)
        np.testing.assert_allclose(outs[0][4], outs[1][4], rtol=1e-10)


def _fit(exprs, Xt, y, restarts=0):
    width = 7
    tokens = np.zeros((len(exprs), width), dtype=np.int8)
    for i, s in enumerate(exprs):
        t = parse_official(s)
        tokens[i, :len(t)] = t
    m = len(exprs)
    out = [np.empty(m), np.empty((m, 3)), np.empty(m, np.int32), np.empty(m, np.int32), np.empty(m, np.int8)]
    fit_many(tokens, (tokens != 0).sum(1).astype(np.int64), Xt, y, start_points(11284, width, restarts), 200,
             1e-12, 30, *out, 2)
    return out


def test_linear_in_constants_reaches_least_squares(data):
    Xt, y = data
    ssr, params, _, _, status = _fit(["Add(Mul(xdata[0],x[0]),Mul(xdata[1],x[1]))",
                                      "Sub(Mul(xdata[2],x[0]),x[1])"], Xt, y)
    A = Xt[:2].T
    beta, res, *_ = np.linalg.lstsq(A, y, rcond=None)
    assert status[0] == 0 and ssr[0] == pytest.approx(res[0], rel=1e-10)
    np.testing.assert_allclose(params[0, :2], beta, rtol=1e-7)
    B = np.column_stack([Xt[2], -np.ones(y.shape[0])])
    beta, res, *_ = np.linalg.lstsq(B, y, rcond=None)
    assert ssr[1] == pytest.approx(res[0], rel=1e-10)
    np.testing.assert_allclose(params[1, :2], beta, rtol=1e-7)


def test_nonlinear_fit_reaches_scipy_least_squares(data):
    from scipy.optimize import least_squares

    Xt, y = data
    exprs = ["Sub(Mul(xdata[0],x[0]),Pow(xdata[1],x[1]))", "Mul(x[0],Pow(xdata[1],x[1]))",
             "Add(Div(xdata[0],x[0]),Mul(x[1],xdata[0]))"]
    ssr, params, *_ = _fit(exprs, Xt, y)
    x0 = start_points(11284, 7)[0]
    for i, s in enumerate(exprs):
        k = s.count("x[")
        r = least_squares(lambda th, s=s: evaluate_reference(parse_official(s), Xt, th) - y, x0[:k], method="lm",
                          xtol=1e-15, ftol=1e-15, gtol=1e-15)
        assert ssr[i] <= 2 * r.cost * (1 + 1e-9)


def test_failures_are_recorded_not_raised():
    Xt = np.array([[0.0, 1.0, -1.0, 2.0]])  # an exact zero: Div(x, xdata[0]) is infinite for every x
    y = np.array([0.5, -0.5, 1.0, -1.0])
    ssr, _, _, _, status = _fit(["Div(x[0],xdata[0])", "Mul(x[0],xdata[0])"], Xt, y)
    assert status[0] == 1 and np.isnan(ssr[0])
    assert status[1] == 0 and np.isfinite(ssr[1])


def test_restarts_never_worse_than_the_seeded_start(data):
    Xt, y = data
    exprs = ["Div(Div(xdata[0],x[0]),Sub(xdata[1],x[1]))", "Mul(x[0],Pow(Sub(xdata[1],x[1]),x[2]))"]
    one = _fit(exprs, Xt, y, 0)[0]
    more = _fit(exprs, Xt, y, 5)[0]
    assert np.all(more <= one * (1 + 1e-12))
