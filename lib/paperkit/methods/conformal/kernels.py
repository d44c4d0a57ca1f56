"""Exact cross-conformal sets by a breakpoint sweep (numba), beside a plain reference and the grid scan.

Every fold p-value ``p_k(y) = (1 + #{i in S_k : R_i >= |y - mu_k(x)| / s_k(x)}) / (m_k + 1)`` is a step
function of ``y``: score ``i`` counts exactly on the closed interval ``[mu_k - s_k R_i, mu_k + s_k R_i]``.
Sorting the 2n endpoints splits the line into points and open segments on which every count, hence
every combiner, is constant. A point's counts dominate both neighbouring segments' counts and all
combiners are monotone, so every set is a finite union of closed intervals (possibly unbounded or
degenerate). The sweep evaluates the combiners once per group of equal endpoints that adds a score and
once per group that removes one. The endpoints come from 2K runs that are already sorted (scores
are sorted within each fold), merged with a heap: O(n log K) per test point instead of the official
code's O(grid x n) scan, and exact.

* :func:`sweep_sets` — the numba kernel (``prange`` over test points).
* :func:`sweep_sets_reference` — a plain Python/numpy version written independently (brute-force
  counts per piece), compared with the kernel in the tests.
* :func:`grid_scan_sets` — the official code's method: p-values on a grid, runs of accepted grid points.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from paperkit.methods.conformal.combiners import COMBINER_CODE, TIE_EPS, combine, in_set, vovk_from_pvalues

_MEAN, _E, _U, _EU, _VOVK, _MIN = (COMBINER_CODE[c] for c in ("mean", "e", "u", "eu", "vovk", "min"))


@njit(cache=True, fastmath=False)
def _evaluate(pk, n_total, sum_counts, u, codes, levels, flags):
    # pk[k] = (1 + c_k) / (m_k + 1), kept up to date by the sweep
    K = pk.shape[0]
    total = 0.0
    e_val = np.inf
    p_min = np.inf
    p_first = pk[0]
    for k in range(K):
        p = pk[k]
        total += p
        run = total / (k + 1)
        if run < e_val:
            e_val = run
        if p < p_min:
            p_min = p
    mean = total / K
    for j in range(codes.shape[0]):
        c = codes[j]
        if c == _MEAN:
            v = mean
        elif c == _E:
            v = e_val
        elif c == _U:
            v = mean / (2.0 - u)
        elif c == _EU:
            v = min(p_first / (2.0 - u), e_val)
        elif c == _VOVK:
            v = (1.0 + sum_counts) / (n_total + 1.0)
        else:
            v = p_min
        flags[j] = v > levels[j] + TIE_EPS


@njit(cache=True, fastmath=False)
def _emit(out_lo, out_hi, out_n, t, j, lo, hi, cap):
    c = out_n[t, j]
    if c < cap:
        out_lo[t, j, c] = lo
        out_hi[t, j, c] = hi
    out_n[t, j] = c + 1


@njit(cache=True, fastmath=False)
def _run_pos(j, idx, t, mu, scale, scores, fold_start):
    # run 2k: fold k's left endpoints mu - s R, ascending (largest R first); run 2k + 1: right endpoints
    k = j // 2
    if j % 2 == 0:
        return mu[t, k] - scale[t, k] * scores[fold_start[k + 1] - 1 - idx]
    return mu[t, k] + scale[t, k] * scores[fold_start[k] + idx]


@njit(cache=True, fastmath=False)
def _sift_down(hpos, hrun, size, i):
    while True:
        left = 2 * i + 1
        if left >= size:
            return
        c = left
        if left + 1 < size and hpos[left + 1] < hpos[left]:
            c = left + 1
        if hpos[c] < hpos[i]:
            hpos[c], hpos[i] = hpos[i], hpos[c]
            hrun[c], hrun[i] = hrun[i], hrun[c]
            i = c
        else:
            return


@njit(cache=True, fastmath=False)
def _build_heap(hpos, hrun, ridx, t, mu, scale, scores, fold_start, sizes):
    """Heapify the next endpoint of every run that still has one (run j is at index ``ridx[j]``).
    Returns the heap size."""
    size = 0
    for j in range(hpos.shape[0]):
        if ridx[j] < sizes[j // 2]:
            hpos[size] = _run_pos(j, ridx[j], t, mu, scale, scores, fold_start)
            hrun[size] = j
            size += 1
    for i in range(size // 2 - 1, -1, -1):
        _sift_down(hpos, hrun, size, i)
    return size


@njit(cache=True, fastmath=False)
def _pop_point(b, hpos, hrun, size, ridx, counts, pk, sizes, leaving, t, mu, scale, scores, fold_start):
    """Take every run endpoint at position ``b`` off the heap: entering scores are counted at once,
    leaving folds are listed in ``leaving`` (they leave after the point). Returns (size, n_enter, n_leave)."""
    n_enter = 0
    n_leave = 0
    while size > 0 and hpos[0] == b:
        j = hrun[0]
        k = j // 2
        if j % 2 == 0:
            counts[k] += 1.0
            pk[k] = (1.0 + counts[k]) / (sizes[k] + 1.0)
            n_enter += 1
        else:
            leaving[n_leave] = k
            n_leave += 1
        ridx[j] += 1
        if ridx[j] < sizes[k]:
            hpos[0] = _run_pos(j, ridx[j], t, mu, scale, scores, fold_start)
        else:
            size -= 1
            hpos[0] = hpos[size]
            hrun[0] = hrun[size]
        _sift_down(hpos, hrun, size, 0)
    return size, n_enter, n_leave


@njit(cache=True, fastmath=False)
def _settle(b, n_enter, n_leave, leaving, counts, pk, sizes, n, sum_counts, u_t, codes, levels,
            point, seg, inside, start, out_lo, out_hi, out_n, t, cap):
    """After the endpoints at ``b`` are popped: the sets at the point b (every score whose closed
    interval touches b counts), then, once the leaving folds are removed, on the open segment after b;
    sets that open or close on the way are recorded. Returns the new sum of counts."""
    M = point.shape[0]
    if n_enter > 0:
        _evaluate(pk, n, sum_counts, u_t, codes, levels, point)
    else:
        point[:] = seg
    for j in range(M):
        if point[j] and not inside[j]:
            inside[j] = True
            start[j] = b
        elif inside[j] and not point[j]:  # cannot happen for monotone combiners; stay safe
            _emit(out_lo, out_hi, out_n, t, j, start[j], b, cap)
            inside[j] = False
    if n_leave > 0:
        for r in range(n_leave):
            k = leaving[r]
            counts[k] -= 1.0
            pk[k] = (1.0 + counts[k]) / (sizes[k] + 1.0)
        sum_counts -= n_leave
        _evaluate(pk, n, sum_counts, u_t, codes, levels, seg)
    else:
        seg[:] = point
    for j in range(M):
        if inside[j] and not seg[j]:
            _emit(out_lo, out_hi, out_n, t, j, start[j], b, cap)
            inside[j] = False
        elif seg[j] and not inside[j]:
            inside[j] = True
            start[j] = b
    return sum_counts


@njit(cache=True, fastmath=False)
def _sweep_one(t, mu, scale, scores, fold_start, sizes, u, codes, levels, cap, out_lo, out_hi, out_n):
    K = mu.shape[1]
    n = scores.shape[0]
    M = codes.shape[0]
    # The 2K runs of endpoints are each sorted (scores are sorted within a fold), so a K-way merge
    # with a binary heap replaces a full sort of the 2n endpoints.
    hpos = np.empty(2 * K)
    hrun = np.empty(2 * K, dtype=np.int64)
    ridx = np.zeros(2 * K, dtype=np.int64)
    size = _build_heap(hpos, hrun, ridx, t, mu, scale, scores, fold_start, sizes)
    leaving = np.empty(n, dtype=np.int64)
    counts = np.zeros(K)
    pk = np.empty(K)
    for k in range(K):
        pk[k] = 1.0 / (sizes[k] + 1.0)
    sum_counts = 0.0
    seg = np.empty(M, dtype=np.bool_)
    point = np.empty(M, dtype=np.bool_)
    inside = np.zeros(M, dtype=np.bool_)
    start = np.empty(M)
    _evaluate(pk, n, sum_counts, u[t], codes, levels, seg)
    for j in range(M):
        out_n[t, j] = 0
        if seg[j]:
            inside[j] = True
            start[j] = -np.inf
    while size > 0:
        b = hpos[0]
        size, n_enter, n_leave = _pop_point(b, hpos, hrun, size, ridx, counts, pk, sizes, leaving,
                                            t, mu, scale, scores, fold_start)
        sum_counts += n_enter
        sum_counts = _settle(b, n_enter, n_leave, leaving, counts, pk, sizes, n, sum_counts, u[t], codes, levels,
                             point, seg, inside, start, out_lo, out_hi, out_n, t, cap)
    for j in range(M):
        if inside[j]:
            _emit(out_lo, out_hi, out_n, t, j, start[j], np.inf, cap)


@njit(cache=True, fastmath=False)
def _left_before(t, k, y, mu, scale, scores, fold_start, sizes):
    # how many of fold k's left endpoints (run 2k, ascending) lie strictly below y: a binary search
    lo = 0
    hi = int(sizes[k])
    while lo < hi:
        mid = (lo + hi) // 2
        if _run_pos(2 * k, mid, t, mu, scale, scores, fold_start) < y:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, fastmath=False)
def _sweep_one_tails(t, mu, scale, scores, fold_start, sizes, u, codes, levels, cap, out_lo, out_hi, out_n):
    """:func:`_sweep_one` with the monotone tails skipped; the same intervals, bit for bit.

    Below ``min_k mu_k`` only left endpoints occur, so every count, hence every (monotone) combiner,
    can only grow as y increases; above ``max_k mu_k`` it can only shrink. So the ascending sweep
    stops once every method is inside the set in the left tail and jumps (one binary search per fold)
    to the first endpoint at or above ``min mu``; it sweeps the middle ``[min mu, max mu]`` as before;
    each set's right end in the right tail is found by a descending sweep from +inf that stops at the
    first point inside. Only the endpoints outside the sets and those between the fold predictions
    are visited (about 2 alpha n + the middle, instead of 2n). Unbounded sets (a zero count already
    inside) and anything unexpected fall back to :func:`_sweep_one`.
    """
    K = mu.shape[1]
    n = scores.shape[0]
    M = codes.shape[0]
    pk = np.empty(K)
    for k in range(K):
        pk[k] = 1.0 / (sizes[k] + 1.0)
    seg = np.empty(M, dtype=np.bool_)
    _evaluate(pk, n, 0.0, u[t], codes, levels, seg)
    lo_mu = np.inf
    hi_mu = -np.inf
    for k in range(K):
        if sizes[k] > 0:
            lo_mu = min(lo_mu, mu[t, k])
            hi_mu = max(hi_mu, mu[t, k])
    unbounded = False
    for j in range(M):
        if seg[j]:
            unbounded = True
    if unbounded or not (np.isfinite(lo_mu) and np.isfinite(hi_mu)):
        _sweep_one(t, mu, scale, scores, fold_start, sizes, u, codes, levels, cap, out_lo, out_hi, out_n)
        return
    hpos = np.empty(2 * K)
    hrun = np.empty(2 * K, dtype=np.int64)
    ridx = np.zeros(2 * K, dtype=np.int64)
    size = _build_heap(hpos, hrun, ridx, t, mu, scale, scores, fold_start, sizes)
    leaving = np.empty(n, dtype=np.int64)
    counts = np.zeros(K)
    sum_counts = 0.0
    point = np.empty(M, dtype=np.bool_)
    inside = np.zeros(M, dtype=np.bool_)
    start = np.empty(M)
    for j in range(M):
        out_n[t, j] = 0
    in_left = True
    while size > 0 and hpos[0] <= hi_mu:
        b = hpos[0]
        size, n_enter, n_leave = _pop_point(b, hpos, hrun, size, ridx, counts, pk, sizes, leaving,
                                            t, mu, scale, scores, fold_start)
        sum_counts += n_enter
        sum_counts = _settle(b, n_enter, n_leave, leaving, counts, pk, sizes, n, sum_counts, u[t], codes, levels,
                             point, seg, inside, start, out_lo, out_hi, out_n, t, cap)
        if in_left:
            if size == 0 or hpos[0] >= lo_mu:
                in_left = False
            else:
                all_in = True
                for j in range(M):
                    if not inside[j]:
                        all_in = False
                if all_in:
                    # every set stays in up to min mu: jump over the rest of the left tail
                    in_left = False
                    sum_counts = 0.0
                    for k in range(K):
                        c = _left_before(t, k, lo_mu, mu, scale, scores, fold_start, sizes)
                        ridx[2 * k] = c
                        counts[k] = c
                        sum_counts += c
                        pk[k] = (1.0 + counts[k]) / (sizes[k] + 1.0)
                    size = _build_heap(hpos, hrun, ridx, t, mu, scale, scores, fold_start, sizes)
                    _evaluate(pk, n, sum_counts, u[t], codes, levels, seg)
                    for j in range(M):
                        if not seg[j]:  # cannot happen for monotone combiners; stay exact
                            _sweep_one(t, mu, scale, scores, fold_start, sizes, u, codes, levels, cap,
                                       out_lo, out_hi, out_n)
                            return
    need = 0
    for j in range(M):
        if inside[j]:
            need += 1
    if need == 0:
        return
    # right tail: the descending sweep of the right endpoints above max mu
    size = 0
    for k in range(K):
        if sizes[k] > 0:
            hpos[size] = -(mu[t, k] + scale[t, k] * scores[fold_start[k + 1] - 1])
            hrun[size] = k
            ridx[k] = 0
            size += 1
    for i in range(size // 2 - 1, -1, -1):
        _sift_down(hpos, hrun, size, i)
    for k in range(K):
        counts[k] = 0.0
        pk[k] = 1.0 / (sizes[k] + 1.0)
    sum_counts = 0.0
    while size > 0 and need > 0:
        b = -hpos[0]
        if b <= hi_mu:
            break
        while size > 0 and -hpos[0] == b:
            k = hrun[0]
            counts[k] += 1.0
            pk[k] = (1.0 + counts[k]) / (sizes[k] + 1.0)
            sum_counts += 1.0
            ridx[k] += 1
            if ridx[k] < sizes[k]:
                hpos[0] = -(mu[t, k] + scale[t, k] * scores[fold_start[k + 1] - 1 - ridx[k]])
            else:
                size -= 1
                hpos[0] = hpos[size]
                hrun[0] = hrun[size]
            _sift_down(hpos, hrun, size, 0)
        _evaluate(pk, n, sum_counts, u[t], codes, levels, point)
        for j in range(M):
            if inside[j] and point[j]:
                _emit(out_lo, out_hi, out_n, t, j, start[j], b, cap)
                inside[j] = False
                need -= 1
    if need > 0:  # cannot happen (the first right-tail point has the inside segment's counts)
        _sweep_one(t, mu, scale, scores, fold_start, sizes, u, codes, levels, cap, out_lo, out_hi, out_n)


@njit(cache=True, fastmath=False)
def _fold_sizes(fold_start):
    K = fold_start.shape[0] - 1
    sizes = np.empty(K)
    for k in range(K):
        sizes[k] = fold_start[k + 1] - fold_start[k]
    return sizes


@njit(cache=True, fastmath=False, parallel=True)
def sweep_sets(mu, scale, scores, fold_start, u, codes, levels, cap, out_lo, out_hi, out_n):
    """Exact sets for every test point and method (parallel over test points).

    mu, scale: (T, K) fold-model predictions and score scales at the test points; scores: (n,) the
    calibration scores, fold after fold; fold_start: (K + 1,) offsets into ``scores``; u: (T,) one
    U per test point; codes, levels: (M,) combiner code and threshold per method. Writes up to ``cap``
    intervals per (test, method) into out_lo/out_hi (T, M, cap) and the true count into out_n (T, M).
    """
    sizes = _fold_sizes(fold_start)
    for t in prange(mu.shape[0]):
        _sweep_one_tails(t, mu, scale, scores, fold_start, sizes, u, codes, levels, cap, out_lo, out_hi, out_n)


@njit(cache=True, fastmath=False)
def sweep_sets_serial(mu, scale, scores, fold_start, u, codes, levels, cap, out_lo, out_hi, out_n):
    """:func:`sweep_sets` on one thread (few test points: no thread start-up cost)."""
    sizes = _fold_sizes(fold_start)
    for t in range(mu.shape[0]):
        _sweep_one_tails(t, mu, scale, scores, fold_start, sizes, u, codes, levels, cap, out_lo, out_hi, out_n)



@njit(cache=True, fastmath=False)
def sweep_sets_full(mu, scale, scores, fold_start, u, codes, levels, cap, out_lo, out_hi, out_n):
    """The sweep over all 2n endpoints without skipping the tails (the kernel before issue 27),
    kept to check that :func:`sweep_sets` returns the same intervals bit for bit."""
    sizes = _fold_sizes(fold_start)
    for t in range(mu.shape[0]):
        _sweep_one(t, mu, scale, scores, fold_start, sizes, u, codes, levels, cap, out_lo, out_hi, out_n)

# Below this many (test points x scores) the serial kernel is used.
PARALLEL_MIN_WORK = 200_000


def run_sweep(mu: np.ndarray, scale: np.ndarray, scores: np.ndarray, fold_start: np.ndarray, u: np.ndarray,
              codes: np.ndarray, levels: np.ndarray, cap: int = 8) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Call :func:`sweep_sets` and return (counts (T, M), lower list, upper list) in CSR form.

    Returns ``offsets`` (M, T + 1), ``lower`` and ``upper`` as lists of M flat arrays. Test points
    whose set has more than ``cap`` intervals are recomputed with room for all of them.
    """
    mu = np.ascontiguousarray(mu, dtype=np.float64)
    scale = np.ascontiguousarray(scale, dtype=np.float64)
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    fold_start = np.ascontiguousarray(fold_start, dtype=np.int64)
    u = np.ascontiguousarray(u, dtype=np.float64)
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    levels = np.ascontiguousarray(levels, dtype=np.float64)
    T, M = mu.shape[0], codes.shape[0]
    lo = np.empty((T, M, cap))
    hi = np.empty((T, M, cap))
    cnt = np.empty((T, M), dtype=np.int64)
    kernel = sweep_sets if T * len(scores) >= PARALLEL_MIN_WORK else sweep_sets_serial
    kernel(mu, scale, scores, fold_start, u, codes, levels, cap, lo, hi, cnt)
    over = np.flatnonzero((cnt > cap).any(axis=1))
    big_lo = big_hi = None
    if len(over):
        big = int(cnt[over].max())
        big_lo = np.empty((len(over), M, big))
        big_hi = np.empty((len(over), M, big))
        big_cnt = np.empty((len(over), M), dtype=np.int64)
        kernel(mu[over], scale[over], scores, fold_start, u[over], codes, levels, big, big_lo, big_hi, big_cnt)
    offsets = np.zeros((M, T + 1), dtype=np.int64)
    offsets[:, 1:] = np.cumsum(cnt.T, axis=1)
    lowers, uppers = [], []
    for j in range(M):
        keep = np.arange(cap)[None, :] < np.minimum(cnt[:, j], cap)[:, None]
        flat_lo = lo[:, j, :][keep]
        flat_hi = hi[:, j, :][keep]
        if big_lo is not None:
            # Rebuild only when some test point overflowed; keep the CSR order.
            parts_lo, parts_hi = [], []
            where = {int(t): r for r, t in enumerate(over)}
            for t in range(T):
                c = int(cnt[t, j])
                if t in where:
                    parts_lo.append(big_lo[where[t], j, :c])
                    parts_hi.append(big_hi[where[t], j, :c])
                else:
                    parts_lo.append(lo[t, j, :c])
                    parts_hi.append(hi[t, j, :c])
            flat_lo = np.concatenate(parts_lo) if parts_lo else np.empty(0)
            flat_hi = np.concatenate(parts_hi) if parts_hi else np.empty(0)
        lowers.append(flat_lo)
        uppers.append(flat_hi)
    return offsets, lowers, uppers


