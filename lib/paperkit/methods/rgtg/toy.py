"""Toy language: a random Markov base LM, an additive lexicon+bigram reward, and its exact optimum by DP."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ToyTask:
    log_trans: np.ndarray  # (V, V) log pi_ref(b | a)
    log_init: np.ndarray  # (V,)
    lexicon: np.ndarray  # (V,) reward per token
    bigram: np.ndarray  # (V, V) reward per adjacent pair
    length: int


def make_task(vocab: int, length: int, seed: int, concentration: float = 0.3) -> ToyTask:
    rng = np.random.default_rng(seed)
    trans = rng.dirichlet(np.full(vocab, concentration), size=vocab)
    init = rng.dirichlet(np.ones(vocab))
    lexicon = np.where(rng.random(vocab) < 0.2, 1.0, 0.0)
    bigram = np.where(rng.random((vocab, vocab)) < 0.02, 1.0, 0.0)
    return ToyTask(np.log(trans), np.log(init), lexicon, bigram, length)


def true_reward(task: ToyTask, seq) -> float:
    seq = np.asarray(seq)
    return float(task.lexicon[seq].sum() + task.bigram[seq[:-1], seq[1:]].sum())


def optimum(task: ToyTask, prompt, k: int | None = None) -> float:
    """Max true reward over all continuations of ``prompt`` to ``task.length`` tokens (Viterbi DP);
    with ``k``, only over continuations whose every token is among pi_ref's top k after its predecessor."""
    prompt = list(prompt)
    base = true_reward(task, prompt)
    remaining = task.length - len(prompt)
    # best[a] = best reward of the remaining suffix given the previous token is a
    step = task.lexicon[None, :] + task.bigram
    if k is not None:
        rank = np.argsort(np.argsort(-task.log_trans, axis=1), axis=1)
        step = np.where(rank < k, step, -np.inf)
    best = np.zeros(len(task.lexicon))
    for _ in range(remaining):
        best = np.max(step + best[None, :], axis=1)
    return base + float(best[prompt[-1]])


def sample(task: ToyTask, n: int, length: int, rng: np.random.Generator, prompt=None) -> np.ndarray:
    trans = np.exp(task.log_trans)
    out = np.zeros((n, length), dtype=np.int64)
    start = 0
    if prompt is not None:
        out[:, : len(prompt)] = prompt
        start = len(prompt)
    else:
        out[:, 0] = rng.choice(len(task.log_init), size=n, p=np.exp(task.log_init))
        start = 1
    for t in range(start, length):
        cum = trans[out[:, t - 1]].cumsum(1)
        out[:, t] = (rng.random((n, 1)) < cum).argmax(1)
    return out


def preference_pairs(task: ToyTask, n: int, rng: np.random.Generator, prompt_len: int = 2, beta: float = 3.0,
                     min_len: int | None = None):
    """Two pi_ref continuations of one prompt per pair, labelled by Bradley-Terry on beta x the true reward;
    ties dropped. Each pair has its own length in [min_len, task.length] (responses vary in length, as in
    real preference data, so the RM learns token scores at every position, not only the last)."""
    lengths = rng.integers(min_len or task.length, task.length + 1, size=n)
    a = sample(task, n, task.length, rng)
    b = a.copy()
    b = _continue(task, b, prompt_len, rng)
    ra = np.array([true_reward(task, s[:m]) for s, m in zip(a, lengths, strict=True)])
    rb = np.array([true_reward(task, s[:m]) for s, m in zip(b, lengths, strict=True)])
    keep = ra != rb
    a_wins = rng.random(n) < 1 / (1 + np.exp(-beta * (ra - rb)))
    chosen = np.where(a_wins[:, None], a, b)[keep]
    rejected = np.where(a_wins[:, None], b, a)[keep]
    return [s[:m].tolist() for s, m in zip(chosen, lengths[keep], strict=True)], \
        [s[:m].tolist() for s, m in zip(rejected, lengths[keep], strict=True)]


def rollouts(task: ToyTask, n: int, rng: np.random.Generator, min_len: int | None = None):
    """pi_ref samples of lengths in [min_len, task.length] with their true rewards (CD-FUDGE's training data)."""
    lengths = rng.integers(min_len or task.length, task.length + 1, size=n)
    seqs = sample(task, n, task.length, rng)
    rows = [s[:m].tolist() for s, m in zip(seqs, lengths, strict=True)]
    return rows, np.array([true_reward(task, r) for r in rows])


def _continue(task, seqs, start, rng):
    trans = np.exp(task.log_trans)
    for t in range(start, seqs.shape[1]):
        cum = trans[seqs[:, t - 1]].cumsum(1)
        seqs[:, t] = (rng.random((len(seqs), 1)) < cum).argmax(1)
    return seqs


def tree_values(rewards: np.ndarray, probs: np.ndarray):
    """Exact prefix values in an enumerable tree of depth 2: ``rewards[a, b]`` of sequence (a, b),
    ``probs[a, b]`` = pi_ref(b | a). Returns (max-constraint values max_b r(a, b), CD values E_pi[r | a])."""
    return rewards.max(1), (probs * rewards).sum(1)
