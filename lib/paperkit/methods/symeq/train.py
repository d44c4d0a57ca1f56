# ruff: noqa: E741  (k and l are the paper's input and output tensor orders)
"""Training and evaluation: Adam on MSE over the unique (packed) output entries, minibatches drawn with a
seeded generator, optional random S_n augmentation (one permutation per sample)."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from paperkit.methods.symeq.layers import EquivariantNet, PackedMLP
from paperkit.methods.symeq.symtensor import pack

MODELS = ("equivariant", "mlp", "mlp-wide", "mlp-aug", "maron")
WIDE_FACTOR = 4


def build_model(name: str, k: int, l: int, n: int, *, hidden: int, layers: int, mlp_width: int,
                basis: str = "diagram", activation: str = "relu") -> nn.Module:
    if name == "equivariant":
        return EquivariantNet(k, l, hidden, layers, basis, activation)
    if name == "maron":
        return EquivariantNet(k, l, hidden, layers, "maron", activation)
    if name in ("mlp", "mlp-aug"):
        return PackedMLP(k, l, n, mlp_width, layers, activation)
    if name == "mlp-wide":
        return PackedMLP(k, l, n, WIDE_FACTOR * mlp_width, layers, activation)
    raise ValueError(f"unknown model {name!r}; expected one of {', '.join(MODELS)}")


def transfers(name: str) -> bool:
    """Whether a model's weights run at another n."""
    return name in ("equivariant", "maron")


def permute_batch(x: torch.Tensor, order: int, inv: torch.Tensor) -> torch.Tensor:
    """Apply a different permutation to each sample: (σ_b·T)[σ_b(i)…] = T[i…]; inv [B, n] = σ_b^{-1}."""
    if order == 0:
        return x
    B = x.shape[0]
    index = [torch.arange(B, device=x.device).view(-1, *[1] * order)]
    for t in range(order):
        shape = [B] + [1] * order
        shape[t + 1] = -1
        index.append(inv.view(*shape))
    return x[tuple(index)]


def packed_mse(pred: torch.Tensor, y: torch.Tensor, l: int) -> torch.Tensor:
    return ((pack(pred, l) - pack(y, l)) ** 2).mean()


def fit(model: nn.Module, X: torch.Tensor, y: torch.Tensor, l: int, *, steps: int, batch_size: int, lr: float,
        seed: int, augment: bool = False) -> list[float]:
    """Adam with cosine decay for ``steps`` minibatch steps; returns the loss every step."""
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(steps, 1))
    N, n, k = X.shape[0], X.shape[-1], X.ndim - 1
    losses = []
    for _ in range(steps):
        idx = torch.randperm(N, generator=gen)[:batch_size] if N > batch_size else torch.arange(N)
        xb, yb = X[idx], y[idx]
        if augment:
            inv = torch.argsort(torch.rand(len(idx), n, generator=gen), dim=1).to(X.device)
            xb, yb = permute_batch(xb, k, inv), permute_batch(yb, l, inv)
        opt.zero_grad()
        loss = packed_mse(model(xb), yb, l)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    return losses


@torch.no_grad()
def evaluate(model: nn.Module, X: torch.Tensor, y: torch.Tensor, l: int, batch_size: int = 512) -> float:
    """Test MSE over the packed output entries."""
    total, count = 0.0, 0
    for s in range(0, X.shape[0], batch_size):
        err = (pack(model(X[s:s + batch_size]), l) - pack(y[s:s + batch_size], l)) ** 2
        total += float(err.sum())
        count += err.numel()
    return total / max(count, 1)


def seed_model(seed: int) -> None:
    torch.manual_seed(seed)
    np.random.seed(seed % 2 ** 32)
