"""Fitting the base LM pi_ref (rgtg-train-lm): next-token cross-entropy on windows of a text or on toy samples."""

from __future__ import annotations

import math

import torch
from torch import nn

from .rm import Seqs, _epoch


def text_windows(ids: list[int], block: int) -> Seqs:
    """Non-overlapping windows of ``block`` + 1 tokens (inputs and their next tokens); the last may be shorter."""
    rows = [ids[s: s + block + 1] for s in range(0, max(len(ids) - 1, 1), block)]
    return Seqs.from_lists([r for r in rows if len(r) >= 2])


def next_token_loss(lm: nn.Module, seqs: Seqs) -> torch.Tensor:
    """Mean cross-entropy of every next token inside each sequence's length (padding ignored)."""
    logits, _ = lm(seqs.ids[:, :-1])
    target = seqs.ids[:, 1:]
    inside = torch.arange(1, seqs.ids.shape[1], device=target.device)[None, :] < seqs.lengths[:, None]
    return nn.functional.cross_entropy(logits[inside], target[inside])


@torch.no_grad()
def mean_loss(lm: nn.Module, seqs: Seqs, batch: int) -> float:
    """Token-weighted mean cross-entropy (nats per token) over all of ``seqs``."""
    total, count = 0.0, 0
    for s in range(0, len(seqs), batch):
        part = seqs[torch.arange(s, min(s + batch, len(seqs)))]
        n = int((part.lengths - 1).sum())
        total += float(next_token_loss(lm, part)) * n
        count += n
    return total / max(count, 1)


def train_lm(lm: nn.Module, train: Seqs, *, epochs: int, lr: float, batch: int, seed: int, val: Seqs | None = None,
             history=None, on_epoch=None) -> nn.Module:
    """AdamW with a cosine decay over all steps; ``history`` gets (epoch, split, loss) rows (train per step,
    val per epoch)."""
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(lm.parameters(), lr=lr, weight_decay=0.01)
    steps = epochs * math.ceil(len(train) / batch)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: 0.5 * (1 + math.cos(math.pi * i / steps)))
    for ep in range(epochs):
        lm.train()
        for idx in _epoch(len(train), batch, gen):
            loss = next_token_loss(lm, train[idx.to(train.ids.device)])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            if history is not None:
                history.append((ep, "train", loss.item()))
        lm.eval()
        if val is not None and history is not None:
            history.append((ep, "val", mean_loss(lm, val, batch)))
        if on_epoch is not None:
            on_epoch(ep)
    return lm.eval()
