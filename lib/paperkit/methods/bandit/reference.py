"""Plain-Python reference versions of the DR-MAB algorithms (Wang et al., ICML 2025), for tests and the
speed benchmark.

They are written independently of :mod:`paperkit.methods.bandit.kernels` and close to the paper's
algorithm boxes and the official code (lists, sets, recomputing everything every round, no caches), and
draw from the same SplitMix64 stream (via ``.py_func``) in the same order, so a jitted run and its
reference take the same actions and accumulate the same regret, round for round. They are about two
orders of magnitude slower; use them only on short horizons.
"""

from __future__ import annotations

import math

import numpy as np

from paperkit.core.rng_kernels import next_below, next_uniform, python_stream
from paperkit.methods.bandit.bounds import kl_bernoulli


class _Env:
    """Feedback and regret bookkeeping shared by every reference algorithm."""

    def __init__(self, mu, nu, best, seed, ckpts, track_trace):
        self.mu = [float(x) for x in mu]
        self.nu = [[float(x) for x in row] for row in nu]
        self.k = len(self.mu)
        self.best = best
        self.d_r = [self.mu[best] - x for x in self.mu]
        self.d_d = [self.nu[best][i] - 0.5 for i in range(self.k)]
        self.d_d[best] = 0.0
        self.state, self.call = python_stream(seed)
        self.ckpts = [int(c) for c in ckpts]
        self.out_r = [0.0] * len(self.ckpts)
        self.out_d = [0.0] * len(self.ckpts)
        self.t = 0
        self.cr = 0.0
        self.cd = 0.0
        self.trace = [] if track_trace else None
        # statistics
        self.pulls = [0] * self.k
        self.rsum = [0.0] * self.k
        self.muhat = [0.0] * self.k
        self.wins = [[0] * self.k for _ in range(self.k)]
        self.duels = [[0] * self.k for _ in range(self.k)]
        self.nuhat = [[0.0] * self.k for _ in range(self.k)]

    def uniform(self) -> float:
        return float(self.call(next_uniform))

    def below(self, n: int) -> int:
        return int(self.call(next_below, n))

    def duel(self, b: int, c: int) -> None:
        if b == c:
            return
        if self.uniform() < self.nu[b][c]:
            self.wins[b][c] += 1
        else:
            self.wins[c][b] += 1
        self.duels[b][c] += 1
        self.duels[c][b] += 1
        self.nuhat[b][c] = self.wins[b][c] / self.duels[b][c]
        self.nuhat[c][b] = self.wins[c][b] / self.duels[c][b]

    def pull(self, a: int) -> None:
        if self.uniform() < self.mu[a]:
            self.rsum[a] += 1.0
        self.pulls[a] += 1
        self.muhat[a] = self.rsum[a] / self.pulls[a]

    def step(self, a: int, b: int, c: int) -> None:
        """Close round t with pull a and duel (b, c) (feedback already drawn)."""
        self.cr += self.d_r[a]
        self.cd += 0.5 * (self.d_d[b] + self.d_d[c])
        if self.trace is not None:
            self.trace.append((a, b, c))
        for i, ck in enumerate(self.ckpts):
            if ck == self.t:
                self.out_r[i] = self.cr
                self.out_d[i] = self.cd

    def warmup(self, horizon: int) -> None:
        for k in range(self.k):
            for el in range(self.k):
                if el != k and self.t < horizon:
                    self.t += 1
                    self.duel(k, el)
                    self.pull(k)
                    self.step(k, k, el)

    def radius(self, count: int) -> float:
        return math.sqrt(2.0 * self.log_term / count)

    def result(self):
        trace = None if self.trace is None else np.array(self.trace, dtype=np.int64).reshape(-1, 3)
        return np.array(self.out_r), np.array(self.out_d), trace


def _fewest_duels(env: _Env, cand: list[int]) -> tuple[int, int]:
    pairs = [(env.duels[cand[i]][cand[j]], i, j) for i in range(len(cand)) for j in range(i + 1, len(cand))]
    _, i, j = min(pairs)  # smallest count, then the first pair in candidate order
    return cand[i], cand[j]


def _least_pulled(env: _Env, cand: list[int]) -> int:
    return min(cand, key=lambda k: (env.pulls[k], cand.index(k)))


def _first_argmax(values: dict[int, float] | list[float], keys: list[int]) -> int:
    best = keys[0]
    for k in keys[1:]:
        if values[k] > values[best]:
            best = k
    return best


