"""MOTIF's two encoders (Sec. 5): HCNet over LIFT_F(G) conditioned on the query relation q, and NBFNet over G
conditioned on (u, q) with DistMult messages; ``family='ultra'`` uses ULTRA's relation NBFNet instead (binary
directed edges of four types, inverse-degree weighted, no position codes). Scatter is ``index_add_``. A star lift
held as signed cubes (``lift.StarCubes``) sends the same messages per cube instead of per tuple."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from torch import nn

from paperkit.methods.kgfm.lift import Lift, arity, motif_types


@dataclass
class CubeTensors:
    """A star lift held as cubes (``lift.StarCubes``): member rows (cube, relation), coef and size per cube."""

    cube: torch.Tensor  # (m,) long
    relation: torch.Tensor  # (m,) long
    coef: torch.Tensor  # (n_cubes,) float
    size: torch.Tensor  # (n_cubes,) float


@dataclass(frozen=True)
class ModelConfig:
    family: str = "f3"
    dim: int = 64
    layers: int = 6
    dropout: float = 0.2
    relation_norm: bool = False


def position_codes(n_positions: int, dim: int) -> torch.Tensor:
    """Sinusoidal codes p_1..p_k (Vaswani et al.), one row per hyperedge position."""
    pos = torch.arange(1, n_positions + 1, dtype=torch.float32)[:, None]
    freq = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    pe = torch.zeros(n_positions, dim)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq)[:, : dim // 2]
    return pe


@dataclass
class LiftTensors:
    edges: list[torch.Tensor]  # per motif type, (m, k) long
    weights: list[torch.Tensor]  # (m,) float
    component: torch.Tensor  # (n_rel2,) long: the connected component of G of each relation
    cubes: list[CubeTensors | None] = field(default_factory=list)  # per motif type, where held as cubes

    @classmethod
    def from_lift(cls, lf: Lift, types: list[str], component: np.ndarray,
                  device: torch.device | str = "cpu") -> LiftTensors:
        empty = [torch.zeros((0, arity(t)), dtype=torch.long) for t in types]
        e = [torch.as_tensor(lf.edges[t], dtype=torch.long) if t in lf.edges else empty[i]
             for i, t in enumerate(types)]
        w = [torch.as_tensor(lf.weights[t], dtype=torch.float32) if t in lf.weights else torch.zeros(0)
             for t in types]
        cubes: list[CubeTensors | None] = []
        for t in types:
            c = lf.cubes.get(t)
            cubes.append(None if c is None else CubeTensors(
                torch.as_tensor(c.members[:, 0], dtype=torch.long, device=device),
                torch.as_tensor(c.members[:, 1], dtype=torch.long, device=device),
                torch.as_tensor(c.coef, dtype=torch.float32, device=device),
                torch.as_tensor(c.sizes(), dtype=torch.float32, device=device)))
        return cls([x.to(device) for x in e], [x.to(device) for x in w],
                   torch.as_tensor(component, dtype=torch.long, device=device), cubes)


def signed_log(x: torch.Tensor) -> torch.Tensor:
    """sign(x) log(1 + |x|): compresses a sum aggregate without discarding its size.

    A k-star relation can sit in thousands of hyperedges whose messages, early on, are nearly parallel (position
    codes times near-equal states); their sum then differs between relations mostly in length, which the
    layer norm of the update removes. ConnectHub's H and N relations differ exactly so (more all-H stars at the
    hub), and with a plain sum star3 training stalled at chance for some seeds. The signed log keeps counts
    visible (log 70 - log 65 survives normalisation) and bounds the scale of the next layer's products."""
    return torch.sign(x) * torch.log1p(x.abs())


