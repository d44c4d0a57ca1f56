"""Hypergraph attention convolution (HYGMA step 3), 2 layers (in → 64 → 48), 4 heads.

``mode="paper"`` is the paper's D_v^{-1/2} H_a W D_e^{-1} H_aᵀ D_v^{-1/2} X Θ with an attention-weighted
incidence H_a = ½(H̄ᵀ + A): H̄ᵀ the membership rows normalised to sum 1, A the softmax of agent queries
against every hyperedge's key. (A softmax restricted to an agent's own hyperedges is constant 1 when the
groups partition the agents, as spectral clustering's do, and would leave the attention untrained.)
``mode="code"`` is the official code's layer (ReLU(XΘ), group sums, multi-head attention, ReLU(Linear)).
Attention weights keep their gradient (the official code detached them), so L_attention trains them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn


@dataclass(frozen=True)
class Incidence:
    """Terms of an incidence H (E, n) that every layer and step reuse: member means, normalised membership, D_v."""

    edge_mean: torch.Tensor       # (E, n): H with rows divided by the hyperedge sizes
    member: torch.Tensor          # (n, E): Hᵀ with rows divided by each agent's number of hyperedges
    dv: torch.Tensor | None       # (n, 1) D_v^{-1/2} of H_a; None when it is the identity

    @classmethod
    def of(cls, h: torch.Tensor) -> Incidence:
        member = h.T / h.T.sum(-1, keepdim=True).clamp(min=1)
        covered = member.sum(-1, keepdim=True)   # 1 for an agent in some hyperedge, else 0
        # H_a = ½(member + A) and A's rows (a softmax) sum to 1, so row i of H_a sums to ½(covered_i + 1).
        dv = None if bool((covered == 1).all()) else (0.5 * (covered + 1)).rsqrt()
        return cls(h / h.sum(dim=1, keepdim=True).clamp(min=1), member, dv)


class HypergraphAttention(nn.Module):
    """One layer; ``forward(x (B, n, d), h)`` returns features (B, n, out) and attention (B, heads, n, E).

    ``h`` is the incidence (E, n) or its precomputed :class:`Incidence`."""

    def __init__(self, in_dim: int, out_dim: int, heads: int = 4, mode: str = "paper"):
        super().__init__()
        if out_dim % heads:
            raise ValueError(f"out_dim {out_dim} must be divisible by heads {heads}")
        self.heads, self.mode, self.scale = heads, mode, 1.0 / math.sqrt(out_dim // heads)
        self.theta = nn.Linear(in_dim, out_dim)
        self.query = nn.Linear(out_dim, out_dim)
        self.key = nn.Linear(out_dim, out_dim)
        self.out = nn.Linear(out_dim, out_dim) if mode == "code" else None  # the code's output projection

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        b, m, d = x.shape
        return x.view(b, m, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, x: torch.Tensor, h: torch.Tensor | Incidence) -> tuple[torch.Tensor, torch.Tensor]:
        inc = h if isinstance(h, Incidence) else Incidence.of(h)
        xt = self.theta(x)
        if self.mode == "code":
            xt = torch.relu(xt)
        edges = (xt.transpose(1, 2) @ inc.edge_mean.T).transpose(1, 2)   # (B, E, d) member means: one GEMM
        q, k = self._split(self.query(xt)), self._split(self.key(edges))
        attention = torch.softmax((q @ k.transpose(-1, -2)) * self.scale, dim=-1)   # (B, heads, n, E)
        if self.mode == "code":
            mixed = (attention @ self._split(edges)).transpose(1, 2).reshape(xt.shape)
            return torch.relu(self.out(mixed)), attention
        return torch.relu(self._normalised_conv(xt, (attention + inc.member) * 0.5, inc.dv)), attention

    def _normalised_conv(self, xt: torch.Tensor, ha: torch.Tensor, dv: torch.Tensor | None) -> torch.Tensor:
        """D_v^{-1/2} H_a W D_e^{-1} H_aᵀ D_v^{-1/2} X Θ per head, with W = I and H_a (B, heads, n, E) the attended
        incidence; D_v comes precomputed (H_a's row sums do not depend on the attention)."""
        de = ha.sum(-2, keepdim=True).clamp(min=1e-6).reciprocal()   # (B, heads, 1, E)
        xs = self._split(xt)
        if dv is not None:
            xs = xs * dv
        nodes = (ha * de) @ (ha.transpose(-1, -2) @ xs)
        if dv is not None:
            nodes = nodes * dv
        return nodes.transpose(1, 2).reshape(xt.shape)


class HGCN(nn.Module):
    """Two attention layers, in → 64 → 48, returning features and each layer's attention."""

    def __init__(self, in_dim: int, hidden: int = 64, out_dim: int = 48, heads: int = 4, mode: str = "paper"):
        super().__init__()
        self.layers = nn.ModuleList([HypergraphAttention(in_dim, hidden, heads, mode),
                                     HypergraphAttention(hidden, out_dim, heads, mode)])

    def forward(self, x: torch.Tensor, h: torch.Tensor | Incidence) -> tuple[torch.Tensor, list[torch.Tensor]]:
        inc = h if isinstance(h, Incidence) else Incidence.of(h)
        attentions = []
        for layer in self.layers:
            x, att = layer(x, inc)
            attentions.append(att)
        return x, attentions


def attention_loss(attention: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """KL(attention ‖ uniform over the E hyperedges), averaged over batch, heads and agents."""
    edges = h.shape[0]
    return (attention * (attention.clamp(min=1e-12) * edges).log()).sum(-1).mean()


def consistency_loss(features: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """Within-group variance of HGCN features (the official code used Q-values), averaged over groups."""
    sizes = h.sum(dim=1).clamp(min=1)[None, :, None]
    means = torch.einsum("en,bnd->bed", h, features) / sizes
    spread = features[:, None] - means[:, :, None]  # (B, E, n, d)
    return ((spread ** 2).sum(-1) * h[None]).sum(-1).div(sizes[..., 0]).mean()