# ------------------------------------------------------------------------------------ references
def _combine_named(p: np.ndarray, code: int, u: float, sizes: np.ndarray) -> np.ndarray:
    name = {v: k for k, v in COMBINER_CODE.items()}[int(code)]
    if name == "vovk":
        return vovk_from_pvalues(p, sizes)
    return combine(p, name, u)


def sweep_sets_reference(mu: np.ndarray, scale: np.ndarray, scores: np.ndarray, fold_start: np.ndarray,
                         u: np.ndarray, codes: np.ndarray, levels: np.ndarray) -> list[list[list[tuple[float, float]]]]:
    """Plain reference: for each test point and method, a list of closed intervals (lo, hi).

    Pieces are the distinct endpoints and the open gaps between them; counts on each piece are found by
    brute force over all scores, the combiners by :func:`combine`.
    """
    T, K = mu.shape
    sizes = np.diff(fold_start).astype(np.float64)
    fold_of = np.repeat(np.arange(K), np.diff(fold_start))
    out = []
    for t in range(T):
        r = scores * scale[t, fold_of]
        lo_i = mu[t, fold_of] - r
        hi_i = mu[t, fold_of] + r
        b = np.unique(np.concatenate([lo_i, hi_i]))
        # pieces: (-inf, b0), {b0}, (b0, b1), ..., {b_last}, (b_last, inf)
        pieces = [(-np.inf, b[0], False)]
        for i in range(len(b)):
            pieces.append((b[i], b[i], True))
            pieces.append((b[i], b[i + 1] if i + 1 < len(b) else np.inf, False))
        counts = np.zeros((len(pieces), K))
        for q, (a, c, is_point) in enumerate(pieces):
            if is_point:
                hit = (lo_i <= a) & (a <= hi_i)
            else:
                hit = (lo_i <= a) & (c <= hi_i) & np.isfinite(a) & np.isfinite(c)
            counts[q] = np.bincount(fold_of[hit], minlength=K)
        p = (1 + counts) / (sizes + 1)
        per_method = []
        for code, level in zip(codes, levels, strict=True):
            keep = in_set(_combine_named(p, code, u[t], sizes), level)
            intervals = []
            q = 0
            while q < len(pieces):
                if keep[q]:
                    s = q
                    while q + 1 < len(pieces) and keep[q + 1]:
                        q += 1
                    intervals.append((pieces[s][0], pieces[q][1]))
                q += 1
            per_method.append(intervals)
        out.append(per_method)
    return out


