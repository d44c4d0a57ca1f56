# ruff: noqa: E741  (k and l are the paper's input and output tensor orders)
"""S_n-equivariant layers on symmetric tensors (diagram or orbit basis), networks built from them, and the
Maron-style full-tensor layer (every set partition, no index symmetry) used as a baseline.

All layers take full tensors [B, C, n, ..., n] (k index axes; [B, C] when k = 0) and the weights do not
depend on n: the same module runs at any n."""

from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np
import torch
from torch import nn

from paperkit.methods.symeq import diagram, orbit
from paperkit.methods.symeq.symtensor import pack, packed_size, symmetrize, unpack

BASES = ("diagram", "orbit")
ACTIVATIONS = {"relu": torch.relu, "tanh": torch.tanh, "square": torch.square}


def integer_partitions(l: int) -> list[tuple[int, ...]]:
    """Partitions of l (non-increasing parts): the invariant (bias) patterns of S^l."""
    return sorted({tuple(sorted(lab_b for lab_b, _ in lab)[::-1]) for lab in orbit.vector_partitions(l, 0)},
                  reverse=True)


@lru_cache(maxsize=64)
def _pattern_tensors(l: int, n: int, set_level: bool) -> tuple[np.ndarray, list]:
    """[m, n^l] indicators: by integer partition of the index multiplicities (set_level=False) or by the
    set partition of equal positions (True: Maron's Bell(l) biases)."""
    full = np.indices((n,) * l).reshape(l, -1).T
    if set_level:
        keys = [diagram._kernel(tuple(r)) for r in full]
        pats = [tuple(r) for r in diagram.set_partitions(l)]
    else:
        keys = [tuple(sorted(np.bincount(r).tolist(), reverse=True)) for r in full]
        keys = [tuple(c for c in kk if c) for kk in keys]
        pats = integer_partitions(l)
    return np.stack([[float(kk == p) for kk in keys] for p in pats]).reshape(len(pats), *(n,) * l), pats


class _InvariantBias(nn.Module):
    def __init__(self, l: int, c_out: int, set_level: bool = False):
        super().__init__()
        self.l, self.set_level = l, set_level
        m = len(list(diagram.set_partitions(l))) if set_level else len(integer_partitions(l))
        self.weight = nn.Parameter(torch.zeros(c_out, m))

    def forward(self, n: int, like: torch.Tensor) -> torch.Tensor:
        if self.l == 0:
            return self.weight[:, 0]
        pats, _ = _pattern_tensors(self.l, n, self.set_level)
        pats_t = torch.as_tensor(pats, dtype=like.dtype, device=like.device)
        return torch.einsum("om,m...->o...", self.weight, pats_t)


EXECUTIONS = ("auto", "einsum", "gather")
GATHER_MAX_ELEMENTS = 4_000_000  # packed weight matrix size up to which one gather + matmul beats the maps


@lru_cache(maxsize=64)
def diagram_coefficients(k: int, l: int, n: int) -> np.ndarray:
    """[L, L_n]: op_λ (diagram, all labels) = Σ_μ coef[λ, μ] · n^{-p_μ} X_μ (orbit, labels present at n).
    From D_λ = Σ_μ C[λ, μ] X_μ with op_λ = n^{-p_λ} D_λ / |orbit λ|."""
    labels, present = orbit.orbit_labels(k, l), orbit.orbit_labels(k, l, n)
    order, C = diagram.change_of_basis(k, l)
    pos = {lab: i for i, lab in enumerate(order)}
    coef = np.zeros((len(labels), len(present)))
    for a, lam in enumerate(labels):
        scale = float(n) ** -orbit.pure_input_parts(lam) / diagram.orbit_size(lam, k, l)
        for b, mu in enumerate(present):
            coef[a, b] = scale * C[pos[lam], pos[mu]] * float(n) ** orbit.pure_input_parts(mu)
    return coef


