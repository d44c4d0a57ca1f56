"""Numba simulation kernels for DR-MAB (Wang et al., ICML 2025, Algorithms 1 and 2 and the baselines).

One function per algorithm simulates one run of T rounds. Each round the learner pulls an arm ``a``
(Bernoulli reward with mean μ_a) and duels a pair ``(b, c)`` (b wins with probability ν_{b,c}; a
self-duel ``b == c`` reveals nothing and draws nothing). Regret is accumulated in two parts,
reward Σ Δ^R_a and dueling Σ (Δ^D_b + Δ^D_c)/2, and stored at the checkpoint rounds ``ckpts``
(1-based, increasing); the aggregated regret α·reward + (1−α)·dueling is formed by the caller.

Randomness comes only from the SplitMix64 stream of :mod:`paperkit.core.rng_kernels`, one state per
run, in a fixed order per round (algorithm's own coin, then duel outcome, then reward), so a run is
the same under ``prange`` with any thread count, and the plain-Python references in
:mod:`paperkit.methods.bandit.reference` reproduce it step for step.

Differences from the official C++ code, all deliberate (documented in examples/bandit-sim/README.md):

* duel and reward estimates are wins/duels and rewards/pulls rather than running averages;
* kl(p, q) is +∞ when q ∈ {0, 1} and p ≠ q (the official code returns the reversed divergence);
* DecoFusion computes its information indices after the warm-up (the official code starts its first
  round with all indices at 0);
* ElimFusion never empties its candidate set (the official code would read past an empty vector).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from paperkit.core.rng_kernels import next_below, next_uniform

ELIMFUSION, DECOFUSION, ELIM_NOFUSION, MED_NOFUSION, UCB, KLUCB, RUCB = range(7)
ALGORITHMS = {"elimfusion": ELIMFUSION, "decofusion": DECOFUSION, "elim-nofusion": ELIM_NOFUSION,
              "med-nofusion": MED_NOFUSION, "ucb": UCB, "klucb": KLUCB, "rucb": RUCB}
RUCB_ALPHA = 0.51  # Zoghi et al. (2014)
KLUCB_ITERS = 50


# ------------------------------------------------------------------------------------------ shared
@njit(cache=True)
def _below(state, n):  # pragma: no cover
    # int64, so numba does not unify it with the int64 arm indices as float64
    return np.int64(next_below(state, n))


@njit(cache=True)
def kl_bern(p, q):  # pragma: no cover - jitted
    """Bernoulli kl(p, q); 0 log 0 = 0; +∞ when q ∈ {0, 1} and p ≠ q."""
    if p == q:
        return 0.0
    if q <= 0.0 or q >= 1.0:
        return np.inf
    if p <= 0.0:
        return -math.log(1.0 - q)
    if p >= 1.0:
        return -math.log(q)
    return p * math.log(p / q) + (1.0 - p) * math.log((1.0 - p) / (1.0 - q))


@njit(cache=True)
def _gaps(mu, nu, best):  # pragma: no cover
    k = mu.shape[0]
    d_r = np.empty(k)
    d_d = np.empty(k)
    for i in range(k):
        d_r[i] = mu[best] - mu[i]
        d_d[i] = nu[best, i] - 0.5
    d_d[best] = 0.0
    return d_r, d_d


@njit(cache=True)
def _duel(nu, b, c, wins, m, nuhat, state):  # pragma: no cover
    """Play duel (b, c), b != c, and update wins, counts and ν̂ for both orders."""
    if next_uniform(state) < nu[b, c]:
        wins[b, c] += 1
    else:
        wins[c, b] += 1
    m[b, c] += 1
    m[c, b] += 1
    nuhat[b, c] = wins[b, c] / m[b, c]
    nuhat[c, b] = wins[c, b] / m[c, b]


@njit(cache=True)
def _pull(mu, a, n, s, muhat, state):  # pragma: no cover
    if next_uniform(state) < mu[a]:
        s[a] += 1.0
    n[a] += 1
    muhat[a] = s[a] / n[a]


@njit(cache=True)
def _record(t, cr, cd, ckpts, j, out_r, out_d):  # pragma: no cover
    while j < ckpts.shape[0] and ckpts[j] == t:
        out_r[j] = cr
        out_d[j] = cd
        j += 1
    return j


@njit(cache=True)
def _pair_fewest_duels(cand, nc, m):  # pragma: no cover
    """The pair (i < j in candidate order) with the fewest duels; the first such pair on ties."""
    best_count = np.iinfo(np.int64).max
    b = cand[0]
    c = cand[0]
    for i in range(nc):
        k = cand[i]
        for jj in range(i + 1, nc):
            el = cand[jj]
            if m[k, el] < best_count:
                best_count = m[k, el]
                b = k
                c = el
    return b, c


@njit(cache=True)
def _least_pulled(cand, nc, n):  # pragma: no cover
    a = cand[0]
    for i in range(1, nc):
        if n[cand[i]] < n[a]:
            a = cand[i]
    return a


@njit(cache=True)
def _reward_eliminate(cand, nc, n, muhat, log_term, out):  # pragma: no cover
    """Reward elimination: drop k when μ̂_k + r(N_k) ≤ μ̂_lead − r(N_lead). Returns the new size."""
    lead = cand[0]
    for i in range(1, nc):
        if muhat[cand[i]] > muhat[lead]:
            lead = cand[i]
    lcb = muhat[lead] - math.sqrt(2.0 * log_term / n[lead])
    m = 0
    for i in range(nc):
        k = cand[i]
        if muhat[k] + math.sqrt(2.0 * log_term / n[k]) > lcb:
            out[m] = k
            m += 1
    return m


@njit(cache=True)
def _duel_beaten(k, cand, nc, m, nuhat, log_term):  # pragma: no cover
    """True when some l in the candidates beats k confidently: ν̂_{k,l} + r(M_{k,l}) < 1/2."""
    for jj in range(nc):
        el = cand[jj]
        if el != k and nuhat[k, el] < 0.5 and nuhat[k, el] + math.sqrt(2.0 * log_term / m[k, el]) < 0.5:
            return True
    return False


@njit(cache=True)
def _duel_beaten_since(k, b, c, full, cand, nc, m, nuhat, log_term):  # pragma: no cover
    """``_duel_beaten`` when only the pair (b, c) changed since the last full check.

    The radius grows with t, so a pair that did not eliminate k last round cannot eliminate it now
    unless its statistics changed; only the pair duelled this round has to be looked at (exactly the
    same decisions as the full check, in O(1) instead of O(|C|))."""
    if full:
        return _duel_beaten(k, cand, nc, m, nuhat, log_term)
    if k == b:
        el = c
    elif k == c:
        el = b
    else:
        return False
    return nuhat[k, el] < 0.5 and nuhat[k, el] + math.sqrt(2.0 * log_term / m[k, el]) < 0.5


@njit(cache=True)
def _warmup(mu, nu, d_r, d_d, n_total, n, s, muhat, wins, m, nuhat, state, ckpts, out_r, out_d, trace):  # pragma: no cover
    """K(K−1) rounds: for every ordered pair (k, l), k ≠ l, duel (k, l) and pull k."""
    k_arms = mu.shape[0]
    t = 0
    j = 0
    cr = 0.0
    cd = 0.0
    for k in range(k_arms):
        for el in range(k_arms):
            if el == k or t >= n_total:
                continue
            t += 1
            _duel(nu, k, el, wins, m, nuhat, state)
            _pull(mu, k, n, s, muhat, state)
            cr += d_r[k]
            cd += 0.5 * (d_d[k] + d_d[el])
            if t <= trace.shape[0]:
                trace[t - 1, 0] = k
                trace[t - 1, 1] = k
                trace[t - 1, 2] = el
            j = _record(t, cr, cd, ckpts, j, out_r, out_d)
    return t, j, cr, cd


@njit(cache=True)
def _state_arrays(k):  # pragma: no cover
    return (np.zeros(k, np.int64), np.zeros(k), np.zeros(k),
            np.zeros((k, k), np.int64), np.zeros((k, k), np.int64), np.zeros((k, k)))


# -------------------------------------------------------------------------------------- ElimFusion
@njit(cache=True)
def run_elimfusion(mu, nu, best, horizon, delta, state, ckpts, out_r, out_d, trace):  # pragma: no cover
    """Algorithm 1 (ElimFusion): one candidate set shared by reward and dueling elimination."""
    k_arms = mu.shape[0]
    d_r, d_d = _gaps(mu, nu, best)
    n, s, muhat, wins, m, nuhat = _state_arrays(k_arms)
    t, j, cr, cd = _warmup(mu, nu, d_r, d_d, horizon, n, s, muhat, wins, m, nuhat, state, ckpts, out_r, out_d, trace)
    cand = np.arange(k_arms)
    nc = k_arms
    buf = np.empty(k_arms, np.int64)
    full = True  # the first elimination after the warm-up checks every pair
    while t < horizon:
        t += 1
        if nc > 1:
            b, c = _pair_fewest_duels(cand, nc, m)
            a = _least_pulled(cand, nc, n)
            _duel(nu, b, c, wins, m, nuhat, state)
            _pull(mu, a, n, s, muhat, state)
            log_term = math.log(k_arms * t / delta)
            lead = cand[0]
            for i in range(1, nc):
                if muhat[cand[i]] > muhat[lead]:
                    lead = cand[i]
            lcb = muhat[lead] - math.sqrt(2.0 * log_term / n[lead])
            kept = 0
            for i in range(nc):
                k = cand[i]
                if _duel_beaten_since(k, b, c, full, cand, nc, m, nuhat, log_term):
                    continue
                if muhat[k] + math.sqrt(2.0 * log_term / n[k]) <= lcb:
                    continue
                buf[kept] = k
                kept += 1
            if kept > 0:
                for i in range(kept):
                    cand[i] = buf[i]
                nc = kept
            full = kept == 0  # nothing applied: conditions that held still hold
        else:
            a = cand[0]
            b = a
            c = a
            _pull(mu, a, n, s, muhat, state)
        cr += d_r[a]
        cd += 0.5 * (d_d[b] + d_d[c])
        if t <= trace.shape[0]:
            trace[t - 1, 0] = a
            trace[t - 1, 1] = b
            trace[t - 1, 2] = c
        j = _record(t, cr, cd, ckpts, j, out_r, out_d)


# ------------------------------------------------------------------------------------ ElimNoFusion
@njit(cache=True)
def run_elim_nofusion(mu, nu, best, horizon, delta, state, ckpts, out_r, out_d, trace):  # pragma: no cover
    """Reward elimination and dueling elimination side by side, each deciding with its own feedback."""
    k_arms = mu.shape[0]
    d_r, d_d = _gaps(mu, nu, best)
    n, s, muhat, wins, m, nuhat = _state_arrays(k_arms)
    t, j, cr, cd = _warmup(mu, nu, d_r, d_d, horizon, n, s, muhat, wins, m, nuhat, state, ckpts, out_r, out_d, trace)
    cand_r = np.arange(k_arms)
    cand_d = np.arange(k_arms)
    nr = k_arms
    nd = k_arms
    buf = np.empty(k_arms, np.int64)
    full = True
    while t < horizon:
        t += 1
        if nd > 1:
            b, c = _pair_fewest_duels(cand_d, nd, m)
        else:
            b = cand_d[0]
            c = b
        a = _least_pulled(cand_r, nr, n) if nr > 1 else cand_r[0]
        if b != c:
            _duel(nu, b, c, wins, m, nuhat, state)
        _pull(mu, a, n, s, muhat, state)
        log_term = math.log(k_arms * t / delta)
        if nd > 1:
            kept = 0
            for i in range(nd):
                k = cand_d[i]
                if not _duel_beaten_since(k, b, c, full, cand_d, nd, m, nuhat, log_term):
                    buf[kept] = k
                    kept += 1
            if kept > 0:
                for i in range(kept):
                    cand_d[i] = buf[i]
                nd = kept
            full = kept == 0
        if nr > 1:
            nr = _reward_eliminate(cand_r, nr, n, muhat, log_term, buf)
            for i in range(nr):
                cand_r[i] = buf[i]
        cr += d_r[a]
        cd += 0.5 * (d_d[b] + d_d[c])
        if t <= trace.shape[0]:
            trace[t - 1, 0] = a
            trace[t - 1, 1] = b
            trace[t - 1, 2] = c
        j = _record(t, cr, cd, ckpts, j, out_r, out_d)


# -------------------------------------------------------------------------------------- DecoFusion
@njit(cache=True)
def _duel_info_term(m, nuhat, k, el):  # pragma: no cover
    if nuhat[k, el] < 0.5:
        return m[k, el] * kl_bern(nuhat[k, el], 0.5)
    return 0.0


@njit(cache=True)
def _pinsker(count, p, q):  # pragma: no cover
    return 2.0 * count * (p - q) * (p - q)


@njit(cache=True)
def run_decofusion(mu, nu, best, horizon, alpha, f_coef, state, ckpts, out_r, out_d, trace):  # pragma: no cover
    """Algorithm 2 (DecoFusion): information indices, plausible sets, randomised explore/exploit split."""
    k_arms = mu.shape[0]
    d_r, d_d = _gaps(mu, nu, best)
    n, s, muhat, wins, m, nuhat = _state_arrays(k_arms)
    t, j, cr, cd = _warmup(mu, nu, d_r, d_d, horizon, n, s, muhat, wins, m, nuhat, state, ckpts, out_r, out_d, trace)
    p_duel = alpha * alpha / (alpha * alpha + (1.0 - alpha) * (1.0 - alpha))
    f_k = f_coef * k_arms ** 1.01
    in_pr = np.ones(k_arms, np.bool_)
    in_pd = np.ones(k_arms, np.bool_)
    pr_list = np.arange(k_arms)
    n_pr = k_arms
    info_r = np.zeros(k_arms)
    info_d = np.zeros(k_arms)
    # cached M_{k,l}·kl(ν̂_{k,l}, 1/2) for ν̂_{k,l} < 1/2 (0 otherwise); only the duelled pair changes
    dterm = np.zeros((k_arms, k_arms))
    for k in range(k_arms):
        for el in range(k_arms):
            if el != k:
                dterm[k, el] = _duel_info_term(m, nuhat, k, el)
    cur = np.arange(k_arms)       # exploration list, popped from the back
    n_cur = k_arms
    in_cur = np.ones(k_arms, np.bool_)
    in_next = np.zeros(k_arms, np.bool_)
    # indices from the warm-up statistics, with the initial sets (all arms plausible)
    max_mu = -1.0
    for k in range(k_arms):
        if in_pd[k] and muhat[k] > max_mu:
            max_mu = muhat[k]
    # I^R_k = N_k·kl(μ̂_k, max μ̂) is only ever compared with β_t; Pinsker's 2N(p−q)² ≤ N·kl(p, q) is kept
    # as a cheap lower bound (info_exact False) and the exact value is computed when the bound is not
    # already above β_t — the same decisions as computing every index exactly, with far fewer logs.
    info_exact = np.zeros(k_arms, np.bool_)
    for k in range(k_arms):
        info_r[k] = _pinsker(n[k], muhat[k], max_mu)
        acc = 0.0
        for i in range(n_pr):
            el = pr_list[i]
            if el != k:
                acc += dterm[k, el]
        info_d[k] = acc
    prev_max_mu = max_mu
    while t < horizon:
        t += 1
        beta = math.log(t) + f_k
        # reward-plausible set, duel leader, duel-plausible set, reward leader
        n_pr = 0
        k_d = -1
        for k in range(k_arms):
            if not info_exact[k] and info_r[k] <= beta:
                info_r[k] = n[k] * kl_bern(muhat[k], max_mu) if n[k] > 0 else 0.0
                info_exact[k] = True
            in_pr[k] = info_r[k] <= beta
            if in_pr[k]:
                pr_list[n_pr] = k
                n_pr += 1
                if k_d < 0 or info_d[k] < info_d[k_d]:
                    k_d = k
        k_r = -1
        for k in range(k_arms):
            in_pd[k] = info_d[k] - info_d[k_d] <= beta
            if in_pd[k] and (k_r < 0 or muhat[k] > muhat[k_r]):
                k_r = k
        # explore the next arm of the list
        n_cur -= 1
        e = cur[n_cur]
        in_cur[e] = False
        if next_uniform(state) < p_duel:
            # duel-explore, reward-exploit: duel e against the duel leader, or against its strongest
            # reward-plausible opponent when the leader is not among the arms e may lose to
            any_o = False
            kd_in_o = False
            for i in range(n_pr):
                k = pr_list[i]
                if k != e and nuhat[e, k] <= 0.5:
                    any_o = True
                    if k == k_d:
                        kd_in_o = True
            opp = k_d
            if any_o and not kd_in_o:
                low = np.inf
                for i in range(n_pr):
                    k = pr_list[i]
                    if k != e and nuhat[e, k] < low:
                        low = nuhat[e, k]
                        opp = k
            a = k_d
            b = e
            c = opp
        else:
            # reward-explore, duel-exploit
            a = e
            b = k_r
            c = k_r
        # arms plausible for both feedbacks and not in the current list go into the next list
        for k in range(k_arms):
            if in_pr[k] and in_pd[k] and not in_cur[k]:
                in_next[k] = True
        if n_cur == 0:
            for k in range(k_arms):
                if in_next[k]:
                    cur[n_cur] = k
                    n_cur += 1
                    in_cur[k] = True
                    in_next[k] = False
        if b != c:
            _duel(nu, b, c, wins, m, nuhat, state)
            dterm[b, c] = _duel_info_term(m, nuhat, b, c)
            dterm[c, b] = _duel_info_term(m, nuhat, c, b)
        _pull(mu, a, n, s, muhat, state)
        # information indices
        max_mu = -1.0
        for k in range(k_arms):
            if in_pd[k] and muhat[k] > max_mu:
                max_mu = muhat[k]
        if max_mu == prev_max_mu:
            info_r[a] = _pinsker(n[a], muhat[a], max_mu)
            info_exact[a] = False
        else:
            for k in range(k_arms):
                info_r[k] = _pinsker(n[k], muhat[k], max_mu)
                info_exact[k] = False
            prev_max_mu = max_mu
        for k in range(k_arms):
            acc = 0.0
            for i in range(n_pr):
                el = pr_list[i]
                if el != k:
                    acc += dterm[k, el]
            info_d[k] = acc
        cr += d_r[a]
        cd += 0.5 * (d_d[b] + d_d[c])
        if t <= trace.shape[0]:
            trace[t - 1, 0] = a
            trace[t - 1, 1] = b
            trace[t - 1, 2] = c
        j = _record(t, cr, cd, ckpts, j, out_r, out_d)


@njit(cache=True)
def run_med_nofusion(mu, nu, best, horizon, f_coef, state, ckpts, out_r, out_d):  # pragma: no cover
    """MED-NoFusion as in the official code: the reward regret of DecoFusion at α = 0 (DMED-like reward
    exploration) and the dueling regret of an independent DecoFusion run at α = 1 (RMED-like)."""
    tmp = np.empty(ckpts.shape[0])
    no_trace = np.empty((0, 3), np.int64)
    run_decofusion(mu, nu, best, horizon, 0.0, f_coef, state, ckpts, out_r, tmp, no_trace)
    run_decofusion(mu, nu, best, horizon, 1.0, f_coef, state, ckpts, tmp, out_d, no_trace)


# ------------------------------------------------------------------------------- single-feedback extras
@njit(cache=True)
def _klucb_index(p, count, log_term):  # pragma: no cover
    lo = p
    hi = 1.0
    for _ in range(KLUCB_ITERS):
        mid = 0.5 * (lo + hi)
        if count * kl_bern(p, mid) <= log_term:
            lo = mid
        else:
            hi = mid
    return lo


@njit(cache=True)
def run_ucb(mu, nu, best, horizon, use_kl, state, ckpts, out_r, out_d, trace):  # pragma: no cover
    """UCB1 (or KL-UCB with ``use_kl``) on rewards; the duel is a uniformly random pair (no fusion)."""
    k_arms = mu.shape[0]
    d_r, d_d = _gaps(mu, nu, best)
    n = np.zeros(k_arms, np.int64)
    s = np.zeros(k_arms)
    muhat = np.zeros(k_arms)
    cr = 0.0
    cd = 0.0
    j = 0
    for t in range(1, horizon + 1):
        if t <= k_arms:
            a = t - 1
        else:
            log_term = math.log(t)
            a = 0
            best_idx = -np.inf
            for k in range(k_arms):
                if use_kl:
                    # kl(μ̂, ·) grows above μ̂: if N·kl(μ̂, best) > log t the index is below the best one
                    if muhat[k] < best_idx and n[k] * kl_bern(muhat[k], best_idx) > log_term:
                        continue
                    idx = _klucb_index(muhat[k], n[k], log_term)
                else:
                    idx = muhat[k] + math.sqrt(2.0 * log_term / n[k])
                if idx > best_idx:
                    best_idx = idx
                    a = k
        b = _below(state, k_arms)
        c = _below(state, k_arms)
        _pull(mu, a, n, s, muhat, state)
        cr += d_r[a]
        cd += 0.5 * (d_d[b] + d_d[c])
        if t <= trace.shape[0]:
            trace[t - 1, 0] = a
            trace[t - 1, 1] = b
            trace[t - 1, 2] = c
        j = _record(t, cr, cd, ckpts, j, out_r, out_d)


@njit(cache=True)
def _rucb_u(wins, i, el, log_term):  # pragma: no cover
    if i == el:
        return 0.5
    tot = wins[i, el] + wins[el, i]
    return 1.0 if tot == 0 else wins[i, el] / tot + math.sqrt(RUCB_ALPHA * log_term / tot)


@njit(cache=True)
def rucb_challenger(wins, c, log_term, state, ties):  # pragma: no cover
    """d = argmax_j U_{j,c}, ties broken uniformly at random; on a tie d ≠ c (Zoghi et al., 2014,
    Algorithm 1, line 14: c duels itself only when it alone attains the maximum). ``ties`` is scratch."""
    top = -np.inf
    n_t = 0
    for i in range(wins.shape[0]):
        u_ic = _rucb_u(wins, i, c, log_term)
        if u_ic > top:
            top = u_ic
            ties[0] = i
            n_t = 1
        elif u_ic == top:
            ties[n_t] = i
            n_t += 1
    if n_t > 1:
        m = 0
        for q in range(n_t):
            if ties[q] != c:
                ties[m] = ties[q]
                m += 1
        n_t = m
    return ties[0] if n_t == 1 else ties[_below(state, n_t)]


@njit(cache=True)
def run_rucb(mu, nu, best, horizon, state, ckpts, out_r, out_d, trace):  # pragma: no cover
    """RUCB (Zoghi et al., 2014) on duels; the pull is a uniformly random arm (no fusion)."""
    k_arms = mu.shape[0]
    d_r, d_d = _gaps(mu, nu, best)
    wins = np.zeros((k_arms, k_arms), np.int64)
    in_c = np.zeros(k_arms, np.bool_)
    c_list = np.empty(k_arms, np.int64)
    ties = np.empty(k_arms, np.int64)
    hyp = -1  # the set B of the paper (at most one arm)
    cr = 0.0
    cd = 0.0
    j = 0
    for t in range(1, horizon + 1):
        log_term = math.log(t)
        n_c = 0
        for i in range(k_arms):
            ok = True
            for el in range(k_arms):
                if i != el:
                    tot = wins[i, el] + wins[el, i]
                    # U ≥ 1/2 is certain when the empirical rate already is (saves the square root)
                    if tot > 0 and wins[i, el] / tot < 0.5 and _rucb_u(wins, i, el, log_term) < 0.5:
                        ok = False
                        break
            in_c[i] = ok
            if ok:
                c_list[n_c] = i
                n_c += 1
        if hyp >= 0 and not in_c[hyp]:
            hyp = -1
        if n_c == 0:
            c = _below(state, k_arms)
        elif n_c == 1:
            c = c_list[0]
            hyp = c
        elif hyp >= 0:
            if next_uniform(state) < 0.5:
                c = hyp
            else:
                r = _below(state, n_c - 1)
                c = -1
                for i in range(n_c):
                    if c_list[i] != hyp:
                        if r == 0:
                            c = c_list[i]
                            break
                        r -= 1
        else:
            c = c_list[_below(state, n_c)]
        d = rucb_challenger(wins, c, log_term, state, ties)  # the strongest challenger of c
        if c != d:
            if next_uniform(state) < nu[c, d]:
                wins[c, d] += 1
            else:
                wins[d, c] += 1
        a = _below(state, k_arms)
        cr += d_r[a]
        cd += 0.5 * (d_d[c] + d_d[d])
        if t <= trace.shape[0]:
            trace[t - 1, 0] = a
            trace[t - 1, 1] = c
            trace[t - 1, 2] = d
        j = _record(t, cr, cd, ckpts, j, out_r, out_d)


# -------------------------------------------------------------------------------------------- driver
@njit(cache=True)
def run_one(algo, mu, nu, best, horizon, alpha, delta, f_coef, state, ckpts, out_r, out_d, trace):  # pragma: no cover
    if algo == ELIMFUSION:
        run_elimfusion(mu, nu, best, horizon, delta, state, ckpts, out_r, out_d, trace)
    elif algo == DECOFUSION:
        run_decofusion(mu, nu, best, horizon, alpha, f_coef, state, ckpts, out_r, out_d, trace)
    elif algo == ELIM_NOFUSION:
        run_elim_nofusion(mu, nu, best, horizon, delta, state, ckpts, out_r, out_d, trace)
    elif algo == MED_NOFUSION:
        run_med_nofusion(mu, nu, best, horizon, f_coef, state, ckpts, out_r, out_d)
    elif algo == UCB:
        run_ucb(mu, nu, best, horizon, False, state, ckpts, out_r, out_d, trace)
    elif algo == KLUCB:
        run_ucb(mu, nu, best, horizon, True, state, ckpts, out_r, out_d, trace)
    else:
        run_rucb(mu, nu, best, horizon, state, ckpts, out_r, out_d, trace)


@njit(cache=True, parallel=True)
def simulate_runs(algo, mu, nu, best, horizon, alpha, delta, f_coef, seeds, ckpts, out_r, out_d):  # pragma: no cover
    """Independent runs in parallel; run i uses its own stream seeded with ``seeds[i]``."""
    for i in prange(seeds.shape[0]):
        state = np.empty(1, np.uint64)
        state[0] = np.uint64(seeds[i])
        no_trace = np.empty((0, 3), np.int64)
        run_one(algo, mu, nu, best, horizon, alpha, delta, f_coef, state, ckpts, out_r[i], out_d[i], no_trace)


def trace_run(algo: int, mu, nu, best: int, horizon: int, alpha: float, delta: float, f_coef: float, seed: int,
              ckpts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One jitted run that also returns its actions (T×3: pulled arm, duel pair); for tests and debugging."""
    state = np.array([np.uint64(seed)], dtype=np.uint64)
    ckpts = np.asarray(ckpts, dtype=np.int64)
    out_r = np.zeros(ckpts.size)
    out_d = np.zeros(ckpts.size)
    trace = np.full((horizon, 3), -1, dtype=np.int64)
    run_one(algo, np.asarray(mu, np.float64), np.asarray(nu, np.float64), best, horizon, alpha, delta, f_coef,
            state, ckpts, out_r, out_d, trace)
    return out_r, out_d, trace
