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
    lexicon, bigram = random_reward(vocab, rng)
    return ToyTask(np.log(trans), np.log(init), lexicon, bigram, length)


def random_reward(vocab: int, rng: np.random.Generator):
    """About 1 in 5 tokens are lexicon tokens (+1 each) and 1 in 50 ordered pairs rewarded bigrams (+1 each)."""
    lexicon = np.where(rng.random(vocab) < 0.2, 1.0, 0.0)
    bigram = np.where(rng.random((vocab, vocab)) < 0.02, 1.0, 0.0)
    return lexicon, bigram


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


def markov_sampler(task: ToyTask):
    """``sample(n, length, rng, prefix=None) -> (n, length)`` ids from the Markov pi_ref, continuing ``prefix``."""
    trans = np.exp(task.log_trans)

    def sample(n, length, rng, prefix=None):
        out = np.zeros((n, length), dtype=np.int64)
        if prefix is None:
            out[:, 0] = rng.choice(len(task.log_init), size=n, p=np.exp(task.log_init))
            start = 1
        else:
            start = prefix.shape[1]
            out[:, :start] = prefix
        for t in range(start, length):
            cum = trans[out[:, t - 1]].cumsum(1)
            out[:, t] = (rng.random((n, 1)) < cum).argmax(1)
        return out

    return sample


def lm_sampler(module, vocab: int, chunk: int = 512):
    """The same interface for a neural pi_ref (plain sampling from its softmax, KV-cached), ``chunk`` rows at a
    time; a sequence without a prefix starts at a uniformly drawn token."""
    import torch

    from .decode import generate

    def sample(n, length, rng, prefix=None):
        if prefix is None:
            prefix = rng.integers(0, vocab, size=(n, 1))
        new = length - prefix.shape[1]
        if new <= 0:
            return prefix[:, :length].copy()
        parts = [generate(module, torch.as_tensor(prefix[s: s + chunk]), new, method="ref", k=vocab,
                          seed=int(rng.integers(2**31)))[0].cpu().numpy() for s in range(0, n, chunk)]
        return np.concatenate([prefix, np.concatenate(parts, 0)], 1).astype(np.int64)

    return sample


def sample(task: ToyTask, n: int, length: int, rng: np.random.Generator, prompt=None, sampler=None) -> np.ndarray:
    prefix = None if prompt is None else np.tile(np.asarray(prompt, dtype=np.int64), (n, 1))
    return (sampler or markov_sampler(task))(n, length, rng, prefix)


def preference_pairs(task: ToyTask, n: int, rng: np.random.Generator, prompt_len: int = 2, beta: float = 3.0,
                     min_len: int | None = None, sampler=None):
    """Two pi_ref continuations of one prompt per pair, labelled by Bradley-Terry on beta x the true reward;
    ties dropped. Each pair has its own length in [min_len, task.length] (``min_len`` None: all full length)."""
    sampler = sampler or markov_sampler(task)
    lengths = rng.integers(min_len or task.length, task.length + 1, size=n)
    a = sampler(n, task.length, rng)
    b = sampler(n, task.length, rng, a[:, :prompt_len])
    ra = np.array([true_reward(task, s[:m]) for s, m in zip(a, lengths, strict=True)])
    rb = np.array([true_reward(task, s[:m]) for s, m in zip(b, lengths, strict=True)])
    keep = ra != rb
    a_wins = rng.random(n) < 1 / (1 + np.exp(-beta * (ra - rb)))
    chosen = np.where(a_wins[:, None], a, b)[keep]
    rejected = np.where(a_wins[:, None], b, a)[keep]
    return [s[:m].tolist() for s, m in zip(chosen, lengths[keep], strict=True)], \
        [s[:m].tolist() for s, m in zip(rejected, lengths[keep], strict=True)]


def rollouts(task: ToyTask, n: int, rng: np.random.Generator, min_len: int | None = None, sampler=None):
    """pi_ref samples of lengths in [min_len, task.length] with their true rewards (CD-FUDGE's training data)."""
    lengths = rng.integers(min_len or task.length, task.length + 1, size=n)
    seqs = (sampler or markov_sampler(task))(n, task.length, rng)
    rows = [s[:m].tolist() for s, m in zip(seqs, lengths, strict=True)]
    return rows, np.array([true_reward(task, r) for r in rows])


def tree_values(rewards: np.ndarray, probs: np.ndarray):
    """Exact prefix values in an enumerable tree of depth 2: ``rewards[a, b]`` of sequence (a, b),
    ``probs[a, b]`` = pi_ref(b | a). Returns (max-constraint values max_b r(a, b), CD values E_pi[r | a])."""
    return rewards.max(1), (probs * rewards).sum(1)