class SymEquivariantLinear(nn.Module):
    """Σ_λ W_λ · op_λ(x) + invariant bias, for symmetric x [B, C_in, n^k] → symmetric [B, C_out, n^l].

    ``basis="diagram"``: op_λ = sym(D_π(x)) / n^{#contractions}; the λ range over all labels and mean the
    same map at every n (size transfer). ``basis="orbit"``: op_μ = X_μ / n^{#contractions}; labels with more
    parts than n do not exist at that n and are dropped (warned). ``execution``: "einsum" applies the
    diagram maps without matrices; "gather" builds the packed weight matrix from int32 gather indices (for
    the diagram basis through the exact change of basis); "auto" gathers while that matrix is small."""

    def __init__(self, k: int, l: int, c_in: int, c_out: int, basis: str = "diagram", bias: bool = True,
                 execution: str = "auto"):
        super().__init__()
        if basis not in BASES or execution not in EXECUTIONS:
            raise ValueError(f"basis {basis!r}, execution {execution!r}; expected one of {BASES}, {EXECUTIONS}")
        if basis == "orbit" and execution == "einsum":
            raise ValueError("the orbit basis runs by gather only")
        self.k, self.l, self.basis, self.execution = k, l, basis, execution
        self.labels = orbit.orbit_labels(k, l)
        self.weight = nn.Parameter(torch.randn(len(self.labels), c_out, c_in) / np.sqrt(c_in * len(self.labels)))
        self.bias = _InvariantBias(l, c_out) if bias else None
        self._warned: set[int] = set()

    def _einsum(self, x: torch.Tensor) -> torch.Tensor:
        y = None
        for w, lab in zip(self.weight, self.labels, strict=True):
            blocks = diagram.representative(lab)
            if self.k > self.l:  # mix channels on the smaller side: after the map shrinks the tensor
                term = torch.einsum("oc,bc...->bo...", w, diagram.apply_partition(x, blocks, self.k, self.l))
            else:
                term = diagram.apply_partition(torch.einsum("oc,bc...->bo...", w, x), blocks, self.k, self.l)
            y = term if y is None else y + term
        return symmetrize(y, self.l)

    def _present_weights(self, n: int) -> torch.Tensor:
        """[L_n, C_out, C_in] weights of the n^{-p_μ} X_μ present at n."""
        if self.basis == "diagram":
            coef = torch.as_tensor(diagram_coefficients(self.k, self.l, n), dtype=self.weight.dtype,
                                   device=self.weight.device)
            return torch.einsum("ab,aoc->boc", coef, self.weight)
        present = orbit.orbit_labels(self.k, self.l, n)
        if len(present) < len(self.labels) and n not in self._warned:
            self._warned.add(n)
            warnings.warn(f"orbit basis at n={n}: {len(self.labels) - len(present)} of {len(self.labels)} labels "
                          "need more distinct indices than n and are dropped", stacklevel=4)
        pos = {lab: i for i, lab in enumerate(self.labels)}
        return self.weight[[pos[lab] for lab in present]]

    def packed_matrix(self, n: int) -> torch.Tensor:
        """[C_out, C_in, P_out, P_in] weight matrix on packed entries at n."""
        present = orbit.orbit_labels(self.k, self.l, n)
        scale = torch.tensor([float(n) ** -orbit.pure_input_parts(lab) for lab in present],
                             dtype=self.weight.dtype, device=self.weight.device)
        w = self._present_weights(n) * scale[:, None, None]
        g = torch.as_tensor(orbit.gather_indices(self.k, self.l, n), dtype=torch.long, device=w.device)
        return w.permute(1, 2, 0)[:, :, g]

    def _gather(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[-1]
        y = torch.einsum("bcp,ocqp->boq", pack(x, self.k), self.packed_matrix(n))
        return unpack(y, n, self.l)

    def uses_gather(self, n: int) -> bool:
        if self.basis == "orbit" or self.execution == "gather":
            return True
        c_out, c_in = self.weight.shape[1:]
        return self.execution == "auto" and c_out * c_in * packed_size(n, self.k) * packed_size(n, self.l) \
            <= GATHER_MAX_ELEMENTS

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[-1]
        y = self._gather(x) if self.uses_gather(n) else self._einsum(x)
        if self.bias is not None:
            y = y + self.bias(n, y)[None]
        return y


class MaronLinear(nn.Module):
    """Full-tensor S_n-equivariant layer (Maron et al.): one C_out × C_in weight per set partition of the
    l+k legs (Bell(k+l), e.g. 15 for 2→2), no symmetry of indices assumed, Bell(l) biases."""

    def __init__(self, k: int, l: int, c_in: int, c_out: int):
        super().__init__()
        self.k, self.l = k, l
        self.partitions = diagram.all_partitions(k, l)
        self.weight = nn.Parameter(torch.randn(len(self.partitions), c_out, c_in)
                                   / np.sqrt(c_in * len(self.partitions)))
        self.bias = _InvariantBias(l, c_out, set_level=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = None
        for w, blocks in zip(self.weight, self.partitions, strict=True):
            term = diagram.apply_partition(torch.einsum("oc,bc...->bo...", w, x), blocks, self.k, self.l)
            y = term if y is None else y + term
        return y + self.bias(x.shape[-1], y)[None]


class EquivariantNet(nn.Module):
    """k→k hidden layers (entry-wise activation between them), then k→l to one channel; l = 0 is an
    invariant head. ``kind``: "diagram", "orbit" (SymEquivariantLinear) or "maron" (MaronLinear)."""

    def __init__(self, k: int, l: int, hidden: int, layers: int, kind: str = "diagram", activation: str = "relu",
                 execution: str = "auto"):
        super().__init__()
        self.k, self.l, self.act = k, l, ACTIVATIONS[activation]
        widths = [1] + [hidden] * layers

        def make(ki: int, lo: int, ci: int, co: int) -> nn.Module:
            if kind == "maron":
                return MaronLinear(ki, lo, ci, co)
            return SymEquivariantLinear(ki, lo, ci, co, kind, execution=execution)

        self.hidden = nn.ModuleList(make(k, k, a, b) for a, b in zip(widths[:-1], widths[1:], strict=True))
        self.head = make(k, l, widths[-1], 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x[:, None]
        for layer in self.hidden:
            h = self.act(layer(h))
        return self.head(h)[:, 0]


class PackedMLP(nn.Module):
    """MLP on the C(n+k-1, k) unique entries, predicting the packed output (fixed n)."""

    def __init__(self, k: int, l: int, n: int, hidden: int, layers: int, activation: str = "relu"):
        super().__init__()
        self.k, self.l, self.n, self.act = k, l, n, ACTIVATIONS[activation]
        dims = [packed_size(n, k)] + [hidden] * layers + [packed_size(n, l)]
        self.linears = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:], strict=True))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = pack(x, self.k)
        for i, lin in enumerate(self.linears):
            h = lin(h)
            if i < len(self.linears) - 1:
                h = self.act(h)
        return unpack(h, self.n, self.l)


def parameter_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def diagram_to_orbit_weights(layer: SymEquivariantLinear, n: int) -> torch.Tensor:
    """Weights [L_n, C_out, C_in] of an orbit layer computing the same map at n as a diagram layer."""
    coef = torch.as_tensor(diagram_coefficients(layer.k, layer.l, n), dtype=layer.weight.dtype)
    return torch.einsum("ab,aoc->boc", coef, layer.weight.detach())


__all__ = ["SymEquivariantLinear", "MaronLinear", "EquivariantNet", "PackedMLP", "integer_partitions",
           "parameter_count", "diagram_to_orbit_weights", "diagram_coefficients"]
