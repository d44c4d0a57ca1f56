"""DC-GNN (Azzolin et al., ICML 2025, Sec. 5): y = C(σ(f_gnn(G)/t), σ(f_rule(G)/t)).

- GNN channel: an SE-GNN = 3-layer GIN extractor → edge scores p_e → GIN classifier on the masked graph.
  GIN layers are PyG ``MessagePassing`` whose messages are multiplied by the edge mask (``GINConv`` takes
  no edge weights). Variants: GSAT (concrete-Bernoulli masks, KL to a prior r), GiSST (sigmoid edge and
  feature masks, L1 + entropy), SMGNN (L1 + entropy on p_e), none (plain GIN, every mask 1).
- Rule channel: sum-pooled raw node features (per-type counts; optional constant-1 column = node count)
  → linear layer, read as the rule Σ w·count(feature) + b.
- Combiner: the LEN entropy-linear layer (relevance = softmax of weight-column L1 norms / τ) + two dense
  layers; ablations linear, MLP, product t-norm, Gödel t-norm.
"""

from __future__ import annotations

import math

import torch
from torch import nn

SEGNNS = ("none", "gsat", "gisst", "smgnn")
CHANNELS = ("dual", "gnn", "rule")
COMBINERS = ("len", "linear", "mlp", "product", "godel")
EPS = 1e-6


def _mlp(d_in: int, d_hidden: int, d_out: int, norm: str = "none") -> nn.Sequential:
    """GIN's MLP; ``norm`` "bn" puts a BatchNorm after the first layer (the official ``use_norm: bn``)."""
    mid = [nn.BatchNorm1d(d_hidden)] if norm == "bn" else []
    return nn.Sequential(nn.Linear(d_in, d_hidden), *mid, nn.ReLU(), nn.Linear(d_hidden, d_out))


