"""DreamerV3 building blocks (Hafner et al. 2023) used by PIGDreamer: symlog, two-hot, the RSSM.

The RSSM has a GRU deterministic state h and categorical latents z (``stoch`` × ``classes``) mixed with 1%
uniform, sampled with straight-through gradients. ``observe`` runs the posterior over a replayed sequence
(the state resets where ``is_first``); ``img_step`` steps the prior with an action (imagination).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


def symlog(x: torch.Tensor) -> torch.Tensor:
    return torch.sign(x) * torch.log1p(x.abs())


def symexp(x: torch.Tensor) -> torch.Tensor:
    return torch.sign(x) * torch.expm1(x.abs())


class TwoHot(nn.Module):
    """Two-hot encoding of symlog(y) over ``bins`` points spaced evenly in [−20, 20] (DreamerV3's 255)."""

    def __init__(self, bins: int = 255, low: float = -20.0, high: float = 20.0):
        super().__init__()
        self.register_buffer("points", torch.linspace(low, high, bins))

    def encode(self, y: torch.Tensor) -> torch.Tensor:
        p = self.points
        x = symlog(y).clamp(p[0], p[-1])
        hi = torch.searchsorted(p, x.contiguous(), right=True).clamp(1, p.numel() - 1)
        lo = hi - 1
        w_hi = ((x - p[lo]) / (p[hi] - p[lo])).clamp(0.0, 1.0)
        out = torch.zeros(*x.shape, p.numel(), device=x.device)
        out.scatter_(-1, lo.unsqueeze(-1), (1 - w_hi).unsqueeze(-1))
        out.scatter_add_(-1, hi.unsqueeze(-1), w_hi.unsqueeze(-1))
        return out

    def decode(self, logits: torch.Tensor) -> torch.Tensor:
        return symexp((logits.softmax(-1) * self.points).sum(-1))

    def loss(self, logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return -(self.encode(y) * logits.log_softmax(-1)).sum(-1)


def mlp(inp: int, out: int, hidden: int = 128, layers: int = 2, zero_out: bool = False) -> nn.Sequential:
    """Linear–LayerNorm–SiLU layers and a linear output (zero-initialised for reward/cost/critic heads)."""
    mods: list[nn.Module] = []
    for _ in range(layers):
        mods += [nn.Linear(inp, hidden), nn.LayerNorm(hidden), nn.SiLU()]
        inp = hidden
    last = nn.Linear(inp, out)
    if zero_out:
        nn.init.zeros_(last.weight)
        nn.init.zeros_(last.bias)
    return nn.Sequential(*mods, last)


class Encoder(nn.Module):
    """Symlog vector inputs through an MLP, or a small CNN for image observations (C × H × W)."""

    def __init__(self, shape: tuple[int, ...], out: int = 128):
        super().__init__()
        self.image = len(shape) == 3
        if self.image:
            c, h, w = shape
            self.net = nn.Sequential(nn.Conv2d(c, 32, 3, padding=1), nn.SiLU(), nn.Conv2d(32, 32, 3, padding=1),
                                     nn.SiLU(), nn.Flatten(), nn.Linear(32 * h * w, out), nn.LayerNorm(out), nn.SiLU())
        else:
            self.net = mlp(shape[0], out, out, layers=1)
        self.out = out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lead = x.shape[:-3] if self.image else x.shape[:-1]
        flat = x.reshape(-1, *x.shape[len(lead):])
        y = self.net(flat if self.image else symlog(flat))
        return y.reshape(*lead, self.out)


def kl_categorical(logp: torch.Tensor, logq: torch.Tensor) -> torch.Tensor:
    """KL[p ‖ q] summed over latents and classes (inputs: log-probabilities, … × stoch × classes)."""
    return (logp.exp() * (logp - logq)).sum((-2, -1))


class RSSM(nn.Module):
    def __init__(self, embed: int, action_dim: int, deter: int = 128, stoch: int = 8, classes: int = 8,
                 hidden: int = 128, unimix: float = 0.01):
        super().__init__()
        self.deter, self.stoch, self.classes, self.unimix = deter, stoch, classes, unimix
        self.img_in = nn.Sequential(nn.Linear(stoch * classes + action_dim, hidden), nn.LayerNorm(hidden), nn.SiLU())
        self.gru = nn.GRUCell(hidden, deter)
        self.prior_net = mlp(deter, stoch * classes, hidden, layers=1)
        self.post_net = mlp(deter + embed, stoch * classes, hidden, layers=1)

    @property
    def feat_dim(self) -> int:
        return self.deter + self.stoch * self.classes

    def logprobs(self, logits: torch.Tensor) -> torch.Tensor:
        probs = logits.reshape(*logits.shape[:-1], self.stoch, self.classes).softmax(-1)
        return torch.log(probs * (1 - self.unimix) + self.unimix / self.classes)

    def sample(self, logp: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
        """One-hot draws (inverse CDF, from ``gen``) with straight-through gradients; flattened latents."""
        probs = logp.exp()
        u = torch.rand(probs.shape[:-1] + (1,), generator=gen, device=probs.device)
        idx = (probs.cumsum(-1) < u).sum(-1, keepdim=True).clamp(max=self.classes - 1)
        onehot = torch.zeros_like(probs).scatter_(-1, idx, 1.0)
        return (onehot + probs - probs.detach()).flatten(-2)

    def initial(self, n: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.zeros(n, self.deter, device=device), torch.zeros(n, self.stoch * self.classes, device=device)

    def recur(self, h: torch.Tensor, z: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        return self.gru(self.img_in(torch.cat([z, action], -1)), h)

    def img_step(self, h: torch.Tensor, z: torch.Tensor, action: torch.Tensor, gen: torch.Generator):
        h = self.recur(h, z, action)
        prior = self.logprobs(self.prior_net(h))
        return h, self.sample(prior, gen), prior

    def obs_step(self, h: torch.Tensor, z: torch.Tensor, action: torch.Tensor, embed: torch.Tensor,
                 is_first: torch.Tensor, gen: torch.Generator):
        keep = (~is_first).float().unsqueeze(-1)
        h = self.recur(h * keep, z * keep, action * keep)
        post = self.logprobs(self.post_net(torch.cat([h, embed], -1)))
        return h, self.sample(post, gen), post

    def observe(self, embeds: torch.Tensor, actions: torch.Tensor, is_first: torch.Tensor, gen: torch.Generator):
        """Posterior over (B, L) sequences; ``actions[:, t]`` is the action that led to step t. Returns
        h, z (B, L, ·), posterior and prior log-probabilities (B, L, stoch, classes)."""
        b, steps = embeds.shape[:2]
        h, z = self.initial(b, embeds.device)
        hs, zs, posts = [], [], []
        for t in range(steps):
            h, z, post = self.obs_step(h, z, actions[:, t], embeds[:, t], is_first[:, t], gen)
            hs.append(h)
            zs.append(z)
            posts.append(post)
        hs = torch.stack(hs, 1)
        prior = self.logprobs(self.prior_net(hs))
        return hs, torch.stack(zs, 1), torch.stack(posts, 1), prior


def free_bits_kl(post: torch.Tensor, prior: torch.Tensor, dyn: float = 0.5, rep: float = 0.1,
                 free: float = 1.0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """L_rep(q, p) = dyn·max(free, KL[sg(q) ‖ p]) + rep·max(free, KL[q ‖ sg(p)]) with DreamerV3's 0.5/0.1/1.
    Returns the loss, and the raw (unclipped) KL terms for logging."""
    kl_dyn = kl_categorical(post.detach(), prior)
    kl_rep = kl_categorical(post, prior.detach())
    loss = dyn * kl_dyn.clamp(min=free).mean() + rep * kl_rep.clamp(min=free).mean()
    return loss, kl_dyn.mean().detach(), kl_rep.mean().detach()


def bernoulli_loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.binary_cross_entropy_with_logits(logits, target, reduction="none")
