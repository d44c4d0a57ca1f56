"""Sparse-attention indices and their online builders (MMInference §3–4; MInference 1.0 §3.2).

One format serves every pattern. Attention is computed in a *permuted* order: query slot ``a`` holds the
token at original position ``q_perm[a]`` and key slot ``b`` the token at ``k_perm[b]``. Slots are cut into
blocks of ``block_size``; each query block lists the key blocks it visits (``block_idx``/``block_cnt``,
dense tiles) and extra key columns, given by original position (``col_idx``/``col_cnt``, gathered one by
one). The causal mask always comes from the original positions, and outputs are written back to them,
so a permutation is never materialised. With identity permutations this is MInference's vertical-slash
/ block-sparse layout; the Grid pattern and the modality boundaries only change the permutations.

Builders return one head's :class:`HeadIndex`; :func:`stack_heads` pads them into a :class:`SparseIndex`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from paperkit.core.errors import InputError

LAST_Q = 64  # queries used to estimate vertical/slash/grid scores, as in MInference
FP32_LIMIT = math.sqrt(torch.finfo(torch.float32).max)  # ≈ 1.8e19: a product of two such values still fits
SCORE_LIMIT = torch.finfo(torch.float32).max / 16  # logits this large leave room for the softmax's sums


@dataclass
class HeadIndex:
    """One head: permutations, a [n_blocks, n_blocks] bool tile mask in slot space, global extra columns."""

    q_perm: torch.Tensor
    k_perm: torch.Tensor
    blocks: torch.Tensor
    columns: torch.Tensor  # original key positions gathered for every query block (deduplicated per block)
    pattern: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class SparseIndex:
    """Padded per-head index (see module docstring). Tensors live on the device of the attention inputs."""

    n: int
    block_size: int
    q_perm: torch.Tensor  # [H, N] int64
    k_perm: torch.Tensor  # [H, N] int64
    block_idx: torch.Tensor  # [H, n_blocks, max_blocks] int32, valid first
    block_cnt: torch.Tensor  # [H, n_blocks] int32
    col_idx: torch.Tensor  # [H, n_blocks, max_cols] int32, original key positions, valid first
    col_cnt: torch.Tensor  # [H, n_blocks] int32
    patterns: list[str]
    params: list[dict[str, Any]]

    @property
    def heads(self) -> int:
        return int(self.q_perm.shape[0])

    @property
    def n_blocks(self) -> int:
        return int(self.block_cnt.shape[1])

    def to(self, device: Any) -> SparseIndex:
        t = {k: getattr(self, k).to(device) for k in ("q_perm", "k_perm", "block_idx", "block_cnt", "col_idx",
                                                       "col_cnt")}
        return SparseIndex(self.n, self.block_size, patterns=self.patterns, params=self.params, **t)


# ----------------------------------------------------------------------------------------------- helpers

def n_blocks(n: int, block_size: int) -> int:
    return -(-n // block_size)


def identity(n: int, device: Any = "cpu") -> torch.Tensor:
    return torch.arange(n, device=device)


def _slot_positions(perm: torch.Tensor, block_size: int) -> torch.Tensor:
    """[n_blocks, block_size] original positions per slot block, padded with -1."""
    n = perm.numel()
    nb = n_blocks(n, block_size)
    out = torch.full((nb * block_size,), -1, dtype=torch.long, device=perm.device)
    out[:n] = perm
    return out.view(nb, block_size)


def block_ranges(perm: torch.Tensor, block_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Min and max original position inside each slot block."""
    pos = _slot_positions(perm, block_size)
    big = torch.iinfo(torch.long).max
    return torch.where(pos < 0, big, pos).amin(1), pos.amax(1)


def causal_block_mask(q_perm: torch.Tensor, k_perm: torch.Tensor, block_size: int) -> torch.Tensor:
    """Tiles that hold at least one causal (query position ≥ key position) pair."""
    _, qmax = block_ranges(q_perm, block_size)
    kmin, _ = block_ranges(k_perm, block_size)
    return qmax[:, None] >= kmin[None, :]


def own_blocks(q_perm: torch.Tensor, k_perm: torch.Tensor, block_size: int) -> torch.Tensor:
    """Tiles holding some query's own key (the diagonal of the original matrix), as a bool tile mask."""
    n = q_perm.numel()
    nb = n_blocks(n, block_size)
    inv_k = torch.empty_like(k_perm)
    inv_k[k_perm] = torch.arange(n, device=k_perm.device)
    qb = torch.arange(n, device=q_perm.device) // block_size
    kb = inv_k[q_perm] // block_size
    mask = torch.zeros(nb, nb, dtype=torch.bool, device=q_perm.device)
    mask[qb, kb] = True
    return mask