def standardise_over_relations(x: torch.Tensor, component: torch.Tensor, queries: torch.Tensor) -> torch.Tensor:
    """(B, n_rel2, d) features centred and scaled, per query and feature, over the relations of q's connected
    component of G (the graph q belongs to; zero outside it, where q's scores never look).

    Why (``--relation-norm``): a star relation's aggregate is a sum over thousands of hyperedges whose
    messages are nearly parallel, so what tells relations apart is a count differing by a few percent
    (ConnectHub(3): H relations sit in 369 4-star hyperedges, N relations in 345, at |R_H| = 4); after the
    signed log that is a shift of 0.07 on values near 6, which the layer norm of each update all but removes
    (the cosine of H and N states at initialisation is 0.99999). Standardising across the graph's relations
    turns it into an O(1) difference, and one that does not depend on the graph's size; every relation gets
    the same function of graph-wide statistics, so relations that WL ties stay tied (Thm 6.5 still holds)."""
    same = (component[None, :] == component[queries][:, None]).to(x.dtype)[..., None]
    count = same.sum(1, keepdim=True)
    mean = (x * same).sum(1, keepdim=True) / count
    var = ((x - mean) ** 2 * same).sum(1, keepdim=True) / count
    return (x - mean) / torch.sqrt(var + 1e-5) * same


