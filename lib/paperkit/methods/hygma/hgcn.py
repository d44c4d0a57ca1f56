"""Hypergraph attention convolution (HYGMA step 3), 2 layers (in → 64 → 48), 4 heads.

``mode="paper"`` is the paper's D_v^{-1/2} H_a W D_e^{-1} H_aᵀ D_v^{-1/2} X Θ with an attention-weighted
incidence H_a = ½(H̄ᵀ + A): H̄ᵀ the membership rows normalised to sum 1, A the softmax of agent queries
against every hyperedge's key. (A softmax restricted to an agent's own hyperedges is constant 1 when the
groups partition the agents, as spectral clustering's do, and would leave the attention untrained.)
``mode="code"`` is the official code's layer (ReLU(XΘ), group sums, multi-head attention, ReLU(Linear)).
Attention weights keep their gradient (the official code detached them), so L_attention trains them.
On CPU the paper mode works features first (activations (d, n·B), linears as GEMMs on them) with its
attention step in numba kernels (:mod:`paperkit.methods.hygma.kernels`); the agents-first torch code here is
the same arithmetic for other devices and the code mode, and the tests' reference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.autograd.function import once_differentiable
from torch.nn import functional as F

from paperkit.methods.hygma.kernels import fused_attend, infer_hgcn

# Paper-mode layers on CPU run the attention step as one numba pass each way (kernels.py); the torch
# formulation below serves other devices and is what the tests compare the kernels against.
FUSE_ON_CPU = True
# Without autograd and at most this many agent rows (a rollout step: B envs × n agents), the whole paper-mode
# HGCN is one numba call per layer: there ~25 torch calls of a few µs each cost more than the arithmetic. Larger
# batches (target networks in an update) keep torch's GEMMs.
INFER_ROWS = 512


def _fused(layer: HypergraphAttention, x: torch.Tensor) -> bool:
    """Whether this call takes the numba kernels (paper mode, CPU)."""
    return FUSE_ON_CPU and layer.mode == "paper" and x.device.type == "cpu"


@dataclass(frozen=True)
class Incidence:
    """Terms of an incidence H (E, n) that every layer and step reuse (computed once per grouping): member
    means, normalised membership and D_v, shaped for the agents-first layout of :class:`HypergraphAttention`."""

    edge_mean: torch.Tensor       # (E, n): H with rows divided by the hyperedge sizes
    half_member: torch.Tensor     # (n, E, 1, 1): ½Hᵀ with rows divided by each agent's number of hyperedges
    dv: torch.Tensor | None       # (n, 1, 1, 1) D_v^{-1/2} of H_a; None when it is the identity
    half_agents: torch.Tensor     # (n, E) ½Hᵀ normalised, contiguous    } the fused kernel's forms
    dv_agents: torch.Tensor       # (n,) D_v^{-1/2}, ones where identity  }

    @classmethod
    def of(cls, h: torch.Tensor) -> Incidence:
        member = h.T / h.T.sum(-1, keepdim=True).clamp(min=1)
        covered = member.sum(-1, keepdim=True)   # 1 for an agent in some hyperedge, else 0
        # H_a = ½(member + A) and A's rows (a softmax) sum to 1, so row i of H_a sums to ½(covered_i + 1).
        dv_agents = (0.5 * (covered + 1)).rsqrt().view(-1)
        dv = None if bool((covered == 1).all()) else dv_agents[:, None, None, None]
        half = (0.5 * member).contiguous()
        return cls(h / h.sum(dim=1, keepdim=True).clamp(min=1), half[..., None, None], dv, half, dv_agents)


def _dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a (n, B, heads, c), b (E, B, heads, c) → (n, E, B, heads): Σ_c a[i]·b[e] per row and head."""
    return (a[:, None] * b[None]).sum(-1)


