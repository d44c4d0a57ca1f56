"""Numba kernel of the pairwise soft τ and its closed-form gradient (CPU fast path).

One fused pass over the pairs i < j of each sample: no B×C×C temporaries, no exp per pair, half the
pairs of the full-matrix torch path (:func:`paperkit.methods.kd_rank.rank_loss.pairwise_soft_tau`, the reference
the tests compare against). The sigmoid form uses 2σ(kΔ) − 1 = tanh(kΔ/2).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange


def _soft_tau(student: np.ndarray, teacher: np.ndarray, k: float, k_teacher: float, soft_teacher: bool,
              want_grad: bool, tau: np.ndarray, grad: np.ndarray) -> None:
    """tau[b] = 2/(C(C−1)) Σ_{i<j} tanh(kΔ^s_ij)·g_ij; grad[b, i] = ∂tau[b]/∂student[b, i] (if want_grad).

    tanh(k(s_i − s_j)) = 1 − 2/(1 + e^{2k s_i}·e^{−2k s_j}): with the C exponentials of a sample computed
    once, the pair loop has no transcendental call (it vectorises). When the factors could overflow
    (2k·max|s − mean| > 300) the pair loop takes one exp per pair instead.
    """
    B, C = student.shape
    norm = 2.0 / (C * (C - 1))
    for b in prange(B):
        m = 0.0
        for i in range(C):
            m += student[b, i]
        m /= C
        spread = 0.0
        for i in range(C):
            spread = max(spread, abs(student[b, i] - m))
        factored = 2.0 * k * spread <= 300.0
        up = np.empty(C)    # e^{2k(s_i − m)}
        down = np.empty(C)  # e^{−2k(s_j − m)}
        if factored:
            for i in range(C):
                up[i] = math.exp(2.0 * k * (student[b, i] - m))
                down[i] = 1.0 / up[i]
        row = np.zeros(C)
        acc = 0.0
        for i in range(C - 1):
            si = student[b, i]
            ti = teacher[b, i]
            ui = up[i]
            gi = 0.0
            for j in range(i + 1, C):
                dt = ti - teacher[b, j]
                if soft_teacher:
                    g = 1.0 - 2.0 / (1.0 + math.exp(2.0 * k_teacher * dt))
                else:
                    g = np.sign(dt)
                if factored:
                    p = ui * down[j]
                else:
                    p = math.exp(2.0 * k * (si - student[b, j]))
                f = 1.0 - 2.0 / (1.0 + p)
                acc += f * g
                w = (1.0 - f * f) * g
                gi += w
                row[j] -= w
            row[i] += gi
        tau[b] = acc * norm
        if want_grad:
            for i in range(C):
                grad[b, i] = row[i] * k * norm


def _teacher_order(teacher: np.ndarray, order: np.ndarray) -> None:
    """order[b] = the classes by decreasing teacher logit (stable: tied classes keep their order)."""
    for b in range(teacher.shape[0]):
        order[b] = np.argsort(-teacher[b], kind="mergesort")


def _soft_tau_sorted(student: np.ndarray, teacher: np.ndarray, order: np.ndarray, k: float, standardize: bool,
                     eps: float, want_grad: bool, tau: np.ndarray, grad: np.ndarray) -> None:
    """:func:`_soft_tau` for the hard (sign) teacher, in the teacher's order (issue 27).

    Classes are visited in decreasing teacher logit (``order``, from :func:`_teacher_order`; training
    computes it once, the teacher being fixed), so for i < j the teacher sign is +1, or 0 within a
    group of tied teacher logits, which the inner loop skips: the pair loop has no sign, no branch and
    no teacher read, and with reassociation allowed (``fastmath``: the sums over j are vectorised) it
    runs several times faster. With ``standardize`` the student's logits are z-scored here
    (z = (s − mean) / (std + eps), population std, as :func:`~.rank_loss.standardize`) and the gradient
    is taken back through it, ∂τ/∂s = (g − ḡ)/(σ+ε) − Σ_i g_i u_i · u / (Cσ(σ+ε)²), u = s − mean: no
    torch graph around the kernel. The teacher is not standardised: that keeps every sign. Only the
    order of the floating-point additions differs from :func:`_soft_tau` (tests: 1e-12).
    """
    B, C = student.shape
    norm = 2.0 / (C * (C - 1))
    for b in prange(B):
        ob = order[b]
        m = 0.0
        for i in range(C):
            m += student[b, i]
        m /= C
        sd = 0.0
        if standardize:
            for i in range(C):
                d = student[b, i] - m
                sd += d * d
            sd = math.sqrt(sd / C)
        den = sd + eps if standardize else 1.0
        ss = np.empty(C)  # centred (and standardised) student logits in the teacher's order
        spread = 0.0
        for i in range(C):
            ss[i] = (student[b, ob[i]] - m) / den
            spread = max(spread, abs(ss[i]))
        factored = 2.0 * k * spread <= 300.0
        up = np.empty(C)
        down = np.empty(C)
        if factored:
            for i in range(C):
                up[i] = math.exp(2.0 * k * ss[i])
                down[i] = 1.0 / up[i]
        # first index past i's group of tied teacher logits
        gend = np.empty(C, dtype=np.int64)
        e = C
        for i in range(C - 1, -1, -1):
            if i < C - 1 and teacher[b, ob[i]] != teacher[b, ob[i + 1]]:
                e = i + 1
            gend[i] = e
        row = np.zeros(C)
        acc = 0.0
        for i in range(C - 1):
            ui = up[i]
            si = ss[i]
            gi = 0.0
            ai = 0.0
            if factored:  # branch outside the pair loop, zero-based views: the loop vectorises
                lo = gend[i]
                dv = down[lo:]
                rv = row[lo:]
                for j in range(C - lo):
                    r = 1.0 / (1.0 + ui * dv[j])
                    f = 1.0 - 2.0 * r
                    ai += f
                    w = 1.0 - f * f
                    gi += w
                    rv[j] -= w
            else:
                for j in range(gend[i], C):
                    f = 1.0 - 2.0 / (1.0 + math.exp(2.0 * k * (si - ss[j])))
                    ai += f
                    w = 1.0 - f * f
                    gi += w
                    row[j] -= w
            acc += ai
            row[i] += gi
        tau[b] = acc * norm
        if want_grad:
            gbar = 0.0
            gu = 0.0
            for i in range(C):
                row[i] *= k * norm  # ∂τ/∂z in the teacher's order
                gbar += row[i]
                gu += row[i] * ss[i]
            gbar /= C
            # u = (σ+ε) z, so Σ_i g_i u_i · u_j / (Cσ(σ+ε)²) = gu · z_j / (Cσ); zero when σ = 0 (then u = 0)
            tail = gu / (C * sd) if standardize and sd > 0.0 else 0.0
            for i in range(C):
                grad[b, ob[i]] = (row[i] - gbar) / den - tail * ss[i] if standardize else row[i]


# Serial for training-sized batches (a thread pool costs more than it saves below a few million pairs,
# and the training loop's torch threads compete with it); parallel over samples for large B·C².
soft_tau_kernel = njit(cache=True, fastmath=False)(_soft_tau)
soft_tau_kernel_parallel = njit(cache=True, fastmath=False, parallel=True)(_soft_tau)
teacher_order_kernel = njit(cache=True)(_teacher_order)
sorted_kernel = njit(cache=True, fastmath=True, error_model="numpy")(_soft_tau_sorted)
sorted_kernel_parallel = njit(cache=True, fastmath=True, error_model="numpy", parallel=True)(_soft_tau_sorted)
PARALLEL_MIN_PAIRS = 4_000_000


def teacher_order(teacher: np.ndarray) -> np.ndarray:
    """The classes of each row by decreasing teacher logit (stable); see :func:`_soft_tau_sorted`."""
    t = np.ascontiguousarray(teacher, dtype=np.float64)
    order = np.empty(t.shape, dtype=np.int64)
    teacher_order_kernel(t, order)
    return order


def soft_tau_numba(student: np.ndarray, teacher: np.ndarray, *, form: str = "tanh", k: float = 1.0,
                   soft_teacher: bool = False, want_grad: bool = False, fused: bool = True,
                   standardize: bool = False, eps: float = 1e-3, order: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray | None]:
    """Per-sample soft τ and (optionally) its gradient, for the ``tanh`` and ``sigmoid`` forms.

    ``fused`` (default): the teacher-sorted, vectorised kernel for the sign teacher, which can also
    z-score the student itself (``standardize``, gradient with respect to the raw logits) and take the
    teacher's ``order`` precomputed; False: the pair-by-pair kernel (always used with ``soft_teacher``;
    no ``standardize``)."""
    s = np.ascontiguousarray(student, dtype=np.float64)
    t = np.ascontiguousarray(teacher, dtype=np.float64)
    kk = float(k) if form == "tanh" else float(k) / 2.0
    tau = np.empty(s.shape[0])
    grad = np.empty_like(s) if want_grad else np.empty((1, 1))
    B, C = s.shape
    big = B * C * (C - 1) // 2 >= PARALLEL_MIN_PAIRS
    if not soft_teacher and fused:
        order = teacher_order(t) if order is None else np.ascontiguousarray(order, dtype=np.int64)
        (sorted_kernel_parallel if big else sorted_kernel)(s, t, order, kk, bool(standardize), float(eps),
                                                           bool(want_grad), tau, grad)
    else:
        if standardize:
            raise ValueError("standardize needs the fused kernel and the sign teacher")
        (soft_tau_kernel_parallel if big else soft_tau_kernel)(s, t, kk, float(k), bool(soft_teacher),
                                                                bool(want_grad), tau, grad)
    return tau, (grad if want_grad else None)


@njit(cache=True, fastmath=False)
def kendall_tau_b_kernel(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """Exact Kendall τ-b per row (ties handled like scipy.stats.kendalltau); NaN when a row is constant."""
    N, C = a.shape
    for r in range(N):
        num = 0.0
        na = 0.0
        nb = 0.0
        for i in range(C - 1):
            ai = a[r, i]
            bi = b[r, i]
            for j in range(i + 1, C):
                sa = np.sign(ai - a[r, j])
                sb = np.sign(bi - b[r, j])
                num += sa * sb
                na += sa * sa
                nb += sb * sb
        den = math.sqrt(na * nb)
        out[r] = num / den if den > 0 else np.nan
