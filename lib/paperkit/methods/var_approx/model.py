"""The one-layer, one-head VAR transformer of Thm 6.6 (Φ_up, single-head softmax attention, token-wise ReLU
FFN), its FlowAR head (Cor. 7.2), and the baselines the toolkit compares it with.

Every model splits into ``features(x)`` (fixed, parameter-free: Φ_up for the transformers, flattening for the
MLP) and ``forward(features)`` (the learned part), so training computes the pyramid once and the seeds of a
sweep cell can be vmapped over ``forward`` alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from paperkit.core.errors import UsageError
from paperkit.methods.var_approx import pyramid as pyr

ABLATIONS = ("none", "no-attn", "no-pyramid", "two-layer", "mlp", "linear")
MASKS = ("none", "block")
READOUTS = ("last", "pyramid")
HEADS = ("regress", "flow")


def _target_scale_buffers(module: nn.Module, channels: int) -> None:
    """``target_mean``/``target_std`` per channel: the model learns (y − mean)/std and reports mean + std·output.

    They are 0 and 1 (the identity, exactly) unless :func:`set_target_scale` sets them from the training targets;
    as buffers they travel with ``model.pt`` and with the vmapped seeds' stacked state.
    """
    module.register_buffer("target_mean", torch.zeros(channels))
    module.register_buffer("target_std", torch.ones(channels))


def set_target_scale(model: nn.Module, y_train: torch.Tensor) -> None:
    """Standardise the targets: per-channel mean and standard deviation of ``y_train`` ``(N, T, C)``."""
    flat = y_train.reshape(-1, y_train.shape[-1]).to(torch.float64)
    std = flat.std(dim=0)
    std = torch.where(std > 0, std, torch.ones_like(std))
    model.target_mean.copy_(flat.mean(dim=0))
    model.target_std.copy_(std)


def standardize(model: nn.Module, y: torch.Tensor) -> torch.Tensor:
    """Targets in the units the model learns."""
    return (y - model.target_mean) / model.target_std


def unstandardize(model: nn.Module, z: torch.Tensor) -> torch.Tensor:
    """The model's output in the targets' own units."""
    return z * model.target_std + model.target_mean


class Block(nn.Module):
    """One single-head softmax self-attention layer (optional) and one token-wise ReLU FFN, both residual."""

    def __init__(self, embed: int, width: int, attention: bool):
        super().__init__()
        self.attention = attention
        if attention:
            self.q, self.k, self.v = (nn.Linear(embed, embed) for _ in range(3))
            self.o = nn.Linear(embed, embed)
        self.ffn = nn.Sequential(nn.Linear(embed, width), nn.ReLU(), nn.Linear(width, embed))

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None, rows: slice) -> torch.Tensor:
        """Tokens ``rows`` of the output (the queries); keys and values are every token."""
        h = x[:, rows]
        if self.attention:
            scores = self.q(h) @ self.k(x).transpose(1, 2) / math.sqrt(x.shape[-1])
            if mask is not None:
                scores = scores.masked_fill(~mask[rows], float("-inf"))
            h = h + self.o(torch.softmax(scores, dim=-1) @ self.v(x))
        return h + self.ffn(h)


class VARApprox(nn.Module):
    """Φ_up → linear embedding d→D + scale and position embeddings → token FFN → blocks → linear readout.

    The token FFN before attention is the proof's first step (an FFN that quantises each token, here
    learned); each block is the single-head attention layer (the contextual mapping) and the FFN that maps
    contexts to values.

    ``ablate``: ``none`` (Thm 6.6's model), ``no-attn`` (token FFN only), ``no-pyramid`` (a flat transformer
    on the last scale only), ``two-layer`` (a 2-layer VAR). ``readout``: the last scale or the whole pyramid.
    """

    def __init__(self, init: tuple[int, int], dim: int, scales: Sequence[int], *, embed: int, width: int,
                 mask: str = "none", ablate: str = "none", readout: str = "last", channels: int = 1):
        super().__init__()
        self.init, self.scales, self.readout = tuple(init), tuple(scales), readout
        self.flat = ablate == "no-pyramid"
        sizes = pyr.map_sizes(scales, init)
        token_sizes = sizes[-1:] if self.flat else sizes
        n_tokens = sum(h * w for h, w in token_sizes)
        last = sizes[-1][0] * sizes[-1][1]
        self.rows = slice(0, n_tokens) if readout == "pyramid" else slice(n_tokens - last, n_tokens)
        self.embed = nn.Linear(dim, embed)
        # FoundationVision/VAR's init for the level and position embeddings: std sqrt(1/(3D)) (0.1 at D = 32);
        # at ViT's 0.02 the tokens are nearly indistinguishable by position and training sat on a plateau.
        std = math.sqrt(1 / (3 * embed))
        self.scale_embed = nn.Parameter(std * torch.randn(len(token_sizes), embed))
        self.pos_embed = nn.Parameter(std * torch.randn(n_tokens, embed))
        scale_of = pyr.scale_index(self.scales, init)[-n_tokens:] if not self.flat else np.zeros(n_tokens, int)
        self.register_buffer("scale_of", torch.from_numpy(scale_of - scale_of.min()), persistent=False)
        use_mask = mask == "block" and not self.flat and ablate != "no-attn"
        self.register_buffer("mask", torch.from_numpy(pyr.block_mask(self.scales, init)) if use_mask else None,
                             persistent=False)
        n_blocks = 2 if ablate == "two-layer" else 1
        self.pre = nn.Sequential(nn.Linear(embed, width), nn.ReLU(), nn.Linear(width, embed))
        self.blocks = nn.ModuleList(Block(embed, width, ablate != "no-attn") for _ in range(n_blocks))
        self.out = nn.Linear(embed, channels)
        _target_scale_buffers(self, channels)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """The fixed part: X_init ``(N, h1, w1, d)`` → pyramid tokens ``(N, L, d)``."""
        if self.flat:
            side = self.scales[-1]
            return pyr.bicubic(x, (side, side)).reshape(x.shape[0], -1, x.shape[-1])
        return pyr.up_pyramid(x, self.scales)

    def hidden(self, tokens: torch.Tensor) -> torch.Tensor:
        """The readout tokens' final hidden states ``(N, T, D)``."""
        h = self.embed(tokens) + self.scale_embed[self.scale_of] + self.pos_embed
        h = h + self.pre(h)
        for i, block in enumerate(self.blocks):
            last = i == len(self.blocks) - 1
            h = block(h, self.mask, self.rows if last else slice(None))
        return h

    def forward(self, tokens: torch.Tensor, standardized: bool = False) -> torch.Tensor:
        """Predictions in the targets' units, or (``standardized``) in the units the model learns."""
        z = self.out(self.hidden(tokens))
        return z if standardized else unstandardize(self, z)