class _Block(nn.Module):
    """h <- LayerNorm(h + dropout(relu(W[h || x] + b))), x = signed_log(aggregate) (standardised over
    relations with ``relation_norm``): the update shared by both encoders."""

    def __init__(self, dim: int, dropout: float) -> None:
        super().__init__()
        self.linear = nn.Linear(2 * dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, h: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return self.norm(h + self.drop(torch.relu(self.linear(torch.cat([h, x], dim=-1)))))


class RelationEncoder(nn.Module):
    """HCNet (or ULTRA's NBFNet when ``directed``) on the relation hypergraph, from the indicator of q."""

    def __init__(self, types: list[str], cfg: ModelConfig, directed: bool = False) -> None:
        super().__init__()
        self.types, self.directed, self.dim, self.relation_norm = types, directed, cfg.dim, cfg.relation_norm
        k_max = max([arity(t) for t in types] + [2])
        self.register_buffer("pos", position_codes(k_max, cfg.dim))
        self.gates = nn.ParameterList([nn.Parameter(torch.ones(max(len(types), 1), cfg.dim))
                                       for _ in range(cfg.layers)])
        self.alpha = nn.Parameter(torch.zeros(cfg.layers))  # sigmoid(0) = 1/2 between state and position
        self.blocks = nn.ModuleList([_Block(cfg.dim, cfg.dropout) for _ in range(cfg.layers)])
        self.mlp = nn.Sequential(nn.Linear(cfg.dim, cfg.dim), nn.ReLU(), nn.Linear(cfg.dim, cfg.dim))

    def forward(self, lt: LiftTensors, queries: torch.Tensor, n_rel2: int) -> torch.Tensor:
        B = len(queries)
        h0 = torch.zeros(B, n_rel2, self.dim, device=queries.device)
        h0[torch.arange(B, device=queries.device), queries] = 1.0
        h = h0
        for layer, block in enumerate(self.blocks):
            agg = h0.clone()
            a = torch.sigmoid(self.alpha[layer])
            for t, (edges, w) in enumerate(zip(lt.edges, lt.weights, strict=True)):
                cubes = lt.cubes[t] if t < len(lt.cubes) else None
                if cubes is not None and len(cubes.coef):
                    agg = agg + self._cube_messages(h, cubes, edges.shape[1], self.gates[layer][t], a)
                elif len(edges):
                    agg = agg + self._messages(h, edges, w, self.gates[layer][t], a)
            x = signed_log(agg)
            if self.relation_norm:
                x = standardise_over_relations(x, lt.component, queries)
            h = block(h, x)
        return self.mlp(h)

    def _messages(self, h: torch.Tensor, edges: torch.Tensor, w: torch.Tensor, gate: torch.Tensor,
                  a: torch.Tensor) -> torch.Tensor:
        out = torch.zeros_like(h)
        k = edges.shape[1]
        if self.directed:  # ULTRA: r1 hears r2 along (r1, type, r2); like ULTRA's code, the inverse-degree
            # weights of the products only decide which edges exist (weighting messages would break Thm 6.5)
            out.index_add_(1, edges[:, 0], h[:, edges[:, 1]] * gate)
            return out
        x = [a * h[:, edges[:, j]] + (1 - a) * self.pos[j] for j in range(k)]
        # prod_{j != i} x_j by prefix and suffix products (no division): O(k) instead of O(k^2)
        prefix = [gate * w[:, None]]
        for j in range(k - 1):
            prefix.append(prefix[-1] * x[j])
        suffix = None
        for i in range(k - 1, -1, -1):
            msg = prefix[i] if suffix is None else prefix[i] * suffix
            out.index_add_(1, edges[:, i], msg)
            suffix = x[i] if suffix is None else suffix * x[i]
        return out

    def _cube_messages(self, h: torch.Tensor, c: CubeTensors, k: int, gate: torch.Tensor,
                       a: torch.Tensor) -> torch.Tensor:
        """``_messages`` of a star lift held as cubes, the same sum without the tuples: relation r of cube W
        receives coef[W] * gate * sum_i prod_(j != i) X_j(W), X_j(W) = sum_(s in W) x_j(s) = a sum_(s in W) h_s
        + (1 - a) |W| p_j (``lift.StarCubes`` says why; cost O(sum |W| + k n_cubes) per feature instead of
        O(k |W|^k))."""
        hs = h.new_zeros(h.shape[0], len(c.coef), h.shape[2]).index_add_(1, c.cube, h[:, c.relation])
        x = [a * hs + (1 - a) * c.size[:, None] * self.pos[j] for j in range(k)]
        prefix = [gate * c.coef[:, None]]
        for j in range(k - 1):
            prefix.append(prefix[-1] * x[j])
        total, suffix = prefix[k - 1], x[k - 1]
        for i in range(k - 2, -1, -1):
            total = total + prefix[i] * suffix
            suffix = suffix * x[i]
        return torch.zeros_like(h).index_add_(1, c.relation, total[:, c.cube])


class EntityEncoder(nn.Module):
    """NBFNet conditioned on (u, q): h_v^0 = z_q 1[v = u], messages h_w * W_l z_r along r(w, v), sum
    aggregation with the boundary condition, layer norm, shortcut; score MLP([h_v, z_q])."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.rel_proj = nn.ModuleList([nn.Linear(cfg.dim, cfg.dim) for _ in range(cfg.layers)])
        self.blocks = nn.ModuleList([_Block(cfg.dim, cfg.dropout) for _ in range(cfg.layers)])
        self.score = nn.Sequential(nn.Linear(2 * cfg.dim, 2 * cfg.dim), nn.ReLU(), nn.Linear(2 * cfg.dim, 1))

    def forward(self, edges: torch.Tensor, n_entities: int, z: torch.Tensor, heads: torch.Tensor,
                queries: torch.Tensor, edge_mask: torch.Tensor | None = None) -> torch.Tensor:
        B, _, d = z.shape
        b = torch.arange(B, device=z.device)
        zq = z[b, queries]
        h0 = torch.zeros(B, n_entities, d, device=z.device)
        h0[b, heads] = zq
        h = h0
        src, rel, dst = edges[:, 0], edges[:, 1], edges[:, 2]
        for proj, block in zip(self.rel_proj, self.blocks, strict=True):
            msg = h[:, src] * proj(z)[:, rel]
            if edge_mask is not None:
                msg = msg * edge_mask[..., None]
            agg = h0.clone().index_add_(1, dst, msg)
            h = block(h, signed_log(agg))
        feats = torch.cat([h, zq[:, None].expand(-1, n_entities, -1)], dim=-1)
        return self.score(feats).squeeze(-1)


class MotifModel(nn.Module):
    """score(u, q, v) for every v at once, for a batch of (u, q)."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.types = motif_types(cfg.family)
        self.relations = RelationEncoder(self.types, cfg, directed=cfg.family == "ultra")
        self.entities = EntityEncoder(cfg)

    def forward(self, edges: torch.Tensor, n_entities: int, n_rel2: int, lt: LiftTensors, heads: torch.Tensor,
                queries: torch.Tensor, edge_mask: torch.Tensor | None = None) -> torch.Tensor:
        # The relation encoder depends on q only: run it once per distinct query relation of the batch.
        uq, inv = torch.unique(queries, return_inverse=True)
        z = self.relations(lt, uq, n_rel2)[inv]
        return self.entities(edges, n_entities, z, heads, queries, edge_mask)

    def checkpoint(self) -> dict:
        return {"config": asdict(self.cfg), "state_dict": self.state_dict()}
