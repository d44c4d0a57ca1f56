"""Triton kernel for :func:`sparse_prefill`: FlashAttention-2-style online softmax over the selected tiles,
then over the gathered columns (MInference's PIT-style sparse load), one program per (query block, head).

Rows and tiles are loaded through the permutations (index gathers, no tensor is moved), the causal mask
compares original positions and the output is stored at the original rows, so the Grid and boundary
permutations cost nothing extra. Inputs are upcast to fp32 in the kernel (tl.dot accumulates in fp32;
Triton's CPU interpreter mishandles bf16). ``triton`` is imported here only, so CPU users without it
keep the torch path. The reference is :func:`paperkit.methods.mm_prefill.attention.sparse_prefill_torch`.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from paperkit.methods.mm_prefill.index import SparseIndex


@triton.jit
def _attend(q, K, V, base, kpos, k_ok, qpos, row_ok, offs_d, m_i, l_i, acc, D: tl.constexpr):
    """One online-softmax step over the keys at original positions ``kpos`` (a tile or a column group)."""
    kt = tl.load(K + base + kpos[:, None].to(tl.int64) * D + offs_d[None, :], mask=k_ok[:, None], other=0.0)
    vt = tl.load(V + base + kpos[:, None].to(tl.int64) * D + offs_d[None, :], mask=k_ok[:, None], other=0.0)
    s = tl.dot(q, tl.trans(kt.to(tl.float32)))
    allowed = (qpos[:, None] >= kpos[None, :]) & k_ok[None, :] & row_ok[:, None]
    s = tl.where(allowed, s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, 1))
    m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # a row with nothing allowed yet stays empty
    alpha = tl.exp2(m_i - m_safe)
    p = tl.exp2(s - m_safe[:, None])
    return m_new, l_i * alpha + tl.sum(p, 1), acc * alpha[:, None] + tl.dot(p, vt.to(tl.float32))


@triton.jit
def _sparse_prefill_fwd(Q, K, V, Out, LSE, QPERM, KPERM, BIDX, BCNT, CIDX, CCNT, sm_scale, N, MAXB, MAXC, NB,
                        D: tl.constexpr, BLOCK: tl.constexpr, COLS: tl.constexpr):
    qb = tl.program_id(0)
    h = tl.program_id(1)
    offs_m = tl.arange(0, BLOCK)
    offs_d = tl.arange(0, D)
    slot = qb * BLOCK + offs_m
    row_ok = slot < N
    qpos = tl.load(QPERM + h * N + slot, mask=row_ok, other=0)
    base = h.to(tl.int64) * N * D
    q = tl.load(Q + base + qpos[:, None].to(tl.int64) * D + offs_d[None, :], mask=row_ok[:, None], other=0.0)
    q = q.to(tl.float32) * (sm_scale * 1.4426950408889634)  # exp2 domain
    m_i = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK], dtype=tl.float32)
    acc = tl.zeros([BLOCK, D], dtype=tl.float32)
    meta = h * NB + qb
    nblk = tl.load(BCNT + meta)
    offs_n = tl.arange(0, BLOCK)
    for i in range(0, nblk):
        kb = tl.load(BIDX + meta * MAXB + i)
        kslot = kb * BLOCK + offs_n
        k_ok = kslot < N
        kpos = tl.load(KPERM + h * N + kslot, mask=k_ok, other=0)
        m_i, l_i, acc = _attend(q, K, V, base, kpos, k_ok, qpos, row_ok, offs_d, m_i, l_i, acc, D)
    ncol = tl.load(CCNT + meta)
    offs_c = tl.arange(0, COLS)
    for c0 in range(0, ncol, COLS):
        c_ok = (c0 + offs_c) < ncol
        kpos = tl.load(CIDX + meta * MAXC + c0 + offs_c, mask=c_ok, other=0)
        m_i, l_i, acc = _attend(q, K, V, base, kpos, c_ok, qpos, row_ok, offs_d, m_i, l_i, acc, D)
    l_safe = tl.where(l_i > 0, l_i, 1.0)
    out = acc / l_safe[:, None]
    tl.store(Out + base + qpos[:, None].to(tl.int64) * D + offs_d[None, :], out.to(Out.dtype.element_ty),
             mask=row_ok[:, None])
    lse = tl.where(l_i > 0, (m_i + tl.log2(l_safe)) * 0.6931471805599453, float("-inf"))
    tl.store(LSE + h * N + qpos, lse, mask=row_ok)


def sparse_prefill_triton(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, index: SparseIndex, *,
                          return_lse: bool = False, cols: int = 16):
    """Launch the kernel. Head dims that are not a power of two (or < 16) are zero-padded (dot products
    are unchanged); tiles are ``index.block_size`` ≥ 16 for tl.dot."""
    H, n, d = q.shape
    bs = index.block_size
    if bs < 16 or bs & (bs - 1):
        raise ValueError(f"the Triton kernel needs a power-of-two block size ≥ 16, got {bs}")
    dp = max(16, 1 << (d - 1).bit_length())
    if dp != d:
        pad = (0, dp - d)
        q, k, v = (torch.nn.functional.pad(t, pad) for t in (q, k, v))
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    out = torch.empty(H, n, dp, dtype=q.dtype, device=q.device)
    lse = torch.empty(H, n, dtype=torch.float32, device=q.device)
    nb = index.n_blocks
    grid = (nb, H)
    _sparse_prefill_fwd[grid](
        q, k, v, out, lse,
        index.q_perm.contiguous(), index.k_perm.contiguous(),
        index.block_idx.contiguous(), index.block_cnt.contiguous(),
        index.col_idx.contiguous(), index.col_cnt.contiguous(),
        1.0 / math.sqrt(d), n, index.block_idx.shape[2], index.col_idx.shape[2], nb,
        D=dp, BLOCK=bs, COLS=cols,
    )
    out = out[..., :d]
    return (out, lse) if return_lse else out