def _duel_eliminated(env: _Env, cand: list[int], k: int) -> bool:
    return any(el != k and env.nuhat[k][el] + env.radius(env.duels[k][el]) < 0.5 for el in cand)


def _reward_eliminated(env: _Env, cand: list[int], k: int) -> bool:
    lead = _first_argmax(env.muhat, cand)
    return env.muhat[k] + env.radius(env.pulls[k]) <= env.muhat[lead] - env.radius(env.pulls[lead])


def elimfusion(mu, nu, best, horizon, delta, seed, ckpts, trace=False):
    env = _Env(mu, nu, best, seed, ckpts, trace)
    env.warmup(horizon)
    cand = list(range(env.k))
    while env.t < horizon:
        env.t += 1
        if len(cand) > 1:
            b, c = _fewest_duels(env, cand)
            a = _least_pulled(env, cand)
            env.duel(b, c)
            env.pull(a)
            env.log_term = math.log(env.k * env.t / delta)
            survivors = [k for k in cand if not _duel_eliminated(env, cand, k) and not _reward_eliminated(env, cand, k)]
            if survivors:
                cand = survivors
        else:
            a = b = c = cand[0]
            env.pull(a)
        env.step(a, b, c)
    return env.result()


def elim_nofusion(mu, nu, best, horizon, delta, seed, ckpts, trace=False):
    env = _Env(mu, nu, best, seed, ckpts, trace)
    env.warmup(horizon)
    cand_r = list(range(env.k))
    cand_d = list(range(env.k))
    while env.t < horizon:
        env.t += 1
        b, c = _fewest_duels(env, cand_d) if len(cand_d) > 1 else (cand_d[0], cand_d[0])
        a = _least_pulled(env, cand_r) if len(cand_r) > 1 else cand_r[0]
        env.duel(b, c)
        env.pull(a)
        env.log_term = math.log(env.k * env.t / delta)
        if len(cand_d) > 1:
            cand_d = [k for k in cand_d if not _duel_eliminated(env, cand_d, k)] or cand_d
        if len(cand_r) > 1:
            cand_r = [k for k in cand_r if not _reward_eliminated(env, cand_r, k)]
        env.step(a, b, c)
    return env.result()


def decofusion(mu, nu, best, horizon, alpha, f_coef, seed, ckpts, trace=False, env=None):
    env = env or _Env(mu, nu, best, seed, ckpts, trace)
    env.warmup(horizon)
    k_all = list(range(env.k))
    p_duel = alpha * alpha / (alpha * alpha + (1.0 - alpha) * (1.0 - alpha))
    plaus_r = list(k_all)   # \hat K^{(R)}: arms not yet told apart from the best by rewards
    plaus_d = list(k_all)   # \hat K^{(D)}: arms not yet told apart from the best by duels

    def indices():
        top = max(env.muhat[k] for k in plaus_d)
        info_r = [env.pulls[k] * kl_bernoulli(env.muhat[k], top) if env.pulls[k] > 0 else 0.0 for k in k_all]
        info_d = []
        for k in k_all:
            acc = 0.0
            for el in plaus_r:
                if el != k and env.nuhat[k][el] < 0.5:
                    acc += env.duels[k][el] * kl_bernoulli(env.nuhat[k][el], 0.5)
            info_d.append(acc)
        return info_r, info_d

    info_r, info_d = indices()
    current = list(k_all)   # exploration list; the next arm is the last one
    upcoming: set[int] = set()
    while env.t < horizon:
        env.t += 1
        beta = math.log(env.t) + f_coef * env.k ** 1.01
        plaus_r = [k for k in k_all if info_r[k] <= beta]
        k_d = min(plaus_r, key=lambda k: (info_d[k], k))
        plaus_d = [k for k in k_all if info_d[k] - info_d[k_d] <= beta]
        k_r = _first_argmax(env.muhat, plaus_d)
        e = current.pop()
        if env.uniform() < p_duel:
            may_lose_to = {k for k in plaus_r if k != e and env.nuhat[e][k] <= 0.5}
            if not may_lose_to or k_d in may_lose_to:
                opp = k_d
            else:
                others = [k for k in plaus_r if k != e]
                opp = min(others, key=lambda k: (env.nuhat[e][k], k))
            a, b, c = k_d, e, opp
        else:
            a, b, c = e, k_r, k_r
        upcoming |= {k for k in plaus_r if k in plaus_d and k not in current}
        if not current:
            current = sorted(upcoming)
            upcoming = set()
        env.duel(b, c)
        env.pull(a)
        info_r, info_d = indices()
        env.step(a, b, c)
    return env.result()


