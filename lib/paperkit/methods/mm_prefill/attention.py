"""The sparse prefill operator ``sparse_prefill(q, k, v, index)`` and dense references.

The PyTorch path gathers, per query block, the keys its tiles and columns name (in original positions)
and runs a masked softmax over them. Query blocks are processed in chunks whose gathered working set is
bounded (``work_elems``), so memory is O(chunk · block · keys read), never N × N. The Triton kernel
(:mod:`.kernels`) computes the same thing with an online softmax; :func:`sparse_prefill` picks it on CUDA.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from paperkit.core.errors import InputError, UsageError
from paperkit.methods.mm_prefill.index import SparseIndex, _slot_positions, check_qkv, gathered_keys

WORK_ELEMS = 1 << 18  # scores per chunk (~1 MiB fp32): keeps the gathered keys and scores cache-sized


def dense_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, rows: torch.Tensor | None = None,
                    chunk: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Causal softmax attention in fp32, row chunks at a time: output [H, R, D] and log-sum-exp [H, R].

    ``rows`` restricts the queries (original positions); the default is all of them.
    """
    H, n, d = q.shape
    rows = torch.arange(n, device=q.device) if rows is None else rows.to(q.device)
    chunk = chunk or max(16, (1 << 25) // (H * n))  # ~128 MiB of fp32 scores per chunk
    scale = 1.0 / math.sqrt(d)
    outs, lses = [], []
    kf, vf = k.float(), v.float()
    cols = torch.arange(n, device=q.device)
    for start in range(0, rows.numel(), chunk):
        r = rows[start:start + chunk]
        s = torch.einsum("hrd,hnd->hrn", q[:, r].float(), kf) * scale
        s = s.masked_fill(cols[None, None, :] > r[None, :, None], float("-inf"))
        lse = torch.logsumexp(s, -1)
        outs.append(torch.einsum("hrn,hnd->hrd", torch.exp(s - lse[..., None]), vf))
        lses.append(lse)
    return torch.cat(outs, 1), torch.cat(lses, 1)


def sdpa_causal(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """PyTorch's fused causal attention (the speed baseline)."""
    import torch.nn.functional

    return torch.nn.functional.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=True)[0]


def sparse_prefill_torch(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, index: SparseIndex, *,
                         q_blocks: torch.Tensor | None = None, work_elems: int = WORK_ELEMS,
                         return_lse: bool = False) -> Any:
    """Reference sparse attention. Output [H, N, D] in q's dtype (and fp32 lse [H, N]; −inf where unset).

    ``q_blocks`` computes only those query blocks (the others stay zero): the search scores heads on a sample.
    """
    H, n, d = q.shape
    bs = index.block_size
    scale = 1.0 / math.sqrt(d)
    out = torch.zeros(H, n, d, dtype=torch.float32, device=q.device)
    lse_all = torch.full((H, n), float("-inf"), dtype=torch.float32, device=q.device)
    for h in range(H):
        keys, valid = gathered_keys(index, h)
        counts = index.block_cnt[h].long() * bs + index.col_cnt[h].long()
        # columns sit after the padded tiles; compact so each row's real keys come first
        order = torch.sort((~valid).to(torch.int8), dim=1, stable=True).indices
        keys, valid = keys.gather(1, order), valid.gather(1, order)
        qpos_all = _slot_positions(index.q_perm[h], bs)
        blocks = torch.arange(keys.shape[0], device=q.device) if q_blocks is None else q_blocks.to(q.device)
        qh, kh, vh = q[h].float() * scale, k[h].float(), v[h].float()
        start = 0
        while start < blocks.numel():
            width = int(counts[blocks[start]].clamp(min=1))
            take = max(1, work_elems // (bs * max(width, 1)))
            chunk = blocks[start:start + take]
            width = max(1, int(counts[chunk].max()))
            kp, ok = keys[chunk, :width], valid[chunk, :width]
            qp = qpos_all[chunk]  # [c, bs]
            qs = qh[qp.clamp(min=0)]  # [c, bs, d], pre-scaled
            # in-place elementwise steps: the [c, bs, width] scores are the working set, touched once each
            s = torch.bmm(qs, kh[kp].transpose(1, 2))  # [c, bs, width]
            blocked = (kp[:, None, :] > qp[:, :, None]) | ~ok[:, None, :]
            s.masked_fill_(blocked, float("-inf"))
            m = s.amax(-1, keepdim=True)
            m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
            p = s.sub_(m).exp_()
            z = p.sum(-1, keepdim=True)
            o = torch.bmm(p, vh[kp]).div_(z.clamp(min=1e-30))
            lse = (m + torch.log(z)).squeeze(-1)
            real = qp >= 0
            out[h, qp[real]] = o[real]
            lse_all[h, qp[real]] = lse[real]
            start += chunk.numel()
    out = out.to(q.dtype)
    return (out, lse_all) if return_lse else out


def sparse_prefill(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, index: SparseIndex, *,
                   backend: str = "auto", return_lse: bool = False, validate: bool = True) -> Any:
    """Sparse causal prefill attention for one sequence, q/k/v [H, N, D] (any float dtype).

    ``backend``: ``auto`` (Triton on CUDA, torch elsewhere), ``torch`` or ``triton`` (on CPU it needs
    ``TRITON_INTERPRET=1`` set before the kernel module is imported; UsageError otherwise).
    :func:`last_backend` says which one ran.
    """
    if validate:
        check_qkv(q, k, v)
    if index.n != q.shape[1] or index.heads != q.shape[0]:
        raise InputError(f"index is for {index.heads} heads × {index.n} tokens; q has {q.shape[0]} heads × "
                         f"{q.shape[1]} tokens")
    chosen = backend
    if backend == "auto":
        chosen = "triton" if q.is_cuda else "torch"
    if chosen not in ("torch", "triton"):
        raise InputError(f"unknown backend '{backend}'; expected auto, torch or triton")
    if chosen == "triton":
        from paperkit.methods.mm_prefill.kernels import INTERPRET, sparse_prefill_triton

        if not q.is_cuda and not INTERPRET:
            raise UsageError("the Triton backend needs CUDA tensors (or TRITON_INTERPRET=1 set before import, "
                             "for tests); use the torch backend on CPU")
        _LAST["backend"] = chosen
        return sparse_prefill_triton(q, k, v, index.to(q.device), return_lse=return_lse)
    _LAST["backend"] = chosen
    return sparse_prefill_torch(q, k, v, index.to(q.device), return_lse=return_lse)


_LAST: dict[str, str] = {}


def last_backend() -> str | None:
    """The backend of the latest :func:`sparse_prefill` call in this process (for manifests)."""
    return _LAST.get("backend")


def recall_from_lse(sparse_lse: torch.Tensor, dense_lse: torch.Tensor) -> torch.Tensor:
    """Attention mass the sparse pattern keeps, per head: mean over rows of Σ_selected p = exp(lse_s − lse_d)."""
    return torch.exp((sparse_lse - dense_lse).clamp(max=0.0)).mean(-1)


def rel_l2(out: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
    """Per head ‖out − ref‖ / ‖ref‖ over tokens and dims (norms in float64: no overflow of the squares)."""
    diff = (out.double() - ref.double()).flatten(1).norm(dim=1)
    return (diff / ref.double().flatten(1).norm(dim=1).clamp(min=1e-300)).float()