def check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, block_size: int | None = None) -> None:
    """InputError for shapes/dtypes the operator cannot take: [H, N, D] each, same dtype, finite values in
    fp32's range (see :func:`check_magnitude`, :func:`check_scores`)."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise InputError(f"{name} is a {type(t).__name__}; expected a torch tensor")
        if t.dim() != 3:
            raise InputError(f"{name} has shape {tuple(t.shape)}; expected [heads, tokens, dim]")
        if not t.dtype.is_floating_point:
            raise InputError(f"{name} has dtype {t.dtype}; expected a floating-point dtype")
    if not (q.shape == k.shape == v.shape):
        raise InputError(f"q, k, v shapes differ: {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}; "
                         "expected the same [heads, tokens, dim]")
    if not (q.dtype == k.dtype == v.dtype):
        raise InputError(f"q, k, v dtypes differ: {q.dtype}, {k.dtype}, {v.dtype}; expected one dtype")
    if block_size is not None and q.shape[1] < block_size:
        raise InputError(f"sequence has {q.shape[1]} tokens, fewer than one block ({block_size}); "
                         "use a smaller --block-size or dense attention")
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not bool(torch.isfinite(t).all()):
            bad = int((~torch.isfinite(t)).sum())
            raise InputError(f"{name} has {bad} non-finite value(s) (NaN or inf); expected finite numbers")
        check_magnitude(t, name)
    check_scores(q, k)


def _max_abs(t: torch.Tensor) -> float:
    return max(abs(float(t.max())), abs(float(t.min()))) if t.numel() else 0.0  # no |t| copy


def check_magnitude(t: torch.Tensor, key: str, source: str = "") -> None:
    """InputError when values are too large to compute attention with in fp32 (the operator's precision):
    |x| beyond √(fp32 max) would overflow a product (e.g. 1e308 in a float64 file)."""
    big = _max_abs(t)
    if big > FP32_LIMIT:
        prefix = f"{source}: " if source else ""
        raise InputError(f"{prefix}{key} holds a value of magnitude {big:.3g}, too large to compute attention with "
                         f"in float32 (limit {FP32_LIMIT:.3g}); rescale the tensors")


def check_scores(q: torch.Tensor, k: torch.Tensor, source: str = "") -> None:
    """InputError when some q·k/√D could overflow fp32: its bound max|q| · max|k| · √D beyond fp32's range."""
    bound = _max_abs(q) * _max_abs(k) * math.sqrt(q.shape[-1])
    if not bound < SCORE_LIMIT:
        prefix = f"{source}: " if source else ""
        raise InputError(f"{prefix}q·k/√D can reach {bound:.3g}, beyond what float32 scores can hold "
                         f"({SCORE_LIMIT:.3g}); rescale q and k")


# --------------------------------------------------------------------------------------- estimation

def last_query_attention(q: torch.Tensor, k: torch.Tensor, last: int = LAST_Q) -> torch.Tensor:
    """Softmax of the last ``last`` queries against all keys (causal), fp32: [last, N]. One head."""
    n, d = k.shape
    last = min(last, n)
    qs = q[n - last:].float()
    s = (qs @ k.float().T) / math.sqrt(d)
    rows = torch.arange(n - last, n, device=q.device)
    s = s.masked_fill(torch.arange(n, device=q.device)[None, :] > rows[:, None], float("-inf"))
    return torch.softmax(s, dim=-1)


def vs_scores(att: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Vertical (column sums) and slash (sums along diagonals j = i − o, indexed by o) scores."""
    last, n = att.shape
    vertical = att.sum(0)
    # row r (query n − last + r) adds att[r, j] to slash[n − last + r − j]; on the column-reversed rows this
    # is a shift by (last − 1 − r), read as one strided view over a left-padded copy (no [last, N] indices)
    padded = torch.nn.functional.pad(att.flip(1), (last, 0)).contiguous()
    shifted = padded.view(-1).as_strided((last, n), (n + last - 1, 1), 2 * last - 1)
    slash = shifted.sum(0)
    return vertical, slash


# ------------------------------------------------------------------------------------------ patterns

def _columns_mask(columns: torch.Tensor, blocks: torch.Tensor, q_perm: torch.Tensor, k_perm: torch.Tensor,
                  block_size: int) -> torch.Tensor:
    """[n_blocks, n_cols] which global columns each query block still needs (not in its tiles, causal)."""
    n = k_perm.numel()
    inv_k = torch.empty_like(k_perm)
    inv_k[k_perm] = torch.arange(n, device=k_perm.device)
    col_block = inv_k[columns] // block_size
    _, qmax = block_ranges(q_perm, block_size)
    covered = blocks[:, col_block]
    return ~covered & (columns[None, :] <= qmax[:, None])


def a_shape(n: int, *, sink: int, local: int, block_size: int, device: Any = "cpu") -> HeadIndex:
    """StreamingLLM's Λ shape: the first ``sink`` keys plus a local window of ``local`` keys (block-rounded)."""
    perm = identity(n, device)
    nb = n_blocks(n, block_size)
    qb = torch.arange(nb, device=device)
    reach = -(-max(local, 1) // block_size)  # local window in whole blocks, diagonal block included
    diff = qb[:, None] - qb[None, :]
    blocks = (diff >= 0) & (diff <= reach)
    columns = torch.arange(min(sink, n), device=device)
    return HeadIndex(perm, perm, blocks, columns, "a_shape", {"sink": int(sink), "local": int(local)})


def vertical_slash(vertical: torch.Tensor, slash: torch.Tensor, *, n_vertical: int, n_slash: int, block_size: int,
                   sink: int = 30, local: int = 100) -> HeadIndex:
    """MInference's VS index: top columns and top diagonals, always with the ``sink`` first columns and the
    ``local`` nearest diagonals; diagonals become the tiles they cross, columns are gathered."""
    n = vertical.numel()
    device = vertical.device
    perm = identity(n, device)
    v_scores = vertical.clone()
    v_scores[: min(sink, n)] = float("inf")
    columns = torch.topk(v_scores, min(n, max(n_vertical, min(sink, n)))).indices.sort().values
    s_scores = slash.clone()
    s_scores[: min(local, n)] = float("inf")
    offsets = torch.topk(s_scores, min(n, max(n_slash, min(local, n)))).indices
    nb = n_blocks(n, block_size)
    r0 = torch.arange(nb, device=device) * block_size
    r1 = torch.clamp(r0 + block_size - 1, max=n - 1)
    c0 = r0[:, None] - offsets[None, :]
    c1 = r1[:, None] - offsets[None, :]
    hit = c1 >= 0
    rows = torch.arange(nb, device=device)[:, None].expand_as(c0)
    blocks = torch.zeros(nb, nb, dtype=torch.bool, device=device)
    blocks[rows[hit], (c0.clamp(min=0) // block_size)[hit]] = True
    blocks[rows[hit], (c1 // block_size)[hit]] = True
    blocks |= torch.eye(nb, dtype=torch.bool, device=device)
    return HeadIndex(perm, perm, blocks, columns, "vs", {"n_vertical": int(n_vertical), "n_slash": int(n_slash),
                                                          "sink": int(sink), "local": int(local)})


def pooled_block_scores(q: torch.Tensor, k: torch.Tensor, q_perm: torch.Tensor, k_perm: torch.Tensor,
                        block_size: int) -> torch.Tensor:
    """Softmax over key blocks of mean-pooled q·k in slot order, causal tiles only: [n_blocks, n_blocks]."""
    n, d = q.shape
    nb = n_blocks(n, block_size)
    pad = nb * block_size - n

    def pool(x: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
        xs = x[perm].float()
        if pad:
            xs = torch.cat([xs, xs[-1:].expand(pad, d)])  # repeat the last token: a mean, not a zero-diluted one
        return xs.view(nb, block_size, d).mean(1)

    s = pool(q, q_perm) @ pool(k, k_perm).T / math.sqrt(d)
    s = s.masked_fill(~causal_block_mask(q_perm, k_perm, block_size), float("-inf"))
    return torch.softmax(s, dim=-1)


def top_blocks(scores: torch.Tensor, fraction: float, forced: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Per query block, the ``ceil(fraction · #valid tiles)`` best tiles, plus the forced ones."""
    nb = scores.shape[0]
    counts = valid.sum(1)
    k = torch.clamp(torch.ceil(fraction * counts.float()).long(), min=1)
    kmax = int(k.max())
    order = torch.topk(scores.masked_fill(~valid, -1.0), min(kmax, nb), dim=1).indices
    take = torch.arange(order.shape[1], device=scores.device)[None, :] < k[:, None]
    mask = torch.zeros_like(valid)
    rows = torch.arange(nb, device=scores.device)[:, None].expand_as(order)
    mask[rows[take], order[take]] = True
    return (mask | forced) & valid


def block_sparse(q: torch.Tensor, k: torch.Tensor, *, fraction: float, block_size: int, sink: int = 1,
                 q_perm: torch.Tensor | None = None, k_perm: torch.Tensor | None = None,
                 pattern: str = "block", params: dict[str, Any] | None = None,
                 cache: dict[str, Any] | None = None) -> HeadIndex:
    """Top tiles per query block by mean-pooled scores, in the given slot order (identity: plain block-sparse).

    ``cache`` (a dict) keeps the pooled scores between calls that only change ``fraction``.
    """
    n = q.shape[0]
    q_perm = identity(n, q.device) if q_perm is None else q_perm
    k_perm = identity(n, q.device) if k_perm is None else k_perm
    cache = {} if cache is None else cache
    if "scores" not in cache:
        cache["scores"] = pooled_block_scores(q, k, q_perm, k_perm, block_size)
        cache["valid"] = causal_block_mask(q_perm, k_perm, block_size)
        cache["own"] = own_blocks(q_perm, k_perm, block_size)
    blocks = top_blocks(cache["scores"], fraction, cache["own"], cache["valid"])
    columns = torch.arange(min(sink, n), device=q.device)
    return HeadIndex(q_perm, k_perm, blocks, columns, pattern, {"fraction": float(fraction), "sink": int(sink),
                                                                **(params or {})})


# ------------------------------------------------------------------------------------------------ grid

def estimate_grid(vertical: torch.Tensor, slash: torch.Tensor, *, strides: list[int] | None = None, sink: int = 4,
                  min_stride: int = 4, max_stride: int | None = None, tolerance: float = 0.95) -> dict[str, Any]:
    """Stride s and phase φ of a grid head from last-query scores.

    Attention on a grid puts mass on diagonals i − j ≡ 0 (mod s) (same patch, other frames) and on columns
    j ≡ φ (mod s). For each candidate s the score is the excess over a structureless (smooth) profile:
    the mass on those diagonals/columns minus 1/s of the total. Divisors of s score almost as high as s
    and multiples lower, so the largest stride within ``tolerance`` of the best score wins.
    """
    n = vertical.numel()
    sl = slash[1:].double()  # offset 0 is every head's diagonal, not evidence of a stride
    col = vertical.double().clone()
    col[: min(sink, n)] = 0.0  # sinks would make every stride look periodic
    sl_total, col_total = float(sl.sum()), float(col.sum())
    if strides is None:
        hi = max_stride or max(min_stride, n // 4)
        strides = list(range(min_stride, min(hi, n // 2) + 1))
    best = []
    for s in strides:
        if s < 2 or s >= n:
            continue
        # a grid repeats: drop the two largest terms so one strong diagonal or column is not a "stride"
        diag = _trimmed(sl[s - 1::s]) - sl_total / s
        pad = (-n) % s
        per_phase = torch.cat([col, col.new_zeros(pad)]).view(-1, s)
        phase = int(per_phase.sum(0).argmax())
        colx = _trimmed(per_phase[:, phase]) - col_total / s
        best.append((diag + colx, s, phase))
    if not best:
        return {"stride": 0, "phase": 0, "score": 0.0}
    top = max(b[0] for b in best)
    if top <= 0:  # nothing periodic above a smooth profile
        return {"stride": 0, "phase": 0, "score": float(top)}
    score, stride, phase = max((b for b in best if b[0] >= tolerance * top), key=lambda b: b[1])
    return {"stride": int(stride), "phase": int(phase), "score": float(score)}


def _trimmed(terms: torch.Tensor, drop: int = 2) -> float:
    if terms.numel() <= drop:
        return 0.0
    return float(terms.sum() - torch.topk(terms, drop).values.sum())


def grid_permutation(n: int, stride: int, phase: int, device: Any = "cpu") -> torch.Tensor:
    """Slots ordered by ((j − φ) mod s, (j − φ) div s): each stripe of the grid becomes contiguous."""
    j = torch.arange(n, device=device)
    key = torch.remainder(j - phase, stride) * (n + stride) + torch.div(j - phase, stride, rounding_mode="floor")
    return torch.argsort(key)


def grid(q: torch.Tensor, k: torch.Tensor, *, stride: int, phase: int, fraction: float, block_size: int,
         sink: int = 1, cache: dict[str, Any] | None = None) -> HeadIndex:
    """Grid pattern: block-sparse selection in the grid permutation (stripes dense), causal from positions."""
    cache = {} if cache is None else cache
    if "perm" not in cache:
        cache["perm"] = grid_permutation(q.shape[0], stride, phase, q.device)
    perm = cache["perm"]
    return block_sparse(q, k, fraction=fraction, block_size=block_size, sink=sink, q_perm=perm, k_perm=perm,
                        pattern="grid", params={"stride": int(stride), "phase": int(phase)}, cache=cache)


# ---------------------------------------------------------------------------------------- boundaries

def modality_permutation(modality: torch.Tensor, stride: int = 0, phase: int = 0) -> torch.Tensor:
    """Tokens grouped by modality code, in order; with ``stride`` > 0 the vision (code 1) tokens are then
    grid-ordered by their rank *among vision tokens*, so text segments between frames do not break the stride."""
    n = modality.numel()
    mod = modality.long()
    key = torch.empty(n, dtype=torch.long, device=modality.device)
    for code in torch.unique(mod).tolist():
        where = torch.nonzero(mod == code).flatten()
        rank = torch.arange(where.numel(), device=modality.device)
        if stride > 0 and code == 1:
            rank = torch.remainder(rank - phase, stride) * (n + stride) + torch.div(rank - phase, stride,
                                                                                     rounding_mode="floor")
        key[where] = rank
    return torch.argsort(mod * (4 * n * n + 1) + key)


def boundary(q: torch.Tensor, k: torch.Tensor, modality: torch.Tensor, *, kind: str, fraction: float,
             block_size: int, sink: int = 1, stride: int = 0, phase: int = 0,
             cache: dict[str, Any] | None = None) -> HeadIndex:
    """Q-boundary (rows grouped by modality) or 2D-boundary (rows and columns grouped) selection.

    After grouping, each (query-modality, key-modality) sub-matrix is a contiguous rectangle of tiles, so
    every query block belongs to one modality and picks its own tiles in each sub-matrix by pooled score:
    a pattern per modality pair instead of one compromise for mixed blocks. With ``stride`` > 0 the vision
    tokens are ordered by the grid permutation inside their group (vision–vision grid).
    """
    n = q.shape[0]
    grouped = modality_permutation(modality.to(q.device), stride, phase)
    if kind == "q_boundary":
        q_perm, k_perm = grouped, identity(n, q.device)
    elif kind == "2d_boundary":
        q_perm = k_perm = grouped
    else:
        raise InputError(f"unknown boundary kind '{kind}'; expected q_boundary or 2d_boundary")
    return block_sparse(q, k, fraction=fraction, block_size=block_size, sink=sink, q_perm=q_perm, k_perm=k_perm,
                        pattern=kind, params={"stride": int(stride), "phase": int(phase)}, cache=cache)


def full(n: int, block_size: int, device: Any = "cpu") -> HeadIndex:
    """Every causal tile: the sparse operator then computes dense causal attention."""
    perm = identity(n, device)
    return HeadIndex(perm, perm, causal_block_mask(perm, perm, block_size), perm[:0], "dense", {})


# ------------------------------------------------------------------------------------------- packing

def stack_heads(heads: list[HeadIndex], block_size: int) -> SparseIndex:
    """Pad per-head indices into the kernel layout (valid entries first, counts alongside)."""
    if not heads:
        raise InputError("no heads to index")
    n = heads[0].q_perm.numel()
    device = heads[0].q_perm.device
    nb = n_blocks(n, block_size)
    b_lists, c_lists = [], []
    for h in heads:
        bl = h.blocks
        order = torch.sort((~bl).to(torch.int8), dim=1, stable=True).indices  # valid tiles first, ascending
        b_lists.append((order, bl.sum(1)))
        if h.columns.numel():
            need = _columns_mask(h.columns, bl, h.q_perm, h.k_perm, block_size)
            corder = torch.sort((~need).to(torch.int8), dim=1, stable=True).indices
            c_lists.append((h.columns[corder], need.sum(1)))
        else:
            c_lists.append((torch.zeros(nb, 0, dtype=torch.long, device=device), torch.zeros(nb, dtype=torch.long,
                                                                                            device=device)))
    max_b = max(1, max(int(c.max()) for _, c in b_lists))
    max_c = max(1, max(int(c.max()) if c.numel() else 0 for _, c in c_lists))
    H = len(heads)
    block_idx = torch.zeros(H, nb, max_b, dtype=torch.int32, device=device)
    col_idx = torch.zeros(H, nb, max_c, dtype=torch.int32, device=device)
    block_cnt = torch.zeros(H, nb, dtype=torch.int32, device=device)
    col_cnt = torch.zeros(H, nb, dtype=torch.int32, device=device)
    for i, ((bo, bc), (co, cc)) in enumerate(zip(b_lists, c_lists, strict=True)):
        block_idx[i, :, : min(max_b, bo.shape[1])] = bo[:, :max_b].int()
        block_cnt[i] = bc.int()
        if co.shape[1]:
            col_idx[i, :, : min(max_c, co.shape[1])] = co[:, :max_c].int()
        col_cnt[i] = cc.int()
    return SparseIndex(n, block_size, torch.stack([h.q_perm for h in heads]), torch.stack([h.k_perm for h in heads]),
                       block_idx, block_cnt, col_idx, col_cnt, [h.pattern for h in heads], [h.params for h in heads])


# ------------------------------------------------------------------------------------- accounting

def gathered_keys(index: SparseIndex, head: int) -> tuple[torch.Tensor, torch.Tensor]:
    """[n_blocks, width] original key positions each query block reads, and which entries are real."""
    bs = index.block_size
    n = index.n
    bidx = index.block_idx[head].long()
    slots = bidx[:, :, None] * bs + torch.arange(bs, device=bidx.device)
    bvalid = (torch.arange(bidx.shape[1], device=bidx.device)[None, :] < index.block_cnt[head, :, None])
    bvalid = bvalid[:, :, None] & (slots < n)
    kpos = index.k_perm[head][slots.clamp(max=n - 1)]
    nb = bidx.shape[0]
    cvalid = torch.arange(index.col_idx.shape[2], device=bidx.device)[None, :] < index.col_cnt[head, :, None]
    keys = torch.cat([kpos.reshape(nb, -1), index.col_idx[head].long()], 1)
    valid = torch.cat([bvalid.reshape(nb, -1), cvalid], 1)
    return keys, valid


def density(index: SparseIndex) -> list[float]:
    """Per head: computed causal (query ≥ key) pairs over all N(N+1)/2 causal pairs."""
    n, bs = index.n, index.block_size
    total = n * (n + 1) / 2
    out = []
    for h in range(index.heads):
        keys, valid = gathered_keys(index, h)
        qpos = _slot_positions(index.q_perm[h], bs)  # [nb, bs], -1 pads
        ks = torch.where(valid, keys, torch.full_like(keys, n + 1)).sort(1).values
        counts = torch.searchsorted(ks, qpos.clamp(min=0), right=True)
        counts = torch.where(qpos >= 0, counts, torch.zeros_like(counts))
        out.append(float(counts.sum()) / total)
    return out


def tile_cost(index: SparseIndex) -> list[float]:
    """Per head: entries the kernel computes (whole tiles plus gathered columns) over N(N+1)/2."""
    n, bs = index.n, index.block_size
    total = n * (n + 1) / 2
    return [float(index.block_cnt[h].sum() * bs * bs + index.col_cnt[h].sum() * bs) / total
            for h in range(index.heads)]


def dense_mask(index: SparseIndex, head: int) -> torch.Tensor:
    """[N, N] bool of computed (query, key) pairs in original positions: for tests and mask plots."""
    n, bs = index.n, index.block_size
    keys, valid = gathered_keys(index, head)
    qpos = _slot_positions(index.q_perm[head], bs)
    mask = torch.zeros(n, n, dtype=torch.bool, device=keys.device)
    nb, width = keys.shape
    rows = qpos[:, :, None].expand(nb, bs, width)
    cols = keys[:, None, :].expand(nb, bs, width)
    ok = valid[:, None, :].expand(nb, bs, width) & (rows >= 0)
    mask[rows[ok], cols[ok]] = True
    return mask & torch.ones(n, n, dtype=torch.bool, device=keys.device).tril()
