"""Reward-guided decoding with exact call counters: ref, farma/cd (1 RM call per token), args (k per token)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch


@dataclass
class Counters:
    lm_calls: int = 0
    rm_calls: int = 0
    tokens: int = 0
    seconds: float = 0.0
    per_row_rm: list = field(default_factory=list)


def _select(scores, k, greedy, gen):
    top, idx = scores.topk(k, dim=-1)
    if greedy:
        return idx[:, 0]
    probs = torch.softmax(top, -1)
    choice = torch.multinomial(probs, 1, generator=gen).squeeze(1)
    return idx.gather(1, choice[:, None]).squeeze(1)


@torch.no_grad()
def generate(lm, prompts, max_new: int, *, method: str = "farma", rm=None, k: int = 10, w: float = 1.0,
             greedy: bool = False, seed: int = 0, use_cache: bool = True, seq_rm=None,
             score_impl: str = "loop"):
    """``prompts``: (B, P) token ids of equal length. Returns (B, max_new) new tokens and Counters.

    RM/LM calls are counted per generated token per row: one forward over a batch of B rows = B calls.
    ``args`` scores each of the top-k (by LM logit) candidates with the full-sequence RM ``seq_rm``.
    """
    gen = torch.Generator().manual_seed(seed)
    counters = Counters()
    t0 = time.perf_counter()
    seqs = prompts.clone()
    lm_cache = rm_cache = None
    lm_in = rm_in = seqs
    bsz = len(seqs)
    for _ in range(max_new):
        lm_logits, lm_cache = lm(lm_in, cache=lm_cache) if use_cache else lm(seqs)
        counters.lm_calls += bsz
        logits = lm_logits[:, -1]
        if method == "ref":
            nxt = _select(logits, k, greedy, gen)
        elif method in ("farma", "cd"):
            r_logits, rm_cache = rm(rm_in, cache=rm_cache) if use_cache else rm(seqs)
            counters.rm_calls += bsz
            nxt = _select(logits + w * r_logits[:, -1], k, greedy, gen)
        elif method == "args":
            cand = logits.topk(k, -1).indices  # (B, k)
            scores = _score_candidates(seq_rm, seqs, cand, score_impl)
            counters.rm_calls += bsz * k
            combined = torch.log_softmax(logits, -1).gather(1, cand) + w * scores
            pick = combined.argmax(1) if greedy else torch.multinomial(torch.softmax(combined, -1), 1, generator=gen)[:, 0]
            nxt = cand.gather(1, pick.reshape(-1, 1)).squeeze(1)
        else:
            raise ValueError(f"unknown method {method!r}")
        seqs = torch.cat([seqs, nxt[:, None]], 1)
        lm_in = rm_in = nxt[:, None]
        counters.tokens += bsz
    counters.seconds = time.perf_counter() - t0
    return seqs[:, prompts.shape[1] :], counters


def _score_candidates(seq_rm, seqs, cand, score_impl):
    """(B, k) full-sequence RM scores of each prefix extended by each candidate; ``batched`` scores all
    B*k sequences in one forward (still k RM calls per row)."""
    bsz, k = cand.shape
    if score_impl == "batched":
        ext = torch.cat([seqs.repeat_interleave(k, 0), cand.reshape(-1, 1)], 1)
        return seq_rm(ext).reshape(bsz, k)
    return torch.stack([seq_rm(torch.cat([seqs, cand[:, j : j + 1]], 1)) for j in range(k)], 1)


def token_rm_scorer(rm):
    """A full-sequence scorer from a token-level RM (what ARGS calls k times per token)."""
    from .rm import score_sequences

    return lambda seqs: score_sequences(rm, seqs)
