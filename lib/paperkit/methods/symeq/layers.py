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
from paperkit.methods.symeq.symtensor import pack, symmetrize, unpack

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


class SymEquivariantLinear(nn.Module):
    """Σ_λ W_λ · op_λ(x) + invariant bias, for symmetric x [B, C_in, n^k] → symmetric [B, C_out, n^l].

    ``basis="diagram"``: op_λ = sym(D_π(x)) / n^{#contractions}, applied by einsum without matrices; the
    λ range over all labels and work at any n. ``basis="orbit"``: op_μ = X_μ / n^{#contractions} gathered
    into a packed matrix; labels with more parts than n do not exist at that n and are dropped (warned)."""

    def __init__(self, k: int, l: int, c_in: int, c_out: int, basis: str = "diagram", bias: bool = True):
        super().__init__()
        if basis not in BASES:
            raise ValueError(f"basis {basis!r}; expected one of {BASES}")
        self.k, self.l, self.basis = k, l, basis
        self.labels = orbit.orbit_labels(k, l)
        self.weight = nn.Parameter(torch.randn(len(self.labels), c_out, c_in) / np.sqrt(c_in * len(self.labels)))
        self.bias = _InvariantBias(l, c_out) if bias else None
        self._warned: set[int] = set()

    def _diagram(self, x: torch.Tensor) -> torch.Tensor:
        y = None
        for w, lab in zip(self.weight, self.labels, strict=True):
            z = torch.einsum("oc,bc...->bo...", w, x)
            term = diagram.apply_partition(z, diagram.representative(lab), self.k, self.l)
            y = term if y is None else y + term
        return symmetrize(y, self.l)

    def orbit_matrix(self, n: int) -> torch.Tensor:
        """[C_out, C_in, P_out, P_in] packed weight matrix Σ_μ w_μ X_μ / n^{#contractions} at n."""
        present = orbit.orbit_labels(self.k, self.l, n)
        if len(present) < len(self.labels) and n not in self._warned:
            self._warned.add(n)
            warnings.warn(f"orbit basis at n={n}: {len(self.labels) - len(present)} of {len(self.labels)} labels "
                          "need more distinct indices than n and are dropped", stacklevel=3)
        pos = {lab: i for i, lab in enumerate(self.labels)}
        scale = torch.tensor([float(n) ** -orbit.pure_input_parts(lab) for lab in present],
                             dtype=self.weight.dtype, device=self.weight.device)
        w = self.weight[[pos[lab] for lab in present]] * scale[:, None, None]
        g = torch.as_tensor(orbit.gather_indices(self.k, self.l, n), dtype=torch.long, device=w.device)
        return w.permute(1, 2, 0)[:, :, g]

    def _orbit(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[-1]
        y = torch.einsum("bcp,ocqp->boq", pack(x, self.k), self.orbit_matrix(n))
        return unpack(y, n, self.l)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[-1]
        y = self._diagram(x) if self.basis == "diagram" else self._orbit(x)
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

    def __init__(self, k: int, l: int, hidden: int, layers: int, kind: str = "diagram", activation: str = "relu"):
        super().__init__()
        self.k, self.l, self.act = k, l, ACTIVATIONS[activation]
        widths = [1] + [hidden] * layers

        def make(ki: int, lo: int, ci: int, co: int) -> nn.Module:
            return MaronLinear(ki, lo, ci, co) if kind == "maron" else SymEquivariantLinear(ki, lo, ci, co, kind)

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
        from paperkit.methods.symeq.symtensor import packed_size
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
    """Weights [L_n, C_out, C_in] of the orbit layer (labels present at n) computing the same map as a
    diagram layer: op_λ = n^{-p_λ}/|orbit λ| Σ_μ C[λ, μ] X_μ and orbit op_μ = n^{-p_μ} X_μ."""
    labels, C = diagram.change_of_basis(layer.k, layer.l)
    pos = {lab: i for i, lab in enumerate(labels)}
    coeff = np.zeros((len(layer.labels), len(layer.labels)))
    for a, lam in enumerate(layer.labels):
        s = float(n) ** -orbit.pure_input_parts(lam) / diagram.orbit_size(lam, layer.k, layer.l)
        for b, mu in enumerate(layer.labels):
            coeff[a, b] = s * C[pos[lam], pos[mu]] * float(n) ** orbit.pure_input_parts(mu)
    c = torch.as_tensor(coeff, dtype=layer.weight.dtype)
    return torch.einsum("ab,aoc->boc", c, layer.weight.detach())


__all__ = ["SymEquivariantLinear", "MaronLinear", "EquivariantNet", "PackedMLP", "integer_partitions",
           "parameter_count", "diagram_to_orbit_weights"]