def _mix_agents(w: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """w (n, E, B, heads), x (n, B, heads, c) → (E, B, heads, c): Σ_i w[i, e]·x[i] (wᵀX per row and head)."""
    return (w[..., None] * x[:, None]).sum(0)


def _mix_edges(w: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """w (n, E, B, heads), y (E, B, heads, c) → (n, B, heads, c): Σ_e w[i, e]·y[e] (wY per row and head)."""
    return (w[..., None] * y[None]).sum(1)


# The three products close under differentiation (each one's gradients are the other two), so each gets a
# hand-written backward: autograd's generic one for a broadcast product and sum costs ~4× the forward.
class _Dot(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _dot(a, b)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return (_mix_edges(g, b) if ctx.needs_input_grad[0] else None,
                _mix_agents(g, a) if ctx.needs_input_grad[1] else None)


class _MixAgents(torch.autograd.Function):
    @staticmethod
    def forward(ctx, w, x):
        ctx.save_for_backward(w, x)
        return _mix_agents(w, x)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        w, x = ctx.saved_tensors
        return (_dot(x, g) if ctx.needs_input_grad[0] else None,
                _mix_edges(w, g) if ctx.needs_input_grad[1] else None)


class _MixEdges(torch.autograd.Function):
    @staticmethod
    def forward(ctx, w, y):
        ctx.save_for_backward(w, y)
        return _mix_edges(w, y)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        w, y = ctx.saved_tensors
        return (_dot(g, y) if ctx.needs_input_grad[0] else None,
                _mix_agents(w, g) if ctx.needs_input_grad[1] else None)


_WITH_BACKWARD = (_Dot.apply, _MixAgents.apply, _MixEdges.apply)
_PLAIN = (_dot, _mix_agents, _mix_edges)


def _products() -> tuple:
    """(dot, mix over agents, mix over hyperedges): with their backwards while autograd records, plain otherwise
    (rollouts, target networks: no autograd call overhead)."""
    return _WITH_BACKWARD if torch.is_grad_enabled() else _PLAIN


class HypergraphAttention(nn.Module):
    """One layer; ``forward(x (B, n, d), h)`` returns features (B, n, out) and attention (B, heads, n, E).

    ``h`` is the incidence (E, n) or its precomputed :class:`Incidence`. Inside, tensors are agents first,
    (n, B, d), and the attention (n, E, B, heads): every product over the few agents and hyperedges is then a
    broadcast over contiguous (B, d) blocks or one matrix product, never B·heads tiny matrix products. The
    paper mode on CPU works features first instead (:meth:`features_first`)."""

    def __init__(self, in_dim: int, out_dim: int, heads: int = 4, mode: str = "paper"):
        super().__init__()
        if out_dim % heads:
            raise ValueError(f"out_dim {out_dim} must be divisible by heads {heads}")
        self.heads, self.mode, self.scale = heads, mode, 1.0 / math.sqrt(out_dim // heads)
        self.theta = nn.Linear(in_dim, out_dim)
        self.query = nn.Linear(out_dim, out_dim)
        self.key = nn.Linear(out_dim, out_dim)
        self.out = nn.Linear(out_dim, out_dim) if mode == "code" else None  # the code's output projection

    def forward(self, x: torch.Tensor, h: torch.Tensor | Incidence) -> tuple[torch.Tensor, torch.Tensor]:
        inc = h if isinstance(h, Incidence) else Incidence.of(h)
        if _fused(self, x):
            b, n, _ = x.shape
            out, attention = self.features_first(x.transpose(0, 1).reshape(n * b, x.shape[-1]).T, n, b, inc)
            return out.view(out.shape[0], n, b).permute(2, 1, 0), attention.permute(3, 0, 1, 2)
        out, attention = self.agents_first(x.transpose(0, 1), inc)
        return out.transpose(0, 1), attention.permute(2, 3, 0, 1)

    def features_first(self, x: torch.Tensor, n: int, b: int, inc: Incidence) -> tuple[torch.Tensor, torch.Tensor]:
        """The paper mode on CPU: x (d_in, n·B), columns agent-major → features (out, n·B) and attention
        (heads, n, E, B), the attention step in the numba kernels (the linears as GEMMs on the transposed
        activations, so no copies between them)."""
        theta, query, key = self.theta, self.query, self.key
        d, heads = theta.out_features, self.heads
        c, edges_n = d // heads, inc.edge_mean.shape[0]
        xt = torch.addmm(theta.bias[:, None], theta.weight, x)                      # (d, n·B)
        edges = torch.matmul(inc.edge_mean, xt.view(d, n, b))                         # (d, E, B) member means
        q = torch.addmm(query.bias[:, None], query.weight, xt)
        k = torch.addmm(key.bias[:, None], key.weight, edges.reshape(d, edges_n * b))
        nodes, attention = fused_attend(xt.view(heads, c, n, b), q.view(heads, c, n, b),
                                        k.view(heads, c, edges_n, b), inc.half_agents, inc.dv_agents, self.scale)
        return torch.relu(nodes.view(d, n * b)), attention

    def agents_first(self, x: torch.Tensor, inc: Incidence, products: tuple | None = None
                     ) -> tuple[torch.Tensor, torch.Tensor]:
        """x (n, B, d) → features (n, B, out) and attention (n, E, B, heads)."""
        dot, mix_agents, mix_edges = products or _products()
        theta, query, key = self.theta, self.query, self.key
        n, b, _ = x.shape
        heads, d = self.heads, theta.out_features
        c, e = d // heads, inc.edge_mean.shape[0]
        xt = F.linear(x, theta.weight, theta.bias)
        if self.mode == "code":
            xt = torch.relu(xt)
        edges = (inc.edge_mean @ xt.reshape(n, b * d)).view(e, b, d)         # (E, B, d) member means: one GEMM
        q = F.linear(xt, query.weight, query.bias).view(n, b, heads, c)
        k = F.linear(edges, key.weight, key.bias).view(e, b, heads, c)
        attention = torch.softmax(dot(q, k) * self.scale, dim=1)            # (n, E, B, heads) over hyperedges
        if self.mode == "code":
            mixed = mix_edges(attention, edges.view(e, b, heads, c)).view(n, b, d)
            return torch.relu(F.linear(mixed, self.out.weight, self.out.bias)), attention
        # D_v^{-1/2} H_a W D_e^{-1} H_aᵀ D_v^{-1/2} X Θ per head with W = I and the attended incidence
        # H_a = ½(Hᵀ_norm + A), written ½Hᵀ_norm + ½A (the same floats: halving is exact); D_v comes precomputed
        # (H_a's row sums do not depend on the attention).
        ha = torch.add(inc.half_member, attention, alpha=0.5)
        de = ha.sum(0, keepdim=True).clamp(min=1e-6).reciprocal()          # (1, E, B, heads)
        xs = xt.view(n, b, heads, c)
        if inc.dv is not None:
            xs = xs * inc.dv
        nodes = mix_edges(ha * de, mix_agents(ha, xs))                      # H_a D_e^{-1} (H_aᵀ X): (n, B, heads, c)
        if inc.dv is not None:
            nodes = nodes * inc.dv
        return torch.relu(nodes.view(n, b, d)), attention


class HGCN(nn.Module):
    """Two attention layers, in → 64 → 48, returning features (B, n, out) and each layer's attention
    (B, heads, n, E: a view of the agents-first tensor)."""

    def __init__(self, in_dim: int, hidden: int = 64, out_dim: int = 48, heads: int = 4, mode: str = "paper"):
        super().__init__()
        self.layers = nn.ModuleList([HypergraphAttention(in_dim, hidden, heads, mode),
                                     HypergraphAttention(hidden, out_dim, heads, mode)])

    def forward(self, x: torch.Tensor, h: torch.Tensor | Incidence) -> tuple[torch.Tensor, list[torch.Tensor]]:
        inc = h if isinstance(h, Incidence) else Incidence.of(h)
        first = self.layers[0]
        if _fused(first, x):
            if not torch.is_grad_enabled() and x.shape[0] * x.shape[1] <= INFER_ROWS:
                return infer_hgcn(x, self._numpy_parameters(), inc.edge_mean, inc.half_agents, inc.dv_agents,
                                  first.heads, [layer.scale for layer in self.layers])
            b, n, _ = x.shape
            cur, attentions = x.transpose(0, 1).reshape(n * b, x.shape[-1]).T, []
            for layer in self.layers:
                cur, att = layer.features_first(cur, n, b, inc)
                attentions.append(att.permute(3, 0, 1, 2))
            # contiguous rows for the fc and the consistency loss (on the permuted view both ran ~1.5 ms slower)
            return cur.view(cur.shape[0], n, b).permute(2, 1, 0).contiguous(), attentions
        x, products = x.transpose(0, 1), _products()
        attentions = []
        for layer in self.layers:
            x, att = layer.agents_first(x, inc, products)
            attentions.append(att.permute(2, 3, 0, 1))
        return x.transpose(0, 1), attentions

    def _numpy_parameters(self) -> list[tuple]:
        """Each layer's θ, query and key weights and biases as numpy views of the parameters, cached while the
        parameters keep their storage (optimiser steps and ``load_state_dict`` write in place; a copy of the
        module, e.g. a target network, has its own storage and so rebuilds its views)."""
        params = [p for layer in self.layers for lin in (layer.theta, layer.query, layer.key)
                  for p in (lin.weight, lin.bias)]
        key = tuple(p.data_ptr() for p in params)
        cached = self.__dict__.get("_numpy_cache")
        if cached is None or cached[0] != key:
            arrays = [p.detach().numpy() for p in params]
            cached = (key, [tuple(arrays[6 * i:6 * i + 6]) for i in range(len(self.layers))])
            self.__dict__["_numpy_cache"] = cached
        return cached[1]


def attention_loss(attention: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """KL(attention ‖ uniform over the E hyperedges) (E the last axis), averaged over batch, heads and agents.

    Written as one sum over all entries, so a permuted view (the HGCN's) is read in memory order."""
    edges = h.shape[0]
    return (attention * (attention.clamp(min=1e-12) * edges).log()).sum() / (attention.numel() / attention.shape[-1])


def consistency_loss(features: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """Within-group variance of HGCN features (B, n, d) (the official code used Q-values), averaged over batch
    and groups: Σ_i h_ei ‖f_i − mean_e‖² / |e|, with the agents-first view of the HGCN's output."""
    weight = h / h.sum(dim=1, keepdim=True).clamp(min=1)             # (E, n): h_ei / |e|
    f = features.transpose(0, 1)                                       # (n, B, d)
    n, b, d = f.shape
    means = (weight @ f.reshape(n, -1)).view(-1, b, d)                 # (E, B, d): one GEMM
    squared = (f[None] - means[:, None]).pow(2).sum(-1)               # (E, n, B)
    return (squared * weight[:, :, None]).sum() / (b * h.shape[0])
