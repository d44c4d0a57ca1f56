"""Replay of a learner on an instance and the paper's metrics (Hu, Leung & Farnia, ICML 2025, Sec. 6).

Each round t draws a prompt uniformly among the available ones, the learner picks an available model,
and observes one score: a stored sample of that (model, prompt) cell drawn uniformly, or for a
synthetic instance the cell's mean plus Gaussian noise (clipped to [−1, 1]). The prompt stream and the
score draws depend only on (seed, run), so every learner of a run meets the same prompts.

Metrics at round t (expected scores s̄, so the noise of the draws does not blur them):
* regret: Σ_τ≤t (max over available models of s̄_g(y_τ) − s̄_{g_τ}(y_τ));
* OtB (outscore-the-best): mean s̄_{g_τ}(y_τ) minus the best mean of one model present from round 0;
* OPR (optimal-pick ratio): the share of rounds whose pick is a per-prompt best available model.
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from paperkit.methods.gen_select.instances import Instance
from paperkit.methods.gen_select.kernels import Kernel
from paperkit.methods.gen_select.learners import Learner, make_learner


@dataclass(frozen=True)
class Hyper:
    kernel: Kernel
    alpha: float = 1.0
    eta: float | None = None   # None: the learner's formula
    delta: float = 0.05
    rff_dim: int = 200
    rff_variant: str = "cos"
    update: str = "schur"


@dataclass
class Trace:
    """One run of one learner: per-round prompt, pick, observed score and the expected scores."""

    prompt: np.ndarray      # T prompt indices
    arm: np.ndarray         # T picks
    score: np.ndarray       # T observed scores
    chosen_mean: np.ndarray  # s̄ of the pick
    best_mean: np.ndarray   # max s̄ over available models
    optimal: np.ndarray     # pick is a best available model
    eta: float
    seconds: float


def stream_seed(seed: int, run: int) -> np.random.SeedSequence:
    return np.random.SeedSequence([int(seed), int(run), 0])


def learner_seed(seed: int, run: int, name: str) -> np.random.SeedSequence:
    return np.random.SeedSequence([int(seed), int(run), 1, zlib.crc32(name.encode())])


def draw_stream(inst: Instance, horizon: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(T prompt indices, T×G uniform draws used to pick a stored sample or make noise)."""
    start = inst.prompt_start()
    u = rng.random(horizon)
    order = np.argsort(start, kind="stable")
    avail = np.searchsorted(start[order], np.arange(horizon), side="right")  # prompts available at t
    if np.any(avail == 0):
        avail = np.maximum(avail, 1)
    prompts = order[np.minimum((u * avail).astype(np.int64), avail - 1)]
    return prompts, rng.random((horizon, inst.n_models))


