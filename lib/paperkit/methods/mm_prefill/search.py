"""Offline, kernel-aware per-head pattern search (MMInference §3.3) and budget-driven online building.

Every candidate pattern is built *online* from the head's own q, k (last-query scores, pooled block
scores, estimated grid stride) at a matched cost: its size parameter is bisected until the density of
computed causal pairs meets the budget. Candidates are then scored by the attention-mass recall of dense
attention on a sample of query blocks, and the best one is kept per (layer, head); near-ties go to the
simpler pattern (a_shape < vs < block < grid < boundaries). The result is JSON:
``{"layers": {"0": {"0": {"pattern": "vs", "params": {...}, "score": 0.97, "density": 0.05}}}}``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from paperkit.core.errors import InputError
from paperkit.methods.mm_prefill import index as sparse_index
from paperkit.methods.mm_prefill.attention import dense_attention, recall_from_lse, sparse_prefill_torch

PATTERNS = ("a_shape", "vs", "block", "grid", "q_boundary", "2d_boundary")
SIMPLICITY = {name: i for i, name in enumerate(PATTERNS)}
FORMAT_VERSION = 1
MAX_STRIDE = 10**9


@dataclass
class HeadStats:
    """What a head's online builders share: last-query scores and the grid estimate."""

    vertical: torch.Tensor
    slash: torch.Tensor
    grid: dict[str, Any]


def head_stats(q: torch.Tensor, k: torch.Tensor, *, strides: list[int] | None = None,
               max_stride: int | None = None, grid: bool = True) -> HeadStats:
    att = sparse_index.last_query_attention(q, k)
    vertical, slash = sparse_index.vs_scores(att)
    est = sparse_index.estimate_grid(vertical, slash, strides=strides, max_stride=max_stride) if grid else {}
    return HeadStats(vertical, slash, est)


def _bisect(make: Callable[[float], sparse_index.HeadIndex], target: float, block_size: int, steps: int = 12) -> sparse_index.HeadIndex:
    """The largest size t in (0, 1] whose index has density ≤ target (or the smallest one if none does)."""
    lo, hi = 0.0, 1.0
    best = None
    for _ in range(steps):
        mid = (lo + hi) / 2
        idx = make(mid)
        d = sparse_index.density(sparse_index.stack_heads([idx], block_size))[0]
        if d <= target:
            best, lo = idx, mid
        else:
            hi = mid
    return best if best is not None else make(lo)