class FlowHead(nn.Module):
    """FlowAR's per-token velocity net v(x_t, t | h): an MLP on [h, x_t, t] (Cor. 7.2)."""

    def __init__(self, embed: int, width: int, channels: int = 1):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(embed + channels + 1, width), nn.ReLU(), nn.Linear(width, width),
                                 nn.ReLU(), nn.Linear(width, channels))

    def forward(self, h: torch.Tensor, xt: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([h, xt, t], dim=-1))


class FlowVAR(nn.Module):
    """A VAR transformer whose readout tokens condition a flow-matching head: x_t = t·x + (1−t)·ε, target x − ε."""

    def __init__(self, backbone: VARApprox, width: int, channels: int = 1):
        super().__init__()
        self.backbone = backbone
        self.head = FlowHead(backbone.embed.out_features, width, channels)
        _target_scale_buffers(self, channels)   # the flow runs in standardised units (the backbone's stay 0, 1)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return self.backbone.features(x)

    def loss(self, tokens: torch.Tensor, y: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """Flow-matching loss with one t per (sample, scale), as FlowAR draws one per scale map."""
        y = standardize(self, y)
        h = self.backbone.hidden(tokens)
        scale = self.backbone.scale_of[self.backbone.rows]
        t_scale = torch.rand(y.shape[0], int(scale.max()) + 1, 1, generator=generator, dtype=y.dtype)
        t = t_scale[:, scale]
        eps = torch.randn(y.shape, generator=generator, dtype=y.dtype)
        xt = t * y + (1 - t) * eps
        return (self.head(h, xt, t) - (y - eps)).square().mean()

    @torch.no_grad()
    def sample(self, tokens: torch.Tensor, steps: int, generator: torch.Generator, channels: int = 1) -> torch.Tensor:
        """Euler integration of the learned velocity from ε (t = 0) to a sample (t = 1), in the targets' units."""
        h = self.backbone.hidden(tokens)
        x = torch.randn(*h.shape[:2], channels, generator=generator, dtype=h.dtype)
        for i in range(steps):
            t = torch.full((*h.shape[:2], 1), i / steps, dtype=h.dtype)
            x = x + self.head(h, x, t) / steps
        return unstandardize(self, x)


class MLPBaseline(nn.Module):
    """A one-hidden-layer ReLU MLP on vec X_init, its width chosen to match a transformer's parameter count."""

    def __init__(self, n_in: int, n_out: int, params: int, channels: int = 1):
        super().__init__()
        self.n_out, self.channels = n_out, channels
        hidden = max(1, round((params - n_out * channels) / (n_in + 1 + n_out * channels)))
        self.net = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, n_out * channels))
        _target_scale_buffers(self, channels)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(x.shape[0], -1)

    def forward(self, flat: torch.Tensor, standardized: bool = False) -> torch.Tensor:
        z = self.net(flat).reshape(flat.shape[0], self.n_out, self.channels)
        return z if standardized else unstandardize(self, z)


def parameter_count(model: nn.Module) -> int:
    return int(sum(p.numel() for p in model.parameters()))


def build_model(init: tuple[int, int], dim: int, scales: Sequence[int], *, embed: int, width: int, mask: str,
                ablate: str, readout: str, head: str, channels: int = 1) -> nn.Module:
    """The model a run fits (parameters drawn from torch's current seed)."""
    if ablate not in ABLATIONS:
        raise UsageError(f"unknown ablation '{ablate}'; expected one of {', '.join(ABLATIONS)}")
    if ablate == "mlp":
        reference = VARApprox(init, dim, scales, embed=embed, width=width, mask=mask, readout=readout,
                              channels=channels)
        n_out = reference.rows.stop - reference.rows.start
        return MLPBaseline(init[0] * init[1] * dim, n_out, parameter_count(reference), channels)
    backbone = VARApprox(init, dim, scales, embed=embed, width=width, mask=mask, ablate=ablate, readout=readout,
                         channels=channels)
    return FlowVAR(backbone, width, channels) if head == "flow" else backbone


def linear_floor(x_train: torch.Tensor, y_train: torch.Tensor, x_test: torch.Tensor) -> torch.Tensor:
    """The least-squares affine map vec X_init → target, fitted in float64: the floor any model should beat."""
    def design(x):
        flat = x.reshape(x.shape[0], -1).to(torch.float64)
        return torch.cat([flat, torch.ones(len(flat), 1, dtype=torch.float64)], dim=1)

    coef = torch.linalg.lstsq(design(x_train), y_train.reshape(len(y_train), -1).to(torch.float64)).solution
    return (design(x_test) @ coef).to(y_train.dtype).reshape(len(x_test), *y_train.shape[1:])