def grid_pvalues(mu: np.ndarray, scale: np.ndarray, scores: np.ndarray, fold_start: np.ndarray,
                 grid: np.ndarray) -> np.ndarray:
    """Fold p-values (T, G, K) on a grid, as the official code computes them (``R_i >= |y - mu| / s``)."""
    T, K = mu.shape
    out = np.empty((T, len(grid), K))
    for k in range(K):
        fold = np.sort(scores[fold_start[k]:fold_start[k + 1]])
        m = len(fold)
        d = np.abs(grid[None, :] - mu[:, k:k + 1]) / scale[:, k:k + 1]
        out[:, :, k] = (1 + m - np.searchsorted(fold, d, side="left")) / (m + 1)
    return out


def grid_scan_sets(mu: np.ndarray, scale: np.ndarray, scores: np.ndarray, fold_start: np.ndarray, u: np.ndarray,
                   codes: np.ndarray, levels: np.ndarray, grid: np.ndarray) -> list[list[list[tuple[float, float]]]]:
    """The official code's sets: keep grid points whose combined value exceeds the level; each run of
    kept points becomes the interval [first, last] of the run."""
    sizes = np.diff(fold_start).astype(np.float64)
    p = grid_pvalues(mu, scale, scores, fold_start, grid)
    out = []
    for t in range(mu.shape[0]):
        per_method = []
        for code, level in zip(codes, levels, strict=True):
            keep = in_set(_combine_named(p[t], code, u[t], sizes), level)
            edges = np.diff(np.concatenate([[0], keep.astype(np.int8), [0]]))
            starts = np.flatnonzero(edges == 1)
            stops = np.flatnonzero(edges == -1) - 1
            per_method.append([(float(grid[a]), float(grid[c])) for a, c in zip(starts, stops, strict=True)])
        out.append(per_method)
    return out
