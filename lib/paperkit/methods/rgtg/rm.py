"""Token-level reward model: scoring and the FaRMA training losses (BT on pairs + max constraint on prefixes)."""

from __future__ import annotations

import torch
from torch import nn


class MarkovLM(nn.Module):
    """The toy base LM as a causal model: logits at position t are log pi_ref(. | token t)."""

    def __init__(self, log_trans):
        super().__init__()
        self.register_buffer("log_trans", torch.as_tensor(log_trans, dtype=torch.float32))

    def forward(self, ids, pad_left=None, cache=None):
        return self.log_trans[ids], cache


def score_sequences(rm: nn.Module, seqs: torch.Tensor) -> torch.Tensor:
    """r(y_1..n): the head output at the position before the last token, indexed by the last token."""
    logits, _ = rm(seqs[:, :-1])
    return logits[:, -1].gather(1, seqs[:, -1:]).squeeze(1)


def score_prefixes(rm: nn.Module, seqs: torch.Tensor):
    """For every prefix length i >= 2: r(y_1..i) and max_a r(y_1..i + a), in one forward."""
    logits, _ = rm(seqs)
    own = logits[:, :-1].gather(2, seqs[:, 1:, None]).squeeze(2)  # r(y_1..i+1) for i = 1..n-1
    best_next = logits[:, 1:].max(2).values  # max_a r(y_1..i+1, a)
    return own, best_next


def bt_loss(rm, chosen, rejected):
    return -torch.nn.functional.logsigmoid(score_sequences(rm, chosen) - score_sequences(rm, rejected)).mean()


def constraint_loss(rm, prefixes, min_len: int):
    own, best_next = score_prefixes(rm, prefixes)
    return ((own - best_next)[:, min_len - 2 :] ** 2).mean()


def constraint_gap(rm, prefixes, min_len: int) -> float:
    with torch.no_grad():
        own, best_next = score_prefixes(rm, prefixes)
        return float((own - best_next)[:, min_len - 2 :].abs().mean())


def pair_accuracy(rm, chosen, rejected) -> float:
    with torch.no_grad():
        return float((score_sequences(rm, chosen) > score_sequences(rm, rejected)).float().mean())


def train_rm(rm, chosen, rejected, prefixes, *, loss: str, iters: int, lr: float, batch: int,
             min_prefix: int, seed: int, history=None):
    """``loss='farma'`` alternates an epoch of BT with an epoch of the max constraint (official scripts);
    ``'bt-full'`` does only the BT epochs."""
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(rm.parameters(), lr=lr)
    phases = [("bt", (chosen, rejected))]
    if loss == "farma":
        phases.append(("max", (prefixes,)))
    for it in range(iters):
        for name, tensors in phases:
            order = torch.randperm(len(tensors[0]), generator=gen)
            for start in range(0, len(order), batch):
                idx = order[start : start + batch]
                parts = [t[idx] for t in tensors]
                value = bt_loss(rm, *parts) if name == "bt" else constraint_loss(rm, parts[0], min_prefix)
                opt.zero_grad()
                value.backward()
                opt.step()
                if history is not None:
                    history.append((it, name, float(value)))
    return rm
