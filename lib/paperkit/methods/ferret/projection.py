"""Shared-randomness projection and reconstruction (Ferret, Shu et al. ICML 2025, Sec. 4.2–4.3).

A client's update Delta (a flat vector of d parameters, split into L contiguous blocks) is summarised
per block l by K_l coordinates gamma = V_lᵀ Delta_l / (rho_l K_l), where V_l holds K_l bases whose
entries are i.i.d. standard normal truncated to [-a_l, a_l], a_l = 1/sqrt(d_l), and rho_l is the
variance of that truncated normal. Anyone holding the seed regenerates V_l and forms
Delta_hat_l = V_l gamma_l, an unbiased estimate of Delta_l (Thm. 1) with no matrix inversion.

The bases are never stored whole: they are generated block by block, in chunks of rows whose size
depends only on d_l (so every party cuts the same chunks and draws the same numbers), and each chunk
has its own generator seeded from (seed, block, chunk). Memory is O(CHUNK_FLOATS + largest block).
Same device type ⇒ bit-identical bases (CPU and CUDA generators draw different streams).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from paperkit.core.errors import ConfigError

# Floats of bases generated at once. Changing it changes the streams, so it is a protocol constant.
CHUNK_FLOATS = 1 << 21
ALLOCATIONS = ("norm", "uniform", "dim", "prop2")
# allocations whose K_l depend on the update (the counts travel with gamma)
UPDATE_ALLOCATIONS = ("norm", "prop2")
SEED_POOLS = ("run", "per-block")
_MIX = 0x9E3779B97F4A7C15


def truncated_normal_variance(a: float) -> float:
    """rho(a) = Var of N(0,1) truncated to [-a, a] = 1 − 2a·phi(a)/(2·Phi(a) − 1).

    For small a the closed form cancels catastrophically (rho ≈ a²/3), so a series is used there.
    """
    if a <= 0:
        raise ConfigError(f"truncation bound a = {a} must be positive")
    if a < 1e-2:
        a2 = a * a
        # a²/3 − 2a⁴/45 + a⁶/315 (error O(a⁸), far below float64 rounding for a < 0.01)
        return a2 / 3.0 - 2.0 * a2 * a2 / 45.0 + a2 * a2 * a2 / 315.0
    phi = math.exp(-0.5 * a * a) / math.sqrt(2.0 * math.pi)
    mass = math.erf(a / math.sqrt(2.0))  # 2·Phi(a) − 1
    return 1.0 - 2.0 * a * phi / mass


def _mix(*parts: int) -> int:
    """A 63-bit seed from several integers (splitmix-style), so streams of different blocks never overlap."""
    h = 0
    for p in parts:
        h = (h ^ (int(p) & 0xFFFFFFFFFFFFFFFF)) * _MIX & 0xFFFFFFFFFFFFFFFF
        h ^= h >> 31
        h = h * 0xBF58476D1CE4E5B9 & 0xFFFFFFFFFFFFFFFF
        h ^= h >> 29
    return h & 0x7FFFFFFFFFFFFFFF


def derive_seed(*parts: int) -> int:
    """Public helper: a reproducible seed for (run seed, round, client, ...)."""
    return _mix(*parts)


def _rows_per_chunk(d_block: int) -> int:
    return max(1, CHUNK_FLOATS // max(1, d_block))


def _truncated_normal_rows(n_rows: int, d_block: int, a: float, gen: torch.Generator,
                           device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    """n_rows × d_block entries of N(0,1) truncated to [-a, a], by inverting the CDF.

    Sampling z = 2u − 1 uniformly in (−erf(a/√2), erf(a/√2)) and returning √2·erfinv(z) keeps full float
    resolution near 0 (sampling u near 0.5 would quantise badly when a is tiny).
    """
    bound = math.erf(a / math.sqrt(2.0))
    z = torch.empty((n_rows, d_block), device=device, dtype=dtype).uniform_(-bound, bound, generator=gen)
    return z.erfinv_().mul_(math.sqrt(2.0)).clamp_(-a, a)


def iter_bases(seed: int, block: int, d_block: int, k: int, *, device: torch.device | str = "cpu",
               dtype: torch.dtype = torch.float32, kind: str = "truncnormal"):
    """Yield (row offset, chunk) with chunk the next rows of the K × d_block basis matrix of a block.

    ``kind='truncnormal'``: Ferret's bases; ``kind='gaussian'``: standard normal (zeroth-order baselines).
    """
    device = torch.device(device)
    rows = _rows_per_chunk(d_block)
    a = 1.0 / math.sqrt(d_block)
    for c, start in enumerate(range(0, k, rows)):
        n = min(rows, k - start)
        gen = torch.Generator(device=device)
        gen.manual_seed(_mix(seed, block, c))
        if kind == "truncnormal":
            chunk = _truncated_normal_rows(n, d_block, a, gen, device, dtype)
        else:
            chunk = torch.randn((n, d_block), generator=gen, device=device, dtype=dtype)
        yield start, chunk


@dataclass(frozen=True)
class Blocks:
    """A split of a flat parameter vector into contiguous blocks: block l is [offsets[l], offsets[l+1])."""

    offsets: tuple[int, ...]

    @property
    def sizes(self) -> list[int]:
        return [b - a for a, b in zip(self.offsets[:-1], self.offsets[1:], strict=False)]

    @property
    def n_blocks(self) -> int:
        return len(self.offsets) - 1

    @property
    def dim(self) -> int:
        return self.offsets[-1]

    def slices(self) -> list[slice]:
        return [slice(a, b) for a, b in zip(self.offsets[:-1], self.offsets[1:], strict=False)]

    @classmethod
    def from_sizes(cls, sizes: Sequence[int]) -> Blocks:
        if not sizes or min(sizes) < 1:
            raise ConfigError("every block needs at least one parameter")
        return cls(tuple(int(x) for x in np.concatenate([[0], np.cumsum(sizes)])))

    @classmethod
    def equal(cls, d: int, n_blocks: int) -> Blocks:
        if not 1 <= n_blocks <= d:
            raise ConfigError(f"--blocks {n_blocks} is out of range; expected 1..{d} (the parameter count)")
        return cls.from_sizes([len(p) for p in np.array_split(np.arange(d), n_blocks)])

    @classmethod
    def from_tensor_sizes(cls, tensor_sizes: Sequence[int], rule: str = "auto") -> Blocks:
        """Blocks from a model's parameter tensors.

        ``rule='auto'`` (as the official code): runs of consecutive tensors, each run closed once its size
        exceeds 0.9 × the median tensor size. ``rule='tensor'``: one block per tensor.
        """
        sizes = [int(s) for s in tensor_sizes]
        if rule == "tensor":
            return cls.from_sizes(sizes)
        threshold = 0.9 * float(np.median(sizes))
        out, run = [], 0
        for s in sizes:
            run += s
            if run > threshold:
                out.append(run)
                run = 0
        if run:
            out.append(run)
        return cls.from_sizes(out)


def block_norms(delta: torch.Tensor, blocks: Blocks) -> np.ndarray:
    """||Delta_l|| of every block (float64)."""
    return np.array([float(torch.linalg.vector_norm(delta[s].double())) for s in blocks.slices()])


def allocate(k_total: int, blocks: Blocks, delta: torch.Tensor | None = None, how: str = "norm") -> list[int]:
    """Split the budget of K coordinates over blocks: K_l ∝ ||Delta_l|| ('norm'), d_l ('dim'), equal
    ('uniform'), or ||Delta_l|| / rho_l ('prop2': Prop. 2's optimum, rho_l the variance of the truncated normal
    of block l, rho_l = rho(1/sqrt(d_l)) ≈ 1/(3 d_l), so larger blocks get more).

    Every block gets at least one coordinate (so every block is reconstructed); the rest follows the
    weights by largest remainder, so sum K_l == K exactly. A block with a zero update gets its minimum.
    """
    if how not in ALLOCATIONS:
        raise ConfigError(f"block allocation '{how}' is unknown; expected one of {', '.join(ALLOCATIONS)}")
    L = blocks.n_blocks
    if k_total < L:
        raise ConfigError(f"K = {k_total} is smaller than the number of blocks ({L}); every block needs at "
                          "least one coordinate: raise --k or use fewer blocks")
    if how == "uniform":
        w = np.ones(L)
    elif how == "dim":
        w = np.asarray(blocks.sizes, dtype=np.float64)
    else:
        if delta is None:
            raise ConfigError(f"{how} allocation needs the update")
        w = block_norms(delta, blocks)
        if not np.isfinite(w).all():
            raise ConfigError("the local update has NaN/inf entries; lower the learning rate")
        if w.sum() == 0:
            w = np.ones(L)
        if how == "prop2":
            w = w / np.array([truncated_normal_variance(1.0 / math.sqrt(n)) for n in blocks.sizes])
    spare = k_total - L
    share = w / w.sum() * spare
    base = np.floor(share).astype(np.int64)
    rest = spare - int(base.sum())
    # largest remainder; ties to the lower block index, so every party computes the same split
    order = np.lexsort((np.arange(L), -(share - base)))
    base[order[:rest]] += 1
    return [int(x) + 1 for x in base]


def project(delta: torch.Tensor, seed: int, blocks: Blocks, counts: Sequence[int], *,
            kind: str = "truncnormal") -> torch.Tensor:
    """gamma (concatenated over blocks): gamma_l = V_lᵀ Delta_l / (rho_l K_l) for 'truncnormal' bases."""
    out = []
    for blk, (sl, k) in enumerate(zip(blocks.slices(), counts, strict=False)):
        d_l = sl.stop - sl.start
        x = delta[sl]
        scale = 1.0 / (truncated_normal_variance(1.0 / math.sqrt(d_l)) * k) if kind == "truncnormal" else 1.0 / k
        g = torch.empty(k, dtype=torch.float64, device=delta.device)
        for start, chunk in iter_bases(seed, blk, d_l, k, device=delta.device, dtype=delta.dtype, kind=kind):
            g[start:start + len(chunk)] = (chunk @ x).double()
        out.append(g * scale)
    return torch.cat(out).to(delta.dtype) if out else torch.zeros(0, dtype=delta.dtype)


def reconstruct(gamma: torch.Tensor, seed: int, blocks: Blocks, counts: Sequence[int], *,
                dtype: torch.dtype = torch.float32, device: torch.device | str = "cpu",
                kind: str = "truncnormal", out: torch.Tensor | None = None, weight: float = 1.0) -> torch.Tensor:
    """Delta_hat = V gamma, block by block; with ``out`` it is added (times ``weight``) in place."""
    if int(sum(counts)) != gamma.numel():
        raise ConfigError(f"gamma has {gamma.numel()} entries but the block counts sum to {int(sum(counts))}")
    device = torch.device(device)
    res = torch.zeros(blocks.dim, dtype=dtype, device=device) if out is None else out
    gamma = gamma.to(device=device, dtype=dtype)
    pos = 0
    for blk, (sl, k) in enumerate(zip(blocks.slices(), counts, strict=False)):
        d_l = sl.stop - sl.start
        g = gamma[pos:pos + k] * weight
        for start, chunk in iter_bases(seed, blk, d_l, k, device=device, dtype=dtype, kind=kind):
            res[sl].add_(g[start:start + len(chunk)] @ chunk)
        pos += k
    return res


def project_reconstruct(delta: torch.Tensor, seed: int, blocks: Blocks, counts: Sequence[int], *,
                        kind: str = "truncnormal") -> tuple[torch.Tensor, torch.Tensor]:
    """(gamma, Delta_hat) generating each chunk of bases once: what a client sends and what everyone rebuilds.

    Delta_hat is bit-identical to ``reconstruct(gamma, seed, ...)`` on the same device (same chunks, same
    order of operations), which the seed-replay test checks.
    """
    gammas, res = [], torch.zeros_like(delta)
    for blk, (sl, k) in enumerate(zip(blocks.slices(), counts, strict=False)):
        d_l = sl.stop - sl.start
        x = delta[sl]
        scale = 1.0 / (truncated_normal_variance(1.0 / math.sqrt(d_l)) * k) if kind == "truncnormal" else 1.0 / k
        kept = k * d_l <= 4 * CHUNK_FLOATS  # small blocks: keep the chunks instead of drawing them twice
        chunks = list(iter_bases(seed, blk, d_l, k, device=delta.device, dtype=delta.dtype, kind=kind)) if kept else None
        if kept and len(chunks) == 1:
            g = ((chunks[0][1] @ x).double() * scale).to(delta.dtype)
        else:
            g = torch.empty(k, dtype=torch.float64, device=delta.device)
            for start, chunk in (chunks or iter_bases(seed, blk, d_l, k, device=delta.device, dtype=delta.dtype,
                                                       kind=kind)):
                g[start:start + len(chunk)] = (chunk @ x).double()
            g = (g * scale).to(delta.dtype)
        gammas.append(g)
        for start, chunk in (chunks or iter_bases(seed, blk, d_l, k, device=delta.device, dtype=delta.dtype,
                                                   kind=kind)):
            res[sl].add_(g[start:start + len(chunk)] @ chunk)
    return (torch.cat(gammas) if gammas else torch.zeros(0, dtype=delta.dtype)), res


def uplink_floats(counts: Sequence[int]) -> int:
    return int(sum(counts))


# ----------------------------------------------------------------------------- per-block seed pools
# The official code's scheme: a pool of K candidate seeds fixed at the start of the run; in every round
# each block l uses a random subset of the pool of size K_l = max(2, floor(K·||Delta_l|| / max_l ||Delta_l||))
# (at most K), and seed j of the pool draws one basis row of every block. The client sends gamma, the
# subset sizes and the pool indices (the subsets are drawn from the client's round seed, so a server can
# also re-derive them). Coordinates keep Ferret's unbiased 1/(rho_l K_l) scale (the official code's
# d_l/K_l is ~3× smaller and is offset there by a server learning rate of 10).
_POOL_TAG = 0x900D


def seed_pool(run_seed: int, k: int) -> list[int]:
    """The K candidate seeds of a run (fixed at the start; every party derives the same list)."""
    return [_mix(run_seed, _POOL_TAG, j) for j in range(k)]


def pool_subsets(k: int, blocks: Blocks, delta: torch.Tensor, pick_seed: int) -> tuple[list[int], list[int]]:
    """(K_l per block, the pool indices of every block concatenated, each block's sorted).

    K_l = min(K, max(2, floor(K·||Delta_l|| / max_l ||Delta_l||))); with K = 1 every block uses the one seed.
    The subset of block l is a uniform draw without replacement from a generator seeded by (pick_seed, l).
    """
    if k < 1:
        raise ConfigError(f"K = {k} is out of range; the seed pool needs at least one seed")
    n = block_norms(delta, blocks)
    if not np.isfinite(n).all():
        raise ConfigError("the local update has NaN/inf entries; lower the learning rate")
    top = float(n.max()) if len(n) else 0.0
    rel = n / top if top > 0 else np.zeros_like(n)
    sizes = [min(k, max(2, int(math.floor(k * r + 1e-9)))) for r in rel]
    idx: list[int] = []
    for blk, size in enumerate(sizes):
        rng = np.random.default_rng(_mix(pick_seed, blk))
        idx += sorted(int(j) for j in rng.choice(k, size, replace=False))
    return sizes, idx


def _pool_chunks(pool: Sequence[int], idx: Sequence[int], blk: int, d_l: int, device: torch.device,
                 dtype: torch.dtype, kind: str = "truncnormal"):
    """(row offset, rows) of block ``blk``'s bases, one row per pool seed in ``idx``, in chunks."""
    per = _rows_per_chunk(d_l)
    for start in range(0, len(idx), per):
        rows = [next(iter_bases(pool[j], blk, d_l, 1, device=device, dtype=dtype, kind=kind))[1][0]
                for j in idx[start:start + per]]
        yield start, torch.stack(rows)


def project_pool(delta: torch.Tensor, pool: Sequence[int], blocks: Blocks, counts: Sequence[int],
                 indices: Sequence[int]) -> torch.Tensor:
    """gamma_l = V_lᵀ Delta_l / (rho_l K_l), V_l's rows drawn from the pool seeds ``indices`` of block l."""
    out, pos = [], 0
    for blk, (sl, k) in enumerate(zip(blocks.slices(), counts, strict=False)):
        d_l = sl.stop - sl.start
        scale = 1.0 / (truncated_normal_variance(1.0 / math.sqrt(d_l)) * k)
        g = torch.empty(k, dtype=torch.float64, device=delta.device)
        for start, chunk in _pool_chunks(pool, indices[pos:pos + k], blk, d_l, delta.device, delta.dtype):
            g[start:start + len(chunk)] = (chunk @ delta[sl]).double()
        out.append(g * scale)
        pos += k
    return torch.cat(out).to(delta.dtype) if out else torch.zeros(0, dtype=delta.dtype)


def reconstruct_pool(gamma: torch.Tensor, pool: Sequence[int], blocks: Blocks, counts: Sequence[int],
                     indices: Sequence[int], *, dtype: torch.dtype = torch.float32,
                     device: torch.device | str = "cpu", out: torch.Tensor | None = None,
                     weight: float = 1.0) -> torch.Tensor:
    """Delta_hat = V gamma with per-block pool bases (the inverse of :func:`project_pool`)."""
    if int(sum(counts)) != gamma.numel() or len(indices) != gamma.numel():
        raise ConfigError(f"gamma has {gamma.numel()} entries but the block counts sum to {int(sum(counts))} "
                          f"and {len(indices)} pool indices came with it")
    if indices and not 0 <= min(indices) <= max(indices) < len(pool):
        raise ConfigError(f"a pool index is out of range; expected 0..{len(pool) - 1}")
    device = torch.device(device)
    res = torch.zeros(blocks.dim, dtype=dtype, device=device) if out is None else out
    gamma = gamma.to(device=device, dtype=dtype)
    pos = 0
    for blk, (sl, k) in enumerate(zip(blocks.slices(), counts, strict=False)):
        g = gamma[pos:pos + k] * weight
        for start, chunk in _pool_chunks(pool, indices[pos:pos + k], blk, sl.stop - sl.start, device, dtype):
            res[sl].add_(g[start:start + len(chunk)] @ chunk)
        pos += k
    return res
