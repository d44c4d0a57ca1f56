"""Token-level reward model (FaRMA, Rashid et al. 2025, sec. 3): scoring, the FaRMA losses (Bradley-Terry on
full pairs + max constraint on prefixes) and the baseline losses (PARGS prefix BT, CD-FUDGE regression, a
scalar full-sequence RM). Sequences are right-padded batches (:class:`Seqs`), so causal attention never sees
the padding and every prefix sits at its own position."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

TOKEN_LOSSES = ("farma", "bt-full", "bt-prefix", "cd-regress")
LOSSES = TOKEN_LOSSES + ("seq",)


@dataclass
class Seqs:
    """Right-padded token ids (N, T) and the true lengths (N,)."""

    ids: torch.Tensor
    lengths: torch.Tensor

    @classmethod
    def from_lists(cls, rows) -> Seqs:
        width = max(len(r) for r in rows)
        ids = torch.zeros(len(rows), width, dtype=torch.long)
        for i, r in enumerate(rows):
            ids[i, : len(r)] = torch.as_tensor(r, dtype=torch.long)
        return cls(ids, torch.tensor([len(r) for r in rows], dtype=torch.long))

    @classmethod
    def full(cls, ids) -> Seqs:
        ids = torch.as_tensor(ids, dtype=torch.long)
        return cls(ids, torch.full((len(ids),), ids.shape[1], dtype=torch.long))

    def __len__(self) -> int:
        return len(self.ids)

    def to(self, device) -> Seqs:
        return Seqs(self.ids.to(device), self.lengths.to(device))

    def __getitem__(self, idx) -> Seqs:
        ids, lengths = self.ids[idx], self.lengths[idx]
        return Seqs(ids[:, : int(lengths.max())], lengths)

    def to_lists(self) -> list[list[int]]:
        return [row[:n].tolist() for row, n in zip(self.ids, self.lengths.tolist(), strict=True)]


class MarkovLM(nn.Module):
    """The toy base LM as a causal model: logits at position t are log pi_ref(. | token t)."""

    def __init__(self, log_trans):
        super().__init__()
        self.register_buffer("log_trans", torch.as_tensor(log_trans, dtype=torch.float32))

    def forward(self, ids, pad_left=None, cache=None):
        return self.log_trans[ids], cache


class ScalarRM(nn.Module):
    """A full-sequence RM (ARGS, best-of-N, scoring): a causal body whose head has one output, read at the
    last token. It has no per-token scores, so FaRMA cannot decode with it."""

    def __init__(self, body: nn.Module):
        super().__init__()
        body.head = nn.Linear(body.head.in_features, 1)
        self.body = body

    def forward(self, ids, pad_left=None, cache=None):
        return self.body(ids, pad_left=pad_left, cache=cache)


def _rows(n, device=None):
    return torch.arange(n, device=device)


def score_sequences(rm: nn.Module, seqs, pad_left=None) -> torch.Tensor:
    """r(y_1..n) of right-padded :class:`Seqs`, a full tensor, or a left-padded tensor (``pad_left``).
    Token-level RM: the head output at the position before the last token, indexed by the last token (one
    forward scores every candidate a). Scalar RM: output 0 at the last token."""
    if isinstance(seqs, Seqs):
        ids, last = seqs.ids, seqs.lengths - 1
    else:
        ids, last = seqs, torch.full((len(seqs),), seqs.shape[1] - 1, dtype=torch.long, device=seqs.device)
    rows = _rows(len(ids), ids.device)
    if isinstance(rm, ScalarRM):
        out, _ = rm(ids[:, : int(last.max()) + 1], pad_left=pad_left)
        return out[rows, last, 0]
    logits, _ = rm(ids[:, : int(last.max())], pad_left=pad_left)
    return logits[rows, last - 1, ids[rows, last]]


def score_prefixes(rm: nn.Module, seqs: Seqs, min_len: int):
    """For every prefix y_1..i (min_len <= i <= n): r(y_1..i) and max_a r(y_1..i, a), from one forward;
    returns (own, best_next, mask) of shape (N, T-1), entry j for i = j + 2."""
    logits, _ = rm(seqs.ids)
    own = logits[:, :-1].gather(2, seqs.ids[:, 1:, None]).squeeze(2)
    best_next = logits[:, 1:].max(2).values
    length = torch.arange(2, seqs.ids.shape[1] + 1, device=seqs.ids.device)[None, :]
    mask = (length <= seqs.lengths[:, None]) & (length >= min_len)
    return own, best_next, mask


def _masked_mean(values, mask):
    return (values * mask).sum() / mask.sum().clamp(min=1)


def bt_loss(rm, chosen, rejected):
    return -nn.functional.logsigmoid(score_sequences(rm, chosen) - score_sequences(rm, rejected)).mean()


def bt_prefix_loss(rm, chosen: Seqs, rejected: Seqs, min_len: int):
    """PARGS: Bradley-Terry on equal-length prefixes of chosen and rejected (the pair's label for each)."""
    own_c, _, mask_c = score_prefixes(rm, chosen, min_len)
    own_r, _, mask_r = score_prefixes(rm, rejected, min_len)
    width = min(own_c.shape[1], own_r.shape[1])
    mask = mask_c[:, :width] & mask_r[:, :width]
    return _masked_mean(-nn.functional.logsigmoid(own_c[:, :width] - own_r[:, :width]), mask)


def constraint_loss(rm, prefixes: Seqs, min_len: int, target: str = "joint"):
    """FaRMA's max constraint: (r(y_1..i) - max_a r(y_1..i, a))^2 on every prefix of a chosen response. ``joint``
    (the official MSE) moves both sides; ``fixed`` holds max_a r(y_1..i, a) as a target (a stop-gradient, as in
    fitted Q-iteration), so only r(y_1..i) moves."""
    own, best_next, mask = score_prefixes(rm, prefixes, min_len)
    if target == "fixed":
        best_next = best_next.detach()
    return _masked_mean((own - best_next) ** 2, mask)


def cd_loss(rm, rollouts: Seqs, rewards: torch.Tensor, min_len: int):
    """CD-FUDGE: every prefix of a pi_ref rollout regressed on the rollout's reward (so r -> E_pi_ref[R | prefix])."""
    own, _, mask = score_prefixes(rm, rollouts, min_len)
    return _masked_mean((own - rewards[:, None]) ** 2, mask)


def constraint_gap(rm, prefixes: Seqs, min_len: int) -> float:
    """Mean |r(prefix) - max_a r(prefix, a)| over held-out prefixes (acceptance: FaRMA <= BT-only / 5)."""
    with torch.no_grad():
        own, best_next, mask = score_prefixes(rm, prefixes, min_len)
        return float(_masked_mean((own - best_next).abs(), mask))


def pair_accuracy(rm, chosen, rejected) -> float:
    with torch.no_grad():
        return float((score_sequences(rm, chosen) > score_sequences(rm, rejected)).float().mean())


def _epoch(n, batch, gen):
    order = torch.randperm(n, generator=gen)  # on CPU: same batches on every device
    return [order[s : s + batch] for s in range(0, n, batch)]


def train_rm(rm, *, loss: str, iters: int, lr: float, batch: int, min_prefix: int, seed: int,
             chosen: Seqs | None = None, rejected: Seqs | None = None, prefixes: Seqs | None = None,
             rollouts: Seqs | None = None, rewards: torch.Tensor | None = None, constraint_weight: float = 1.0,
             constraint_target: str = "joint", history=None, on_iter=None, on_phase=None):
    """Each of ``iters`` iterations is one epoch per phase. ``farma`` alternates an epoch of BT on full pairs
    with an epoch of the max constraint on ``prefixes`` and returns the RM after the last BT epoch (the official
    scripts run each phase as its own trainer: a fresh AdamW whose learning rate decays linearly to 0, and decode
    with an RM saved after a BT phase); ``bt-full`` and ``seq`` run only the BT epochs; ``bt-prefix`` the PARGS
    epochs; ``cd-regress`` regression epochs on ``rollouts``/``rewards`` (one AdamW at a constant rate).
    ``on_phase(iteration, phase)`` runs after every phase's epoch (e.g. to measure the constraint after the last
    max epoch: the official RM_Max checkpoints)."""
    gen = torch.Generator().manual_seed(seed)
    phases = {"farma": ("bt", "max"), "bt-full": ("bt",), "seq": ("bt",), "bt-prefix": ("prefix",),
              "cd-regress": ("cd",)}[loss]
    alternating = len(phases) > 1
    opt, sched = torch.optim.AdamW(rm.parameters(), lr=lr), None
    for it in range(iters):
        for name in phases[: 1 if it == iters - 1 else None]:
            n = len(prefixes) if name == "max" else len(rollouts) if name == "cd" else len(chosen)
            batches = _epoch(n, batch, gen)
            if alternating:  # each phase is its own trainer run: a fresh AdamW, learning rate decaying linearly to 0
                opt = torch.optim.AdamW(rm.parameters(), lr=lr)
                sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step, n=len(batches): 1 - step / n)
            for idx in batches:
                if name == "bt":
                    value = bt_loss(rm, chosen[idx], rejected[idx])
                elif name == "prefix":
                    value = bt_prefix_loss(rm, chosen[idx], rejected[idx], min_prefix)
                elif name == "max":
                    value = constraint_weight * constraint_loss(rm, prefixes[idx], min_prefix, constraint_target)
                else:
                    value = cd_loss(rm, rollouts[idx], rewards[idx], min_prefix)
                opt.zero_grad()
                value.backward()
                opt.step()
                if sched is not None:
                    sched.step()
                if history is not None:
                    history.append((it, name, value.item()))
            if on_phase is not None:
                on_phase(it, name)
        if on_iter is not None:
            on_iter(it)
    return rm
