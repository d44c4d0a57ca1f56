"""The networks: GeoGLIP stand-in (encoder, FPN, heads, attention + FFC fusion), the global counts encoder,
the feature router and the probe (spec "Method" 1-2 and "Small encoder for CPU").

* ``Backbone``: 4 conv stages at strides 4/8/16/32; ``FPN``: 64 channels with DropBlock.
* ``PrimitiveEncoder``: CenterNet grounding head (class-centre heatmaps, size, offset) on P2, and in training
  on P3-P5 too (GLIP's head runs on every pyramid level; decoding reads P2); the fusion of
  the paper's boundary/junction branch: multi-head attention with the fine level (P2) as query and the
  coarse level (P3) as key/value, 2x upsampling, then an FFC block (local conv + rFFT spectral unit);
  junction heatmap (+ offset) and boundary map read the fused map.
* ``GlobalEncoder``: the same backbone and FPN trained on image-level class counts only (CLIP stand-in).
* ``Router``: per-level MLP to the global width (GELU, LayerNorm) and level weights
  ``w_i = sigmoid(MLP([LN(mean Q); LN(W mean F_i)]))``; channel (default) or sequence concat; baselines
  equal weights and global-only.
* ``Probe``: attention pooling of the fused tokens by per-option queries built from the question, plus
  located reads of the tokens around the points the question names.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

N_CLASSES = 5
N_QTYPES = 4
N_OPTIONS = 4
ROUTER_MODES = ("on", "equal", "global-only")
CONCAT_MODES = ("channel", "sequence")


def conv_bn(cin: int, cout: int, stride: int = 1, k: int = 3) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, k // 2, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class DropBlock(nn.Module):
    """DropBlock (Ghiasi et al. 2018): drop ``block`` x ``block`` squares with total rate ``p`` in training."""

    def __init__(self, p: float = 0.1, block: int = 3):
        super().__init__()
        self.p, self.block = p, block

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        h, w = x.shape[-2:]
        valid = max(1, (h - self.block + 1) * (w - self.block + 1))
        gamma = self.p / self.block**2 * h * w / valid
        seeds = (torch.rand_like(x) < gamma).float()
        mask = 1.0 - F.max_pool2d(seeds, self.block, 1, self.block // 2)
        return x * mask * mask.numel() / mask.sum().clamp(min=1.0)


class Stage(nn.Module):
    """A stride-2 conv followed by a residual block."""

    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.down = conv_bn(cin, cout, 2)
        self.res = nn.Sequential(conv_bn(cout, cout), nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.down(x)
        return F.relu(x + self.res(x))


class Backbone(nn.Module):
    """C2..C5 at strides 4, 8, 16, 32 (the stem halves twice)."""

    def __init__(self, widths: tuple[int, ...] = (32, 48, 96, 128)):
        super().__init__()
        self.stem = nn.Sequential(conv_bn(1, widths[0] // 2, 2), conv_bn(widths[0] // 2, widths[0], 2))
        self.stages = nn.ModuleList([nn.Sequential(conv_bn(widths[0], widths[0]))]
                                    + [Stage(a, b) for a, b in zip(widths[:-1], widths[1:], strict=True)])

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        x = self.stem(x)
        out = []
        for stage in self.stages:
            x = stage(x)
            out.append(x)
        return out


class FPN(nn.Module):
    """Top-down pyramid P2..P5 with ``channels`` maps, DropBlock on each output in training."""

    def __init__(self, widths: tuple[int, ...], channels: int = 64, drop: float = 0.1):
        super().__init__()
        self.lateral = nn.ModuleList([nn.Conv2d(w, channels, 1) for w in widths])
        self.smooth = nn.ModuleList([conv_bn(channels, channels) for _ in widths])
        self.drop = DropBlock(drop)

    def forward(self, feats: list[torch.Tensor]) -> list[torch.Tensor]:
        x = self.lateral[-1](feats[-1])
        outs = [self.smooth[-1](x)]
        for i in range(len(feats) - 2, -1, -1):
            x = self.lateral[i](feats[i]) + F.interpolate(x, size=feats[i].shape[-2:], mode="nearest")
            outs.insert(0, self.smooth[i](x))
        return [self.drop(o) for o in outs]


class FourierUnit(nn.Module):
    """FFC spectral unit: rFFT2 (orthonormal), a 1x1 conv over (real, imag) channels, ReLU, inverse rFFT2."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv = nn.Conv2d(2 * channels, 2 * channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.shape
        # In float32 even under bfloat16 autocast: complex bfloat16 does not exist, and the spectrum's sums over
        # the whole map are where bfloat16's 8-bit mantissa would lose most.
        with torch.autocast(x.device.type, enabled=False):
            spec = torch.fft.rfft2(x.to(torch.promote_types(x.dtype, torch.float32)), norm="ortho")
            z = torch.cat([spec.real, spec.imag], dim=1)
            z = F.relu(self.conv(z))
            return torch.fft.irfft2(torch.complex(z[:, :c], z[:, c:]), s=(h, w), norm="ortho")