def observations(inst: Instance, prompts: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """T×G: the score each model would show in each round (a stored sample picked by the draw, or the
    mean plus Gaussian noise whose quantile is the draw, clipped to [−1, 1])."""
    if inst.noise_sd is not None:
        from scipy.special import ndtri

        z = ndtri(np.clip(draws, 1e-300, 1 - 1e-16))
        return np.clip(inst.means[:, prompts].T + inst.noise_sd * z, -1.0, 1.0)
    cnt = inst.counts[:, prompts].T                      # T×G samples per cell
    idx = np.minimum((draws * cnt).astype(np.int64), cnt - 1)
    g = np.arange(inst.n_models)[None, :]
    return inst.samples[g, prompts[:, None], idx]


def build_learner(name: str, inst: Instance, hyper: Hyper, horizon: int, rng: np.random.Generator) -> Learner:
    from paperkit.methods.gen_select.learners import eta_formula

    n0 = int(np.sum(inst.starts() == 0))
    eta = hyper.eta if hyper.eta is not None else eta_formula(name, inst.n_models, horizon, hyper.delta)
    return make_learner(name, n0, inst.dim, rng, kernel=hyper.kernel, alpha=hyper.alpha, eta=eta,
                        rff_dim=hyper.rff_dim, rff_variant=hyper.rff_variant, best_arm=inst.best_fixed_arm(),
                        update=hyper.update)


def arm_order(inst: Instance) -> np.ndarray:
    """Instance model index of each learner arm: models present from round 0 first, then by start."""
    return np.argsort(inst.starts(), kind="stable")


def simulate(inst: Instance, name: str, horizon: int, *, hyper: Hyper, seed: int = 0, run: int = 0) -> Trace:
    """Play ``name`` for ``horizon`` rounds on ``inst`` (run ``run`` of seed ``seed``)."""
    prompts, draws = draw_stream(inst, horizon, np.random.default_rng(stream_seed(seed, run)))
    learner = build_learner(name, inst, hyper, horizon, np.random.default_rng(learner_seed(seed, run, name)))
    eta = float(getattr(learner, "eta", 0.0))
    means = inst.means
    starts = inst.starts()
    order = arm_order(inst)            # learner arm a ↔ instance model order[a]
    joins = sorted(int(s) for s in starts if s > 0)
    arm = np.empty(horizon, dtype=np.int64)
    score = np.empty(horizon)
    X = inst.contexts
    obs = observations(inst, prompts, draws)
    t0 = time.perf_counter()
    with threadpool_limits(1):  # one small product per round: BLAS threads cost more than they give
        _play(learner, horizon, prompts, X, obs, order, joins, arm, score)
    seconds = time.perf_counter() - t0
    live = starts[None, :] <= np.arange(horizon)[:, None]          # T×G availability
    m = means[:, prompts].T                                        # T×G expected scores
    best = np.max(np.where(live, m, -np.inf), axis=1)
    chosen = m[np.arange(horizon), arm]
    return Trace(prompts, arm, score, chosen, best, chosen >= best - 1e-12, eta, seconds)


def _play(learner: Learner, horizon: int, prompts: np.ndarray, X: np.ndarray, obs: np.ndarray, order: np.ndarray,
          joins: list[int], arm: np.ndarray, score: np.ndarray) -> None:
    for t in range(horizon):
        while joins and joins[0] <= t:
            joins.pop(0)
            learner.add_arm()
        i = prompts[t]
        a = learner.select(X[i])
        g = int(order[a])
        s = float(obs[t, g])
        learner.update(X[i], a, s)
        arm[t], score[t] = g, s


def curves(inst: Instance, trace: Trace) -> dict[str, np.ndarray]:
    """Cumulative metrics after each round: mean score, OtB, regret, OPR."""
    T = len(trace.arm)
    t = np.arange(1, T + 1)
    initial = np.flatnonzero(inst.starts() == 0)
    fixed = np.cumsum(inst.means[initial][:, trace.prompt], axis=1) / t    # each initial model, running mean
    mean_chosen = np.cumsum(trace.chosen_mean) / t
    return {
        "t": t,
        "score": np.cumsum(trace.score) / t,
        "otb": mean_chosen - fixed.max(axis=0),
        "regret": np.cumsum(trace.best_mean - trace.chosen_mean),
        "opr": np.cumsum(trace.optimal) / t,
    }


def visit_shares(trace: Trace, n_models: int, last: int | None = None) -> np.ndarray:
    arms = trace.arm if last is None else trace.arm[-last:]
    return np.bincount(arms, minlength=n_models) / max(len(arms), 1)


def type_shares(inst: Instance, trace: Trace, last: int) -> np.ndarray | None:
    """types×G: the share of each model among the rounds of each prompt type in the last ``last`` rounds."""
    if inst.types is None:
        return None
    types = inst.types[trace.prompt[-last:]]
    arms = trace.arm[-last:]
    k = len(inst.type_names) or int(inst.types.max()) + 1
    out = np.zeros((k, inst.n_models))
    for j in range(k):
        sel = types == j
        if sel.any():
            out[j] = np.bincount(arms[sel], minlength=inst.n_models) / sel.sum()
    return out