def build_head(pattern: str, q: torch.Tensor, k: torch.Tensor, *, density: float | None = None,
               params: dict[str, Any] | None = None, block_size: int = 64, stats: HeadStats | None = None,
               modality: torch.Tensor | None = None, sink: int = 4, local: int | None = None) -> sparse_index.HeadIndex:
    """One head's index for ``pattern``: from explicit ``params`` (a saved search result) or sized to
    ``density`` (fraction of causal pairs)."""
    n = q.shape[0]
    params = dict(params or {})
    local = min(100, max(16, n // 128)) if local is None else local
    if pattern not in PATTERNS + ("dense",):
        raise InputError(f"unknown pattern '{pattern}'; expected one of {', '.join(PATTERNS)} or dense")
    if pattern == "dense":
        return sparse_index.full(n, block_size, q.device)
    if pattern in ("q_boundary", "2d_boundary") and modality is None:
        raise InputError(f"pattern '{pattern}' needs the tokens' modality (a 'modality' array beside q, k, v)")
    need_grid = pattern in ("grid", "2d_boundary") and "stride" not in params
    if pattern == "2d_boundary" and need_grid:
        # the grid lives in the vision stream: text between frames breaks the stride in raw positions
        vision = torch.nonzero(modality.to(q.device) == 1).flatten()
        if vision.numel() >= 2 * sparse_index.LAST_Q:
            est = head_stats(q[vision], k[vision]).grid
            params.setdefault("stride", est["stride"])
            params.setdefault("phase", est["phase"])
        need_grid = False
    if (need_grid or pattern == "vs") and stats is None:
        stats = head_stats(q, k, grid=need_grid)

    split = {"share": 0.3}  # VS: fraction of the budget given to columns
    cache: dict[str, Any] = {}  # pooled scores and permutations: only the size changes between calls

    def make(t: float) -> sparse_index.HeadIndex:
        if pattern == "a_shape":
            return sparse_index.a_shape(n, sink=params.get("sink", sink), local=params.get("local", max(1, round(t * n))),
                             block_size=block_size, device=q.device)
        if pattern == "vs":
            # `share` of the budget on columns (one key per row each), the rest on diagonals (tiles)
            nv = params.get("n_vertical", max(sink, round(t * n * split["share"])))
            ns = params.get("n_slash", max(local, round(t * n * (1 - split["share"]) / block_size)))
            return sparse_index.vertical_slash(stats.vertical, stats.slash, n_vertical=nv, n_slash=ns, block_size=block_size,
                                    sink=params.get("sink", sink), local=params.get("local", local))
        fraction = params.get("fraction", t)
        if pattern == "block":
            return sparse_index.block_sparse(q, k, fraction=fraction, block_size=block_size, sink=params.get("sink", sink),
                                  cache=cache)
        if pattern == "grid":
            stride = params.get("stride", stats.grid["stride"] if stats else 0)
            phase = params.get("phase", stats.grid["phase"] if stats else 0)
            if stride < 2:
                stride, phase = 1, 0
            return sparse_index.grid(q, k, stride=stride, phase=phase, fraction=fraction, block_size=block_size,
                          sink=params.get("sink", sink), cache=cache)
        stride = params.get("stride", 0)
        return sparse_index.boundary(q, k, modality, kind=pattern, fraction=fraction, block_size=block_size,
                          sink=params.get("sink", sink), stride=stride if stride >= 2 else 0,
                          phase=params.get("phase", 0), cache=cache)

    sized = {"a_shape": "local", "vs": "n_vertical"}.get(pattern, "fraction")
    if sized in params or density is None:
        if density is None and sized not in params:
            raise InputError(f"pattern '{pattern}' needs a density budget or its '{sized}' parameter")
        return make(1.0)
    if pattern != "vs":
        return _bisect(make, density, block_size)
    # split the VS budget between columns and diagonals by the last-query mass each split keeps
    best, best_mass = None, -1.0
    for share in (0.05, 0.15, 0.3, 0.5):
        split["share"] = share
        idx = _bisect(make, density, block_size)
        nv, ns = idx.params["n_vertical"], idx.params["n_slash"]
        mass = float(torch.topk(stats.vertical, min(n, nv)).values.sum() + torch.topk(stats.slash, min(n, ns)).values.sum())
        if mass > best_mass:
            best, best_mass = idx, mass
    return best


def search_head(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, density: float, block_size: int = 64,
                patterns: tuple[str, ...] = ("a_shape", "vs", "block", "grid"), modality: torch.Tensor | None = None,
                sample_blocks: int | None = 32, tie: float = 0.01, seed: int = 0,
                strides: list[int] | None = None) -> dict[str, Any]:
    """Best pattern for one head at a matched density; returns the JSON entry plus every candidate's score."""
    n = q.shape[0]
    stats = head_stats(q, k, strides=strides)
    nb = sparse_index.n_blocks(n, block_size)
    cands = []
    for name in patterns:
        if name in ("q_boundary", "2d_boundary") and (modality is None or modality.min() == modality.max()):
            continue
        cands.append(build_head(name, q, k, density=density, block_size=block_size, stats=stats, modality=modality))
    if not cands:
        raise InputError(f"no candidate pattern applies: {', '.join(patterns)} need the tokens' modality (two or "
                         "more modalities); add a_shape, vs, block or grid")
    # sample query *rows* by original position so every candidate is scored on the same queries
    g = torch.Generator().manual_seed(seed)
    if sample_blocks and sample_blocks < nb:
        rows_blocks = torch.randperm(nb, generator=g)[:sample_blocks]
        rows = (rows_blocks[:, None] * block_size + torch.arange(block_size)).flatten()
        rows = rows[rows < n].sort().values
    else:
        rows = torch.arange(n)
    rows = rows.to(q.device)  # sampled on the CPU (same rows on every device), used where q lives
    _, dense_lse = dense_attention(q[None], k[None], v[None], rows=rows)
    results = []
    for c in cands:
        idx = sparse_index.stack_heads([c], block_size)
        inv = torch.empty_like(c.q_perm)
        inv[c.q_perm] = torch.arange(n, device=c.q_perm.device)
        qblocks = torch.unique(inv[rows] // block_size)
        _, lse = sparse_prefill_torch(q[None], k[None], v[None], idx, q_blocks=qblocks, return_lse=True)
        score = float(recall_from_lse(lse[0, rows][None], dense_lse)[0])
        results.append({"pattern": c.pattern, "params": c.params, "score": score,
                        "density": sparse_index.density(idx)[0]})
    top = max(r["score"] for r in results)
    best = min((r for r in results if r["score"] >= top - tie), key=lambda r: SIMPLICITY[r["pattern"]])
    return {**best, "candidates": {r["pattern"]: round(r["score"], 6) for r in results},
            "grid_estimate": stats.grid}


def search_layer(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, layer: int, density: float,
                 block_size: int = 64, patterns: tuple[str, ...] = ("a_shape", "vs", "block", "grid"),
                 modality: torch.Tensor | None = None, sample_blocks: int | None = 32, seed: int = 0,
                 on_head: Callable[[], None] | None = None) -> dict[str, Any]:
    """Search every head of one layer (q, k, v [H, N, D]); returns head number → entry. Head h of layer l
    samples its query blocks with seed ``seed + 1000 l + h``, so a layer's result does not depend on the others."""
    row = {}
    for h in range(q.shape[0]):
        row[str(h)] = search_head(q[h], k[h], v[h], density=density, block_size=block_size, patterns=patterns,
                                  modality=modality, sample_blocks=sample_blocks, seed=seed + 1000 * layer + h)
        if on_head:
            on_head()
    return row


def patterns_document(layers: list[dict[str, Any]], *, heads: int, tokens: int, density: float,
                      block_size: int) -> dict[str, Any]:
    """The patterns document from the per-layer results of :func:`search_layer`."""
    return {"format": "paperkit.mm_prefill.patterns", "version": FORMAT_VERSION, "heads": heads,
            "layers_count": len(layers), "block_size": block_size, "density": density, "tokens": tokens,
            "layers": {str(i): row for i, row in enumerate(layers)}}


def search_model(qs: torch.Tensor, ks: torch.Tensor, vs: torch.Tensor, *, density: float, block_size: int = 64,
                 patterns: tuple[str, ...] = ("a_shape", "vs", "block", "grid"), modality: torch.Tensor | None = None,
                 sample_blocks: int | None = 32, seed: int = 0, on_head: Callable[[], None] | None = None
                 ) -> dict[str, Any]:
    """Search every (layer, head) of [L, H, N, D] tensors; returns the patterns document."""
    L, H, n, _ = qs.shape
    rows = [search_layer(qs[layer], ks[layer], vs[layer], layer=layer, density=density, block_size=block_size,
                         patterns=patterns, modality=modality, sample_blocks=sample_blocks, seed=seed,
                         on_head=on_head) for layer in range(L)]
    return patterns_document(rows, heads=H, tokens=n, density=density, block_size=block_size)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_patterns(doc: Any, *, heads: int | None = None, layers: int | None = None, tokens: int | None = None,
                   modality: bool | None = None, source: str = "patterns") -> dict[str, Any]:
    """Validate a loaded patterns document (InputError naming ``source`` and what is wrong).

    With the tensors' sizes (``heads``, ``layers``, ``tokens``) and whether they carry a modality array, also
    check that every layer and head the run will build has an entry and that its saved parameters fit, so
    that nothing fails (or silently goes dense) after the run dir exists."""
    if not isinstance(doc, dict) or doc.get("format") != "paperkit.mm_prefill.patterns" or "layers" not in doc:
        raise InputError(f"{source}: not a mm-prefill patterns file (no format/layers keys)")
    budget = doc.get("density")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, (int, float))
                               or not math.isfinite(budget) or not 0 < budget <= 1):
        raise InputError(f"{source}: density = {budget!r}; expected a number in (0, 1]")
    bs = doc.get("block_size", 64)
    if not _whole(bs) or bs < 1:
        raise InputError(f"{source}: block_size = {bs!r}; expected a positive integer")
    for key in ("heads", "layers_count", "tokens"):
        if key in doc and (not _whole(doc[key]) or doc[key] < 1):
            raise InputError(f"{source}: {key} = {doc[key]!r}; expected a positive integer")
    rows = doc["layers"]
    if not isinstance(rows, dict) or not all(isinstance(row, dict) for row in rows.values()):
        raise InputError(f"{source}: 'layers' must map layer numbers to objects of head entries")
    if heads is not None and doc.get("heads") != heads:
        raise InputError(f"{source}: patterns are for {doc.get('heads')} heads, the tensors have {heads}")
    # the layers and heads that will be built must be there (layers_count alone is only a claim)
    for layer in range(layers or 0):
        row = rows.get(str(layer))
        if row is None:
            raise InputError(f"{source}: no patterns for layer {layer}; the tensors have {layers} layer(s), the file "
                             f"covers layer(s) {', '.join(sorted(rows, key=str)) or 'none'}")
        missing = [h for h in range(heads or 0) if str(h) not in row]
        if missing:
            raise InputError(f"{source}: layer {layer} has no entry for head {missing[0]}; the tensors have {heads} "
                             "heads")
    for lk, row in rows.items():
        for hk, entry in row.items():
            where = f"{source}: layer {lk} head {hk}"
            name = entry.get("pattern") if isinstance(entry, dict) else None
            if name not in PATTERNS + ("dense",):
                raise InputError(f"{where}: unknown pattern '{name}'; expected one of {', '.join(PATTERNS)} or dense")
            if modality is False and name in ("q_boundary", "2d_boundary"):
                raise InputError(f"{where}: pattern '{name}' needs the tokens' modality, but the input has no "
                                 "'modality' array beside q, k, v")
            params = entry.get("params", {})
            if not isinstance(params, dict):
                raise InputError(f"{where}: params = {params!r}; expected an object of parameters")
            _check_shape_params(params, where, tokens)
    return doc


def _check_shape_params(params: dict[str, Any], where: str, tokens: int | None) -> None:
    """The saved parameters an applied pattern keeps (sink, stride, phase: see index_from_patterns). A sink
    beyond the sequence makes the head silently dense; a grid stride may exceed a shorter input's length (a
    search result is reusable at other lengths), so it only gets a bound that keeps its int64 keys exact."""
    for key in ("sink", "stride", "phase"):
        if key not in params:
            continue
        value = params[key]
        top = (tokens if tokens is not None else math.inf) if key == "sink" else MAX_STRIDE
        if not _whole(value) or not 0 <= value <= top:
            span = (f"in [0, {top}]" + (" (the number of tokens)" if key == "sink" else "")
                    if top != math.inf else "≥ 0")
            raise InputError(f"{where}: params.{key} = {value!r}; expected a whole number {span}")
    stride, phase = params.get("stride", 0), params.get("phase", 0)
    if stride >= 2 and phase >= stride:
        raise InputError(f"{where}: params.phase = {phase} is not below params.stride = {stride}")


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=True)


def index_from_patterns(q: torch.Tensor, k: torch.Tensor, doc: dict[str, Any], layer: int = 0, *,
                        block_size: int | None = None, modality: torch.Tensor | None = None,
                        density: float | None = None) -> sparse_index.SparseIndex:
    """Build the online index for one layer's heads (q, k [H, N, D]) from a searched patterns document.

    Saved parameters fix the pattern's *shape* (sink, grid stride/phase); its size follows the searched
    density (or ``density`` if given), and the tiles and columns are chosen online from this input's scores.
    """
    bs = block_size or int(doc.get("block_size", 64))
    row = doc["layers"].get(str(layer))
    if row is None:
        raise InputError(f"patterns have no layer {layer}")
    heads = []
    budget = density if density is not None else float(doc.get("density", 0.1))
    for h in range(q.shape[0]):
        entry = row.get(str(h))
        if entry is None:
            raise InputError(f"patterns have no head {h} in layer {layer}")
        shape = {key: entry.get("params", {})[key] for key in ("sink", "stride", "phase")
                 if key in entry.get("params", {})}
        heads.append(build_head(entry["pattern"], q[h], k[h], density=budget, params=shape, block_size=bs,
                                modality=modality))
    return sparse_index.stack_heads(heads, bs)