def med_nofusion(mu, nu, best, horizon, f_coef, seed, ckpts):
    env = _Env(mu, nu, best, seed, ckpts, False)
    out_r, _, _ = decofusion(mu, nu, best, horizon, 0.0, f_coef, seed, ckpts, env=env)
    env2 = _Env(mu, nu, best, seed, ckpts, False)
    env2.state[0] = env.state[0]  # the second run continues the same stream
    _, out_d, _ = decofusion(mu, nu, best, horizon, 1.0, f_coef, seed, ckpts, env=env2)
    return out_r, out_d, None


def _klucb_index(p, count, log_term, iters=50):
    lo, hi = p, 1.0
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if count * kl_bernoulli(p, mid) <= log_term:
            lo = mid
        else:
            hi = mid
    return lo


def ucb(mu, nu, best, horizon, seed, ckpts, trace=False, use_kl=False):
    env = _Env(mu, nu, best, seed, ckpts, trace)
    while env.t < horizon:
        env.t += 1
        if env.t <= env.k:
            a = env.t - 1
        else:
            lt = math.log(env.t)
            if use_kl:
                idx = [_klucb_index(env.muhat[k], env.pulls[k], lt) for k in range(env.k)]
            else:
                idx = [env.muhat[k] + math.sqrt(2.0 * lt / env.pulls[k]) for k in range(env.k)]
            a = _first_argmax(idx, list(range(env.k)))
        b = env.below(env.k)
        c = env.below(env.k)
        env.pull(a)
        env.step(a, b, c)
    return env.result()


def rucb_challenger(col, c, below):
    """RUCB's d = argmax_j U_{j,c} (``col[j]`` = U_{j,c}), ties broken by ``below(n)``; on a tie d ≠ c."""
    top = max(col)
    ties = [i for i in range(len(col)) if col[i] == top]
    if len(ties) > 1:
        ties = [i for i in ties if i != c]
    return ties[0] if len(ties) == 1 else ties[below(len(ties))]


def rucb(mu, nu, best, horizon, seed, ckpts, trace=False, alpha_r=0.51):
    env = _Env(mu, nu, best, seed, ckpts, trace)
    k_all = list(range(env.k))
    hyp: set[int] = set()
    while env.t < horizon:
        env.t += 1
        lt = math.log(env.t)

        def upper(i, j, lt=lt):
            if i == j:
                return 0.5
            tot = env.wins[i][j] + env.wins[j][i]
            return 1.0 if tot == 0 else env.wins[i][j] / tot + math.sqrt(alpha_r * lt / tot)

        cands = [i for i in k_all if all(upper(i, j) >= 0.5 for j in k_all)]
        hyp &= set(cands)
        if not cands:
            c = env.below(env.k)
        elif len(cands) == 1:
            c = cands[0]
            hyp = {c}
        elif hyp:
            (h,) = hyp
            if env.uniform() < 0.5:
                c = h
            else:
                rest = [i for i in cands if i != h]
                c = rest[env.below(len(rest))]
        else:
            c = cands[env.below(len(cands))]
        d = rucb_challenger([upper(i, c) for i in k_all], c, env.below)
        if c != d:
            if env.uniform() < env.nu[c][d]:
                env.wins[c][d] += 1
            else:
                env.wins[d][c] += 1
        a = env.below(env.k)
        env.step(a, c, d)
    return env.result()


def run_reference(name: str, mu, nu, best, horizon, *, alpha=0.5, delta=None, f_coef=0.05, seed=0, ckpts=None,
                  trace=False):
    """Dispatch by algorithm name; returns (reward regret, dueling regret, trace or None) at ``ckpts``."""
    delta = 1.0 / horizon if delta is None else delta
    ckpts = list(range(1, horizon + 1)) if ckpts is None else ckpts
    if name == "elimfusion":
        return elimfusion(mu, nu, best, horizon, delta, seed, ckpts, trace)
    if name == "elim-nofusion":
        return elim_nofusion(mu, nu, best, horizon, delta, seed, ckpts, trace)
    if name == "decofusion":
        return decofusion(mu, nu, best, horizon, alpha, f_coef, seed, ckpts, trace)
    if name == "med-nofusion":
        return med_nofusion(mu, nu, best, horizon, f_coef, seed, ckpts)
    if name in ("ucb", "klucb"):
        return ucb(mu, nu, best, horizon, seed, ckpts, trace, use_kl=name == "klucb")
    if name == "rucb":
        return rucb(mu, nu, best, horizon, seed, ckpts, trace)
    raise ValueError(f"unknown algorithm {name!r}")
