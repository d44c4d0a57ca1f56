"""Reward-guided decoding with exact call counters (FaRMA sec. 3.2 and the baselines).

``ref``: top-k sampling from pi_ref; ``farma``/``cd``: s(a) = LM logit(a) + w r(a | prefix) from one token-level
RM forward per token, top-k by s, sample from the softmax over the k (or argmax); ``args``/``pargs``: the k top
LM tokens each scored by a full-sequence RM (k RM calls per token); ``best-of-n``: N pi_ref samples per prompt,
the best by the RM (N RM calls per prompt). Prompts are batched with left padding; both models keep KV caches.
Calls are counted per row: one forward over B rows is B calls.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from paperkit.core.errors import InputError

from .rm import ScalarRM, score_sequences

METHODS = ("ref", "farma", "cd", "args", "pargs", "best-of-n")
ONE_CALL = ("farma", "cd")
K_CALLS = ("args", "pargs")


@dataclass
class Counters:
    lm_calls: int = 0
    rm_calls: int = 0
    tokens: int = 0
    seconds: float = 0.0


def check_scores(scores, what: str) -> None:
    """Refuse scores that pick no token: NaN or +inf anywhere (softmax turns them to NaN, argmax to an arbitrary
    token), or a row that is -inf throughout. -inf for some tokens is fine (a Markov LM's impossible successors)."""
    bad = torch.isnan(scores).any() | torch.isposinf(scores).any() | torch.isneginf(scores.amax(-1)).any()
    if bad:  # one device sync per step
        raise InputError(f"{what} are not finite (NaN or inf); the model file gives non-finite outputs, or w is "
                         "too large for the scale of its scores")


def _select(scores, k, greedy, gen, what="the LM's next-token logits"):
    check_scores(scores, what)
    top, idx = scores.topk(k, dim=-1)
    if greedy:
        return idx[:, 0]
    probs = torch.softmax(top, -1)
    choice = torch.multinomial(probs, 1, generator=gen).squeeze(1)
    return idx.gather(1, choice[:, None]).squeeze(1)


def left_pad(prompts: list[list[int]], pad_id: int = 0):
    """(B, P) ids with rows right-aligned, and the count of padding tokens per row."""
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    for i, p in enumerate(prompts):
        ids[i, width - len(p):] = torch.as_tensor(p, dtype=torch.long)
    return ids, torch.tensor([width - len(p) for p in prompts], dtype=torch.long)


@torch.no_grad()
def generate(lm, prompts, max_new: int, *, method: str = "farma", rm=None, k: int = 10, w: float = 1.0,
             greedy: bool = False, seed: int = 0, use_cache: bool = True, score_impl: str = "loop", pad_left=None,
             eos_id: int | None = None):
    """``prompts``: (B, P) token ids (left-padded as given by ``pad_left``). Returns the (B, max_new) new tokens
    (rows that emitted ``eos_id`` continue with it, uncounted) and per-row Counters summed over rows.

    ``args``/``pargs`` score each of the top-k LM candidates as a full sequence with ``rm`` (a token-level RM or a
    :class:`ScalarRM`): ``loop`` = one RM forward over the whole sequence per candidate (the official loop),
    ``batched`` = the RM's cached prefix advanced by the new token, then the k candidates in one forward over it.
    ``use_cache=False`` recomputes both models over the whole sequence every token (the official RM_test loop).
    """
    if method == "best-of-n":
        raise ValueError("best-of-n: use best_of_n()")
    gen = torch.Generator(device=prompts.device).manual_seed(seed)
    counters = Counters()
    t0 = time.perf_counter()
    seqs = prompts.clone()
    lm_cache = rm_cache = None
    lm_in = rm_in = seqs
    bsz = len(seqs)
    active = torch.ones(bsz, dtype=torch.bool, device=prompts.device)
    for _ in range(max_new):
        n_active = int(active.sum())
        if n_active == 0:
            break
        lm_logits, lm_cache = lm(lm_in, pad_left=pad_left, cache=lm_cache) if use_cache else lm(seqs, pad_left=pad_left)
        counters.lm_calls += n_active
        logits = lm_logits[:, -1]
        if method == "ref":
            nxt = _select(logits, k, greedy, gen)
        elif method in ONE_CALL:
            r_logits, rm_cache = rm(rm_in, pad_left=pad_left, cache=rm_cache) if use_cache else rm(seqs, pad_left=pad_left)
            counters.rm_calls += n_active
            nxt = _select(logits + w * r_logits[:, -1], k, greedy, gen,
                          f"the guided next-token scores (LM logit + w x RM score, w = {w:g})")
        elif method in K_CALLS:
            cand = logits.topk(k, -1).indices  # (B, k)
            if score_impl == "batched":
                scores, rm_cache = _score_over_prefix(rm, rm_in if use_cache else seqs, cand, pad_left,
                                                      rm_cache if use_cache else None)
            else:
                scores = torch.stack([score_sequences(rm, torch.cat([seqs, cand[:, j: j + 1]], 1), pad_left)
                                      for j in range(k)], 1)
            counters.rm_calls += n_active * k
            combined = torch.log_softmax(logits, -1).gather(1, cand) + w * scores
            check_scores(combined, f"the guided candidate scores (log pi_ref + w x RM score, w = {w:g})")
            pick = combined.argmax(1) if greedy else torch.multinomial(torch.softmax(combined, -1), 1, generator=gen)[:, 0]
            nxt = cand.gather(1, pick.reshape(-1, 1)).squeeze(1)
        else:
            raise ValueError(f"unknown method {method!r}")
        counters.tokens += n_active
        if eos_id is not None:
            nxt = torch.where(active, nxt, torch.full_like(nxt, eos_id))
            active &= nxt != eos_id
        seqs = torch.cat([seqs, nxt[:, None]], 1)
        lm_in = rm_in = nxt[:, None]
    counters.seconds = time.perf_counter() - t0
    out = seqs[:, prompts.shape[1]:]
    if out.shape[1] < max_new:
        out = torch.cat([out, out.new_full((bsz, max_new - out.shape[1]), eos_id or 0)], 1)
    return out, counters


def expand_cache(cache, n: int):
    """Each row of our KV cache (per-layer (k, v)) repeated ``n`` times; the original is kept."""
    return [(k.repeat_interleave(n, 0), v.repeat_interleave(n, 0)) for k, v in cache]


def _score_over_prefix(rm, new_ids, cand, pad_left, cache):
    """(B, k) full-sequence scores of the prefix extended by each candidate, over the RM's KV cache of the prefix
    (advanced by ``new_ids``). A token-level RM reads them at the prefix's last position; a scalar RM runs the
    B*k candidate tokens in one forward over the prefix cache repeated k times."""
    out, cache = rm(new_ids, pad_left=pad_left, cache=cache)
    if not isinstance(rm, ScalarRM):
        return out[:, -1].gather(1, cand), cache
    bsz, k = cand.shape
    pads = None if pad_left is None else pad_left.repeat_interleave(k)
    ext, _ = rm(cand.reshape(-1, 1), pad_left=pads, cache=expand_cache(cache, k))
    return ext[:, -1, 0].reshape(bsz, k), cache


@torch.no_grad()
def best_of_n(lm, prompts, max_new: int, *, rm, n: int, k: int = 10, seed: int = 0, pad_left=None,
              eos_id: int | None = None):
    """N pi_ref (top-k) samples per prompt, keep the one the RM scores highest: N RM calls per prompt."""
    t0 = time.perf_counter()
    rep = prompts.repeat_interleave(n, 0)
    pads = None if pad_left is None else pad_left.repeat_interleave(n)
    out, c = generate(lm, rep, max_new, method="ref", k=k, seed=seed, pad_left=pads, eos_id=eos_id)
    scores = score_sequences(rm, torch.cat([rep, out], 1), pad_left=pads).reshape(len(prompts), n)
    check_scores(scores, "best-of-n: the RM's sequence scores")
    c.rm_calls += len(rep)
    best = scores.argmax(1)
    c.seconds = time.perf_counter() - t0
    return out.reshape(len(prompts), n, -1)[torch.arange(len(prompts), device=out.device), best], c