class FFCBlock(nn.Module):
    """Fast Fourier convolution block: a local 3x3 branch plus the global spectral branch, mixed, residual."""

    def __init__(self, channels: int):
        super().__init__()
        self.local = conv_bn(channels, channels)
        self.spectral = FourierUnit(channels)
        self.mix = nn.Sequential(nn.Conv2d(2 * channels, channels, 1, bias=False), nn.BatchNorm2d(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(x + self.mix(torch.cat([self.local(x), self.spectral(x)], dim=1)))


def positions(h: int, w: int, dim: int, device: torch.device) -> torch.Tensor:
    """Fixed 2-D sine/cosine position codes (h*w, dim)."""
    quarter = dim // 4
    freq = torch.exp(torch.arange(quarter, device=device) * (-math.log(100.0) / max(1, quarter)))
    ys, xs = torch.meshgrid(torch.arange(h, device=device, dtype=torch.float32) / max(1, h),
                            torch.arange(w, device=device, dtype=torch.float32) / max(1, w), indexing="ij")
    parts = [f(c.reshape(-1, 1) * freq * 2 * math.pi) for c in (xs, ys) for f in (torch.sin, torch.cos)]
    pe = torch.cat(parts, dim=1)
    return F.pad(pe, (0, dim - pe.shape[1]))


class Fusion(nn.Module):
    """Attention of the fine level (query) over the coarse level (key/value), 2x upsampling, FFC block."""

    def __init__(self, channels: int, out_channels: int, heads: int = 4):
        super().__init__()
        self.attn = nn.MultiheadAttention(channels, heads, batch_first=True)
        self.norm = nn.LayerNorm(channels)
        self.reduce = nn.Conv2d(channels, out_channels, 1)   # the stride-2 map is the costly one: fewer channels
        self.ffc = FFCBlock(out_channels)

    def forward(self, fine: torch.Tensor, coarse: torch.Tensor) -> torch.Tensor:
        n, c, h, w = fine.shape
        pe_f = positions(h, w, c, fine.device)
        pe_c = positions(*coarse.shape[-2:], c, fine.device)
        q = fine.flatten(2).transpose(1, 2)
        kv = coarse.flatten(2).transpose(1, 2)
        att, _ = self.attn(q + pe_f, kv + pe_c, kv, need_weights=False)
        x = self.reduce(self.norm(q + att).transpose(1, 2).reshape(n, c, h, w))
        x = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
        return self.ffc(x)


def head(cin: int, cout: int, bias: float = 0.0) -> nn.Sequential:
    h = nn.Sequential(nn.Conv2d(cin, cin, 3, 1, 1), nn.ReLU(inplace=True), nn.Conv2d(cin, cout, 1))
    nn.init.constant_(h[-1].bias, bias)
    return h


HEAT_BIAS = -2.19  # CenterNet's prior: sigmoid(-2.19) = 0.1


class PrimitiveEncoder(nn.Module):
    """Backbone + FPN + grounding, junction and boundary heads. ``forward`` returns a dict of maps.

    Heads share one 3x3 trunk per resolution: centre heatmaps (5), size (2), offset (2) on P2 at stride 4;
    junction heatmap (1), junction offset (2) and boundary (1) on the fused map at stride 2. With ``coarse``
    (training) the grounding head also runs on P3, P4 and P5 (``grounding_coarse``).
    """

    def __init__(self, widths: tuple[int, ...] = (32, 48, 96, 128), channels: int = 64, drop: float = 0.1):
        super().__init__()
        self.config = {"widths": list(widths), "channels": channels, "drop": drop}
        self.backbone = Backbone(widths)
        self.fpn = FPN(widths, channels, drop)
        self.grounding = head(channels, N_CLASSES + 4)
        self.fusion = Fusion(channels, channels // 2)
        self.pixel = head(channels // 2, 4)
        nn.init.constant_(self.grounding[-1].bias[:N_CLASSES], HEAT_BIAS)
        nn.init.constant_(self.pixel[-1].bias[:1], HEAT_BIAS)

    def levels(self, x: torch.Tensor) -> tuple[list[torch.Tensor], torch.Tensor]:
        pyr = self.fpn(self.backbone(x))
        return pyr, self.fusion(pyr[0], pyr[1])

    def forward(self, x: torch.Tensor, coarse: bool = False) -> dict[str, torch.Tensor]:
        pyr, fused = self.levels(x)
        g, p = self.grounding(pyr[0]), self.pixel(fused)
        boundary = F.interpolate(p[:, 3:4], size=x.shape[-2:], mode="bilinear", align_corners=False)
        out = {"centre": g[:, :N_CLASSES], "size": g[:, N_CLASSES:N_CLASSES + 2], "offset": g[:, N_CLASSES + 2:],
               "junction": p[:, :1], "junction_offset": p[:, 1:3], "boundary": boundary, "pyramid": pyr, "fused": fused}
        if coarse:
            # Deep supervision of P3-P5: the shared grounding head runs on every coarse level too, as GLIP's
            # detection head does on each FPN level. Without it no loss reaches P4's and P5's smoothing convs,
            # and the router's two coarse levels would hand on untrained features. Decoding reads P2 only.
            out["grounding_coarse"] = [self.grounding(level) for level in pyr[1:]]
        return out

    @property
    def level_channels(self) -> tuple[int, ...]:
        c = self.config["channels"]
        return (c // 2, c, c, c)

    def router_levels(self, x: torch.Tensor) -> list[torch.Tensor]:
        """The four maps handed to the router: boundary-enhanced fine map, then P3, P4, P5."""
        pyr, fused = self.levels(x)
        return [fused, pyr[1], pyr[2], pyr[3]]


class GlobalEncoder(nn.Module):
    """The same backbone and FPN, trained to regress image-level class counts only."""

    def __init__(self, widths: tuple[int, ...] = (32, 48, 96, 128), channels: int = 64, drop: float = 0.1):
        super().__init__()
        self.config = {"widths": list(widths), "channels": channels, "drop": drop}
        self.backbone = Backbone(widths)
        self.fpn = FPN(widths, channels, drop)
        self.counts = nn.Sequential(nn.Linear(2 * channels, channels), nn.ReLU(), nn.Linear(channels, N_CLASSES))

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        pyr = self.fpn(self.backbone(x))
        pooled = torch.cat([pyr[1].mean((2, 3)), pyr[3].amax((2, 3))], dim=1)
        return {"counts": self.counts(pooled), "pyramid": pyr}

    def tokens(self, x: torch.Tensor, grid: int) -> torch.Tensor:
        return to_tokens(self.fpn(self.backbone(x))[1], grid)


def to_tokens(x: torch.Tensor, grid: int) -> torch.Tensor:
    """A map resized to ``grid`` x ``grid`` (area pooling down, bilinear up) and flattened to (N, T, C)."""
    if x.shape[-1] >= grid:
        x = F.adaptive_avg_pool2d(x, grid)
    else:
        x = F.interpolate(x, size=(grid, grid), mode="bilinear", align_corners=False)
    return x.flatten(2).transpose(1, 2)


class Standardise(nn.Module):
    """Per-channel (x - mean) / std with statistics of the training features (identity until ``fit``): the two
    encoders' frozen features have different scales, and the router and probe should see comparable inputs."""

    def __init__(self, channels: int):
        super().__init__()
        self.register_buffer("mean", torch.zeros(channels))
        self.register_buffer("std", torch.ones(channels))

    @torch.no_grad()
    def fit(self, tokens: torch.Tensor) -> None:
        flat = tokens.reshape(-1, tokens.shape[-1]).double()
        self.mean.copy_(flat.mean(0))
        self.std.copy_(flat.std(0).clamp(min=1e-4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.mean) / self.std


GATE_BIAS_INIT = 2.0


class Router(nn.Module):
    """Soft selection of pyramid levels per image (and question, see ``forward``)."""

    def __init__(self, level_channels: tuple[int, ...], width: int, mode: str = "on", concat: str = "channel"):
        super().__init__()
        self.mode, self.concat, self.n_levels = mode, concat, len(level_channels)
        self.norm_q = Standardise(width)
        self.norm_levels = nn.ModuleList([Standardise(c) for c in level_channels])
        self.mlps = nn.ModuleList([nn.Sequential(nn.Linear(c, width), nn.GELU(), nn.Linear(width, width),
                                                 nn.LayerNorm(width)) for c in level_channels])
        self.w = nn.ModuleList([nn.Linear(c, width) for c in level_channels])
        self.ln_q, self.ln_f = nn.LayerNorm(width), nn.LayerNorm(width)
        self.gate = nn.Sequential(nn.Linear(2 * width, width), nn.GELU(), nn.Linear(width, 1))
        # Gates start near 1 (sigmoid(2) = 0.88), i.e. near the equal-weights baseline (every level at 1), and learn
        # to lower levels from there. At a zero bias every level starts at 0.5, half the scale the probe sees with
        # equal weights, and the probe could take over twice the epochs to pick up a level's located features.
        nn.init.constant_(self.gate[-1].bias, GATE_BIAS_INIT)

    def out_width(self, width: int) -> int:
        return width * (1 + self.n_levels) if self.mode != "global-only" and self.concat == "channel" else width

    def fit_standardisation(self, q: torch.Tensor, levels: list[torch.Tensor]) -> None:
        """Set the per-channel input statistics from training tokens (N, T, C)."""
        self.norm_q.fit(q)
        for norm, f in zip(self.norm_levels, levels, strict=True):
            norm.fit(f)

    def _standardised(self, q: torch.Tensor, levels: list[torch.Tensor]) -> tuple:
        return self.norm_q(q), [norm(f) for norm, f in zip(self.norm_levels, levels, strict=True)]

    def weights(self, q: torch.Tensor, levels: list[torch.Tensor], context: torch.Tensor | None = None) -> torch.Tensor:
        """(N, L) level weights. ``context`` (a question embedding) is added to mean(Q): the probe answers one
        question per pass, so the router can weight levels by question type (the paper's sees the image only)."""
        return self._gates(*self._standardised(q, levels), context)

    def _gates(self, q: torch.Tensor, levels: list[torch.Tensor], context: torch.Tensor | None) -> torch.Tensor:
        mq = q.mean(1) if context is None else q.mean(1) + context
        gates = [self.gate(torch.cat([self.ln_q(mq), self.ln_f(w(f.mean(1)))], dim=1)) for w, f in zip(self.w, levels, strict=True)]
        return torch.sigmoid(torch.cat(gates, dim=1))

    def forward(self, q: torch.Tensor, levels: list[torch.Tensor], context: torch.Tensor | None = None) -> tuple:
        q, levels = self._standardised(q, levels)
        if self.mode == "global-only":
            return q, q.new_zeros(q.shape[0], self.n_levels)
        if self.mode == "equal":
            w = q.new_ones(q.shape[0], self.n_levels)
        else:
            w = self._gates(q, levels, context)
        routed = [w[:, i, None, None] * mlp(f) for i, (mlp, f) in enumerate(zip(self.mlps, levels, strict=True))]
        return torch.cat([q] + routed, dim=2 if self.concat == "channel" else 1), w


def question_features(qtype: torch.Tensor, qclass: torch.Tensor, points: torch.Tensor, values: torch.Tensor,
                      size: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(question vector (N, 4 + 5 + 8 + 4), option vectors (N, 4, 2 + 1 + 4), anchors (N, 4, 2, 3)) from the
    question arrays. Anchors are the points each option's answer hangs on, in [-1, 1], with a validity flag:
    the option's own point ("which point is the centre"), else the question's first two points (P of "is P
    on a line", the two segments of "parallel"); counting questions have none."""
    have = (points[..., 0] >= 0).float()
    pts = torch.where(have[..., None] > 0, points / (size - 1) * 2 - 1, torch.zeros_like(points))
    cls = torch.where(qclass >= 0, qclass, torch.zeros_like(qclass))
    qvec = torch.cat([F.one_hot(qtype, N_QTYPES).float(), F.one_hot(cls, N_CLASSES).float() * (qclass >= 0).float()[:, None],
                      pts.flatten(1), values / 10.0], dim=1)
    eye = torch.eye(N_OPTIONS, device=points.device).expand(points.shape[0], -1, -1)
    is_centre = (qtype == 2).float()[:, None, None]
    opt = torch.cat([pts * is_centre, (values / 10.0)[..., None], eye], dim=2)
    located = torch.cat([pts, have[..., None]], dim=2)                                   # (N, 4, 3)
    own = torch.stack([located, torch.zeros_like(located)], dim=2)                       # (N, 4, 2, 3)
    shared = located[:, None, :2].expand(-1, N_OPTIONS, -1, -1)
    anchors = torch.where(is_centre[..., None] > 0, own, shared)
    return qvec, opt, anchors


def cell_centres(grid: int, n_tokens: int, device: torch.device) -> torch.Tensor:
    """(n_tokens, 2) x, y in [-1, 1] of the token cells, repeated for each grid x grid block (sequence concat)."""
    c = (torch.arange(grid, device=device, dtype=torch.float32) + 0.5) / grid * 2 - 1
    ys, xs = torch.meshgrid(c, c, indexing="ij")
    return torch.stack([xs.reshape(-1), ys.reshape(-1)], 1).repeat(n_tokens // (grid * grid), 1)


class Probe(nn.Module):
    """The LLM stand-in. Per-option queries pool the routed tokens by attention; located reads pool them with
    a Gaussian kernel (width ``sigma`` cells, learned) around each anchor point, so an answer about a point
    reads the features there (an LLM gets the point's letter; the probe cannot read letters)."""

    def __init__(self, token_width: int, width: int, n_tokens: int, grid: int, heads: int = 4):
        super().__init__()
        self.grid = grid
        self.inp = nn.Linear(token_width, width)
        self.pos = nn.Parameter(torch.zeros(n_tokens, width))
        nn.init.normal_(self.pos, std=0.02)
        self.question = nn.Sequential(nn.Linear(N_QTYPES + N_CLASSES + 2 * N_OPTIONS + N_OPTIONS, width), nn.GELU(),
                                      nn.Linear(width, width))
        self.option = nn.Linear(2 + 1 + N_OPTIONS, width)
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.log_sigma = nn.Parameter(torch.zeros(()))
        self.score = nn.Sequential(nn.Linear(4 * width, width), nn.GELU(), nn.Linear(width, 1))

    def embed_question(self, qvec: torch.Tensor) -> torch.Tensor:
        return self.question(qvec)

    def located_reads(self, values: torch.Tensor, anchors: torch.Tensor) -> torch.Tensor:
        """(N, 4, 2, C): softmax(-|x_t - a|^2 / 2 sigma^2)-weighted tokens around each anchor, 0 where none."""
        cells = cell_centres(self.grid, values.shape[1], values.device)
        sigma = torch.exp(self.log_sigma) * 2.0 / self.grid
        d2 = ((anchors[..., None, :2] - cells) ** 2).sum(-1)                             # (N, 4, 2, T)
        kernel = torch.softmax(-d2 / (2 * sigma**2), dim=-1)
        reads = torch.einsum("noat,ntc->noac", kernel, values)
        return reads * anchors[..., 2:3]

    def forward(self, tokens: torch.Tensor, qemb: torch.Tensor, opt: torch.Tensor, n_options: torch.Tensor,
                anchors: torch.Tensor) -> torch.Tensor:
        values = self.inp(tokens)
        kv = values + self.pos[: tokens.shape[1]]
        queries = qemb[:, None, :] + self.option(opt)
        pooled, _ = self.attn(queries, kv, kv, need_weights=False)
        reads = self.located_reads(values, anchors).flatten(2)
        logits = self.score(torch.cat([pooled, queries, reads], dim=2)).squeeze(2)
        valid = torch.arange(N_OPTIONS, device=logits.device)[None, :] < n_options[:, None]
        return logits.masked_fill(~valid, float("-inf"))
