"""Triton kernel for :func:`sparse_prefill`: FlashAttention-2-style online softmax over the selected tiles,
then over the gathered columns (MInference's PIT-style sparse load), one program per (query sub-block, head).

Rows and tiles are loaded through the permutations (index gathers, no tensor is moved), the causal mask
compares original positions and the output is stored at the original rows, so the Grid and boundary
permutations cost nothing extra.

Two ways to run it, fixed when this module is imported (as Triton fixes it, from ``TRITON_INTERPRET``):

* **compiled (GPU)**: tiles are loaded in the input dtype, so bf16/fp16 inputs use tensor-core ``tl.dot``
  with fp32 accumulation (fp32 inputs follow ``torch.backends.cuda.matmul.allow_tf32``: IEEE fp32 unless
  TF32 is allowed). ``triton.autotune`` picks the query/key sub-block sizes (each dividing the index's
  block size, ≥ 16 for ``tl.dot``), the column-group size, ``num_warps`` and ``num_stages``, keyed on the
  head dim, the block size and N rounded up to a power of two (so a new length does not re-tune).
* **interpreter** (``TRITON_INTERPRET=1``, CPU tests): one fixed configuration, inputs upcast to fp32
  (Triton's CPU interpreter mishandles bf16; it cannot autotune either).

``triton`` is imported here only, so CPU users without it keep the torch path. The reference is
:func:`paperkit.methods.mm_prefill.attention.sparse_prefill_torch`.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import triton
import triton.language as tl

from paperkit.methods.mm_prefill.index import SparseIndex

LOG2E = 1.4426950408889634

# the interpreter's one configuration: whole index blocks, 16 gathered columns at a time
INTERPRETER_CONFIG = {"BLOCK_M": 0, "BLOCK_N": 0, "COLS": 16}  # 0: the index's block size


@triton.jit
def _attend(q, K, V, base, kpos, k_ok, qpos, row_ok, offs_d, m_i, l_i, acc, qk_scale, D: tl.constexpr,
            UPCAST: tl.constexpr, PRECISION: tl.constexpr):
    """One online-softmax step over the keys at original positions ``kpos`` (a sub-tile or a column group)."""
    kt = tl.load(K + base + kpos[:, None].to(tl.int64) * D + offs_d[None, :], mask=k_ok[:, None], other=0.0)
    vt = tl.load(V + base + kpos[:, None].to(tl.int64) * D + offs_d[None, :], mask=k_ok[:, None], other=0.0)
    if UPCAST:
        kt = kt.to(tl.float32)
        vt = vt.to(tl.float32)
    s = tl.dot(q, tl.trans(kt), input_precision=PRECISION) * qk_scale  # fp32 accumulation, exp2 domain
    allowed = (qpos[:, None] >= kpos[None, :]) & k_ok[None, :] & row_ok[:, None]
    s = tl.where(allowed, s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, 1))
    m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # a row with nothing allowed yet stays empty
    alpha = tl.exp2(m_i - m_safe)
    p = tl.exp2(s - m_safe[:, None])
    pv = tl.dot(p.to(vt.dtype), vt, input_precision=PRECISION)  # bf16 probabilities on tensor cores, as FA2
    return m_new, l_i * alpha + tl.sum(p, 1), acc * alpha[:, None] + pv


@triton.jit
def _sparse_prefill_fwd(Q, K, V, Out, LSE, QPERM, KPERM, BIDX, BCNT, CIDX, CCNT, qk_scale, N, MAXB, MAXC, NB,
                        N_BUCKET, D: tl.constexpr, BS: tl.constexpr, BLOCK_M: tl.constexpr,
                        BLOCK_N: tl.constexpr, COLS: tl.constexpr, UPCAST: tl.constexpr,
                        PRECISION: tl.constexpr):
    pid = tl.program_id(0)
    h = tl.program_id(1)
    qb = (pid * BLOCK_M) // BS  # the index block this query sub-block belongs to
    offs_m = tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    slot = pid * BLOCK_M + offs_m
    row_ok = slot < N
    qpos = tl.load(QPERM + h * N + slot, mask=row_ok, other=0)
    base = h.to(tl.int64) * N * D
    q = tl.load(Q + base + qpos[:, None].to(tl.int64) * D + offs_d[None, :], mask=row_ok[:, None], other=0.0)
    if UPCAST:
        q = q.to(tl.float32)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, D], dtype=tl.float32)
    meta = h * NB + qb
    nblk = tl.load(BCNT + meta)
    offs_n = tl.arange(0, BLOCK_N)
    for i in range(0, nblk):
        kb = tl.load(BIDX + meta * MAXB + i)
        for j in tl.static_range(0, BS // BLOCK_N):
            kslot = kb * BS + j * BLOCK_N + offs_n
            k_ok = kslot < N
            kpos = tl.load(KPERM + h * N + kslot, mask=k_ok, other=0)
            m_i, l_i, acc = _attend(q, K, V, base, kpos, k_ok, qpos, row_ok, offs_d, m_i, l_i, acc, qk_scale, D,
                                    UPCAST, PRECISION)
    ncol = tl.load(CCNT + meta)
    offs_c = tl.arange(0, COLS)
    for c0 in range(0, ncol, COLS):
        c_ok = (c0 + offs_c) < ncol
        kpos = tl.load(CIDX + meta * MAXC + c0 + offs_c, mask=c_ok, other=0)
        m_i, l_i, acc = _attend(q, K, V, base, kpos, c_ok, qpos, row_ok, offs_d, m_i, l_i, acc, qk_scale, D,
                                UPCAST, PRECISION)
    l_safe = tl.where(l_i > 0, l_i, 1.0)
    out = acc / l_safe[:, None]
    tl.store(Out + base + qpos[:, None].to(tl.int64) * D + offs_d[None, :], out.to(Out.dtype.element_ty),
             mask=row_ok[:, None])
    lse = tl.where(l_i > 0, (m_i + tl.log2(l_safe)) * 0.6931471805599453, float("-inf"))
    tl.store(LSE + h * N + qpos, lse, mask=row_ok)


# decided once, as Triton itself does: ``@triton.jit`` returns an interpreted function when TRITON_INTERPRET
# is set at import time, and that is what every launch from this module will run
INTERPRET = type(_sparse_prefill_fwd).__name__ == "InterpretedFunction"


def _config(block_m: int, block_n: int, cols: int, warps: int, stages: int) -> triton.Config:
    return triton.Config({"BLOCK_M": block_m, "BLOCK_N": block_n, "COLS": cols}, num_warps=warps,
                         num_stages=stages)


# GPU search space (5 configs, fewer after pruning to the block size): sub-blocks divide the index block
GPU_CONFIGS = [
    _config(64, 64, 32, 4, 2),
    _config(64, 64, 64, 4, 3),
    _config(128, 64, 64, 8, 2),
    _config(32, 32, 32, 4, 2),
    _config(16, 16, 16, 2, 2),
]


def _fits(configs: list[Any], named_args: dict[str, Any], **kwargs: Any) -> list[Any]:
    """Keep the configs whose sub-blocks divide the index block size (always keeps the 16 × 16 one)."""
    bs = kwargs.get("BS", named_args.get("BS"))
    return [c for c in configs if bs % c.kwargs["BLOCK_M"] == 0 and bs % c.kwargs["BLOCK_N"] == 0]


_sparse_prefill_fwd_tuned = triton.autotune(GPU_CONFIGS, key=["D", "BS", "N_BUCKET", "UPCAST", "PRECISION"],
                                            prune_configs_by={"early_config_prune": _fits})(_sparse_prefill_fwd)


def sparse_prefill_triton(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, index: SparseIndex, *,
                          return_lse: bool = False, config: dict[str, int] | None = None,
                          upcast: bool | None = None) -> Any:
    """Launch the kernel. Head dims that are not a power of two (or < 16) are zero-padded (dot products are
    unchanged); the index block size must be a power of two ≥ 16 (``tl.dot``'s smallest tile).

    ``config`` (``BLOCK_M``, ``BLOCK_N``, ``COLS``; 0 = the block size) fixes the launch instead of autotuning,
    ``upcast`` forces the fp32 upcast on or off; both default to the mode chosen at import (see module doc).
    """
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
    upcast = INTERPRET if upcast is None else upcast
    # "tf32" is tl.dot's default and means nothing for bf16/fp16 operands; fp32 operands get IEEE dots
    # unless torch allows TF32 matmuls
    fp32_dots = q.dtype == torch.float32 or upcast
    allow_tf32 = q.is_cuda and not INTERPRET and torch.backends.cuda.matmul.allow_tf32
    precision = "ieee" if fp32_dots and not allow_tf32 else "tf32"
    args = (q, k, v, out, lse, index.q_perm.contiguous(), index.k_perm.contiguous(),
            index.block_idx.contiguous(), index.block_cnt.contiguous(), index.col_idx.contiguous(),
            index.col_cnt.contiguous(), LOG2E / math.sqrt(d), n, index.block_idx.shape[2], index.col_idx.shape[2],
            nb, 1 << max(0, (n - 1).bit_length()))
    if config is None and INTERPRET:
        config = INTERPRETER_CONFIG
    if config is None:
        def grid(meta: dict[str, Any]) -> tuple[int, int]:
            return (nb * bs // meta["BLOCK_M"], H)

        _sparse_prefill_fwd_tuned[grid](*args, D=dp, BS=bs, UPCAST=upcast, PRECISION=precision)
    else:
        block_m, block_n = config.get("BLOCK_M") or bs, config.get("BLOCK_N") or bs
        cols = config.get("COLS", 16)
        if bs % block_m or bs % block_n or min(block_m, block_n, cols) < 16:
            raise ValueError(f"config {config}: sub-blocks must divide the block size {bs} and be ≥ 16")
        _sparse_prefill_fwd[(nb * bs // block_m, H)](*args, D=dp, BS=bs, BLOCK_M=block_m, BLOCK_N=block_n,
                                                     COLS=cols, UPCAST=upcast, PRECISION=precision)
    out = out[..., :d]
    return (out, lse) if return_lse else out
