"""Value mixers: QMIX (monotone hypernetwork mixer on the global state, embed 32, 2-layer hypernets of 64) and VDN (sum)."""

from __future__ import annotations

import torch
from torch import nn


class QMixer(nn.Module):
    """Q_tot = w2ᵀ ELU(W1ᵀ q + b1) + b2 with |W1|, |w2| from hypernetworks on the state: ∂Q_tot/∂Q_i ≥ 0."""

    def __init__(self, n_agents: int, state_dim: int, embed: int = 32, hyper_hidden: int = 64):
        super().__init__()
        self.n_agents, self.embed = n_agents, embed
        self.hyper_w1 = nn.Sequential(nn.Linear(state_dim, hyper_hidden), nn.ReLU(), nn.Linear(hyper_hidden, n_agents * embed))
        self.hyper_w2 = nn.Sequential(nn.Linear(state_dim, hyper_hidden), nn.ReLU(), nn.Linear(hyper_hidden, embed))
        self.hyper_b1 = nn.Linear(state_dim, embed)
        self.hyper_b2 = nn.Sequential(nn.Linear(state_dim, embed), nn.ReLU(), nn.Linear(embed, 1))

    def forward(self, q: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        """q (..., n_agents), state (..., state_dim) → Q_tot (...)."""
        lead = q.shape[:-1]
        q, state = q.reshape(-1, 1, self.n_agents), state.reshape(-1, state.shape[-1])
        w1 = self.hyper_w1(state).abs().view(-1, self.n_agents, self.embed)
        hidden = nn.functional.elu(q @ w1 + self.hyper_b1(state)[:, None])
        w2 = self.hyper_w2(state).abs().view(-1, self.embed, 1)
        return (hidden @ w2).view(-1).add(self.hyper_b2(state).view(-1)).view(lead)


class VDNMixer(nn.Module):
    """Q_tot = Σ_i Q_i."""

    def forward(self, q: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        return q.sum(-1)