def _masked_gin_conv_class() -> type:
    from torch_geometric.nn import MessagePassing

    class MaskedGINConv(MessagePassing):
        """GIN: h_v' = MLP((1 + ε) h_v + Σ_u m_uv h_u), the messages scaled by the edge mask m."""

        def __init__(self, d_in: int, d_out: int, norm: str = "none"):
            super().__init__(aggr="add")
            self.nn = _mlp(d_in, d_out, d_out, norm)
            self.eps = nn.Parameter(torch.zeros(1))

        def forward(self, x: torch.Tensor, edge_index: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
            agg = self.propagate(edge_index, x=x, mask=mask)
            return self.nn((1 + self.eps) * x + agg)

        def message(self, x_j: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
            return x_j if mask is None else x_j * mask.unsqueeze(-1)

    return MaskedGINConv


class GINEncoder(nn.Module):
    def __init__(self, d_in: int, hidden: int, n_layers: int = 3, norm: str = "none"):
        super().__init__()
        conv = _masked_gin_conv_class()
        self.convs = nn.ModuleList([conv(d_in if i == 0 else hidden, hidden, norm) for i in range(n_layers)])

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index, mask)
            if i < len(self.convs) - 1:
                x = torch.relu(x)
        return x


def reverse_edge_index(edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """For each edge (u, v) the position of (v, u), or its own position when the reverse is absent."""
    key = edge_index[0] * num_nodes + edge_index[1]
    rkey = edge_index[1] * num_nodes + edge_index[0]
    order = torch.argsort(key)
    pos = torch.searchsorted(key[order], rkey).clamp(max=len(key) - 1)
    found = key[order][pos] == rkey
    own = torch.arange(len(key), device=key.device)
    return torch.where(found, order[pos], own)


def symmetrise(values: torch.Tensor, edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """Average the scores of (u, v) and (v, u) (GSAT's fix for unstable accuracy on undirected graphs)."""
    if values.numel() == 0:
        return values
    return 0.5 * (values + values[reverse_edge_index(edge_index, num_nodes)])


def bernoulli_kl(p: torch.Tensor, r: float) -> torch.Tensor:
    """Mean KL(Bern(p) ‖ Bern(r)): GSAT's information bottleneck."""
    p = p.clamp(EPS, 1 - EPS)
    return (p * torch.log(p / r) + (1 - p) * torch.log((1 - p) / (1 - r))).mean()


def l1_entropy(p: torch.Tensor, ent_coef: float) -> torch.Tensor:
    """Mean mask size plus ent_coef × mean binary entropy (pushes masks small and crisp)."""
    q = p.clamp(EPS, 1 - EPS)
    ent = -(q * torch.log(q) + (1 - q) * torch.log(1 - q))
    return p.mean() + ent_coef * ent.mean()


class SEGNN(nn.Module):
    """Extractor (GIN + edge MLP on endpoint pairs) → mask → GIN classifier with sum pooling."""

    def __init__(self, d_in: int, n_classes: int, hidden: int, kind: str, average_edge_attn: str = "mean",
                 pool: str = "sum", norm: str = "none"):
        super().__init__()
        self.kind, self.average, self.pool = kind, average_edge_attn, pool
        if kind != "none":
            self.extractor = GINEncoder(d_in, hidden, norm=norm)
            self.edge_mlp = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        if kind == "gisst":
            self.feature_logits = nn.Parameter(torch.zeros(d_in))
        self.classifier = GINEncoder(d_in, hidden, norm=norm)
        self.head = nn.Linear(hidden, n_classes)

    def edge_logits(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        h = self.extractor(x, edge_index)
        return self.edge_mlp(torch.cat([h[edge_index[0]], h[edge_index[1]]], dim=-1)).squeeze(-1)

    def edge_mask(self, x: torch.Tensor, edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor | None:
        """Edge mask in [0, 1]: a concrete-Bernoulli sample for GSAT in training, else σ(logit)."""
        if self.kind == "none":
            return None
        logits = self.edge_logits(x, edge_index)
        if self.kind == "gsat" and self.training:
            u = torch.rand_like(logits).clamp(EPS, 1 - EPS)
            logits = logits + torch.log(u) - torch.log(1 - u)
        mask = torch.sigmoid(logits)
        return symmetrise(mask, edge_index, num_nodes) if self.average == "mean" else mask

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor, batch: torch.Tensor, n_graphs: int,
                mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Class logits and the edge mask used (``mask`` given: classify under that mask instead)."""
        from torch_geometric.nn import global_add_pool, global_mean_pool

        if mask is None:
            mask = self.edge_mask(x, edge_index, x.shape[0])
        if self.kind == "gisst":
            x = x * torch.sigmoid(self.feature_logits)
        h = self.classifier(x, edge_index, mask)
        pooled = (global_mean_pool if self.pool == "mean" else global_add_pool)(h, batch, n_graphs)
        return self.head(pooled), mask

    def regulariser(self, mask: torch.Tensor | None, *, r: float, ent_coef: float) -> torch.Tensor:
        if mask is None or mask.numel() == 0:
            return torch.zeros(())
        if self.kind == "gsat":
            return bernoulli_kl(mask, r)
        reg = l1_entropy(mask, ent_coef)
        if self.kind == "gisst":
            reg = reg + l1_entropy(torch.sigmoid(self.feature_logits), ent_coef)
        return reg


class RuleChannel(nn.Module):
    """Linear classifier on sum-pooled raw features: class scores = W·counts + b."""

    def __init__(self, d_in: int, n_classes: int, constant: bool, init: str = "zero"):
        super().__init__()
        self.constant = constant
        self.linear = nn.Linear(d_in + int(constant), n_classes)
        # "zero": start from the empty rule: counts reach the hundreds, so random weights saturate the logits and
        # Adam needs hundreds of steps to undo a wrong sign (the official code trains ~8,000 steps; examples
        # ~250). "default" keeps PyTorch's init, as the official code.
        if init == "zero":
            nn.init.zeros_(self.linear.weight)

    def counts(self, x: torch.Tensor, batch: torch.Tensor, n_graphs: int) -> torch.Tensor:
        from torch_geometric.nn import global_add_pool

        if self.constant:
            x = torch.cat([x, torch.ones_like(x[:, :1])], dim=-1)
        return global_add_pool(x, batch, n_graphs)

    def forward(self, x: torch.Tensor, batch: torch.Tensor, n_graphs: int) -> torch.Tensor:
        return self.linear(self.counts(x, batch, n_graphs))


class EntropyLinear(nn.Module):
    """LEN entropy-linear layer (Barbiero et al., 2022) as the official DC-GNN code uses it: one layer shared by
    all classes whose input relevances α = softmax_j(‖W[:, j]‖₁ / τ) rescale the inputs before the linear map."""

    def __init__(self, d_in: int, d_hidden: int, temperature: float, init: str = "equal"):
        super().__init__()
        self.temperature = temperature
        self.weight = nn.Parameter(torch.empty(d_hidden, d_in))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if init == "equal":   # equal column norms: every input starts equally relevant, training decides
            with torch.no_grad():
                norms = self.weight.abs().sum(0)
                self.weight.mul_(norms.mean() / norms)

    def alpha(self) -> torch.Tensor:
        return torch.softmax(self.weight.abs().sum(0) / self.temperature, dim=-1)   # (d_in,)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * self.alpha()) @ self.weight.T


def channel_width(n_classes: int) -> int:
    """Inputs per channel to the combiner: one (the class-1 logit margin) for two classes, as the official
    code's single binary logit, else one per class."""
    return 1 if n_classes == 2 else n_classes


def channel_inputs(logits: torch.Tensor, t: float) -> torch.Tensor:
    """σ(logit / t) per class, or σ((l₁ − l₀) / t) = p(class 1) at temperature t for two classes."""
    if logits.shape[1] == 2:
        return torch.sigmoid((logits[:, 1:] - logits[:, :1]) / t)
    return torch.sigmoid(logits / t)


class Combiner(nn.Module):
    """Maps the two channels' inputs [σ(f_gnn/t), σ(f_rule/t)] ∈ [0, 1]^{2w} to class logits."""

    def __init__(self, kind: str, n_classes: int, hidden: int, temperature: float, init: str = "equal"):
        super().__init__()
        self.kind, self.c = kind, channel_width(n_classes)
        if kind == "len":
            self.entropy = EntropyLinear(2 * self.c, hidden, temperature, init)
            self.dense = nn.Sequential(nn.LeakyReLU(), nn.Linear(hidden, hidden), nn.LeakyReLU(),
                                       nn.Linear(hidden, n_classes))
        elif kind == "linear":
            self.net = nn.Linear(2 * self.c, n_classes)
        elif kind == "mlp":
            self.net = nn.Sequential(nn.Linear(2 * self.c, hidden), nn.LeakyReLU(), nn.Linear(hidden, n_classes))

    def forward(self, s: torch.Tensor) -> torch.Tensor:
        if self.kind == "len":
            return self.dense(self.entropy(s))
        if self.kind in ("linear", "mlp"):
            return self.net(s)
        g, r = s[:, :self.c], s[:, self.c:]
        score = g * r if self.kind == "product" else torch.minimum(g, r)
        if self.c == 1:                       # p(class 1) of the t-norm; class 0 gets the rest
            score = torch.cat([1 - score, score], -1)
        return torch.log(score + EPS)

    def relevance(self) -> tuple[float, float] | None:
        """(GNN, rule) channel relevance: the LEN α summed over each channel's inputs."""
        if self.kind != "len":
            return None
        a = self.entropy.alpha().detach()
        return float(a[:self.c].sum()), float(a[self.c:].sum())


class DCGNN(nn.Module):
    """A dual-channel GNN, or one channel alone (``channels`` gnn / rule)."""

    def __init__(self, d_in: int, n_classes: int, *, hidden: int = 64, segnn: str = "smgnn", channels: str = "dual",
                 combiner: str = "len", constant_feature: bool = False, combiner_hidden: int | None = None,
                 combiner_temp: float = 0.6, average_edge_attn: str = "mean", pool: str = "sum",
                 norm: str = "none", combiner_init: str = "equal", rule_init: str = "zero"):
        super().__init__()
        self.channels, self.n_classes = channels, n_classes
        self.temperature = 1.0
        if channels in ("dual", "gnn"):
            self.gnn = SEGNN(d_in, n_classes, hidden, segnn, average_edge_attn, pool, norm)
        if channels in ("dual", "rule"):
            self.rule = RuleChannel(d_in, n_classes, constant_feature, rule_init)
        if channels == "dual":
            # hidden 10 per combiner output as the official ConceptClassifier (one output for two classes)
            self.combiner = Combiner(combiner, n_classes, combiner_hidden or 10 * channel_width(n_classes),
                                     combiner_temp, combiner_init)

    def forward(self, data, mask: torch.Tensor | None = None) -> dict[str, torch.Tensor | None]:
        n = int(data.num_graphs)
        out: dict[str, torch.Tensor | None] = {"gnn": None, "rule": None, "mask": None}
        if self.channels != "rule":
            out["gnn"], out["mask"] = self.gnn(data.x, data.edge_index, data.batch, n, mask)
        if self.channels != "gnn":
            out["rule"] = self.rule(data.x, data.batch, n)
        if self.channels == "dual":
            t = self.temperature
            out["logits"] = self.combiner(torch.cat([channel_inputs(out["gnn"], t), channel_inputs(out["rule"], t)], -1))
        else:
            out["logits"] = out["gnn"] if self.channels == "gnn" else out["rule"]
        return out

    def relevance(self) -> tuple[float, float] | None:
        if self.channels == "dual":
            return self.combiner.relevance()
        return (1.0, 0.0) if self.channels == "gnn" else (0.0, 1.0)
