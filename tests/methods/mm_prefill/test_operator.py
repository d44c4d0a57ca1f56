"""The operator against truth: dense SDPA with a full index, a brute-force masked softmax for sparse
indices, and the Triton kernel (interpreter on CPU) against the torch reference."""

import math

import numpy as np
import pytest
import torch

from paperkit.core.errors import InputError
from paperkit.methods.mm_prefill import index as sparse_index
from paperkit.methods.mm_prefill.attention import (
    dense_attention,
    sdpa_causal,
    sparse_prefill,
    sparse_prefill_torch,
)


def qkv(h=2, n=517, d=64, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(h, n, d, generator=g).to(dtype) for _ in range(3))


def masked_reference(q, k, v, index):
    """Independent check: softmax over the [N, N] mask the index describes."""
    outs = []
    for h in range(q.shape[0]):
        m = sparse_index.dense_mask(index, h)
        s = (q[h].double() @ k[h].double().T) / math.sqrt(q.shape[-1])
        outs.append(torch.softmax(s.masked_fill(~m, float("-inf")), -1) @ v[h].double())
    return torch.stack(outs)


def indices(q, k, bs):
    n = q.shape[1]
    att = sparse_index.last_query_attention(q[0], k[0])
    vert, sl = sparse_index.vs_scores(att)
    vs = sparse_index.vertical_slash(vert, sl, n_vertical=40, n_slash=60, block_size=bs, sink=4, local=16)
    block = sparse_index.block_sparse(q[1], k[1], fraction=0.3, block_size=bs, sink=2)
    grid = sparse_index.grid(q[0], k[0], stride=23, phase=5, fraction=0.25, block_size=bs)
    modality = torch.zeros(n, dtype=torch.int8)
    modality[100:400] = 1
    bnd = sparse_index.boundary(q[1], k[1], modality, kind="2d_boundary", fraction=0.3, block_size=bs, stride=10)
    return {"vs+block": sparse_index.stack_heads([vs, block], bs), "grid+boundary": sparse_index.stack_heads([grid, bnd], bs)}


def test_full_index_reproduces_sdpa():
    q, k, v = qkv()
    full = sparse_index.stack_heads([sparse_index.full(q.shape[1], 64)] * 2, 64)
    assert sparse_index.density(full) == [1.0, 1.0]
    out = sparse_prefill_torch(q, k, v, full)
    assert (out - sdpa_causal(q, k, v)).abs().max() < 1e-4
    ref, _ = dense_attention(q, k, v)
    assert (out - ref).abs().max() < 1e-4


@pytest.mark.parametrize("bs", [32, 64])
def test_torch_operator_matches_masked_softmax(bs):
    q, k, v = qkv(seed=1)
    for name, idx in indices(q, k, bs).items():
        out, lse = sparse_prefill_torch(q, k, v, idx, return_lse=True, work_elems=5000)
        ref = masked_reference(q, k, v, idx)
        assert (out.double() - ref).abs().max() < 1e-4, name
        d = sparse_index.density(idx)
        masks = [sparse_index.dense_mask(idx, h) for h in range(2)]
        assert d == pytest.approx([float(m.sum()) / (517 * 518 / 2) for m in masks], abs=1e-12), name
        assert all(0 < x < 1 for x in d)


def test_triton_interpreter_matches_torch_reference():
    pytest.importorskip("triton")
    q, k, v = qkv(seed=2)
    for name, idx in indices(q, k, 64).items():
        ref, ref_lse = sparse_prefill_torch(q, k, v, idx, return_lse=True)
        out, lse = sparse_prefill(q, k, v, idx, backend="triton", return_lse=True)
        assert (out - ref).abs().max() < 1e-3, name
        assert (lse - ref_lse).abs().max() < 1e-3, name


def test_triton_bf16_and_odd_head_dim():
    """bf16 inputs are upcast inside; a head dim of 40 is zero-padded to 64."""
    pytest.importorskip("triton")
    q, k, v = qkv(h=2, n=150, d=40, seed=3)
    idx = indices(q, k, 32)["vs+block"]
    ref = sparse_prefill_torch(q, k, v, idx)
    out = sparse_prefill(q.bfloat16(), k.bfloat16(), v.bfloat16(), idx, backend="triton")
    assert out.dtype == torch.bfloat16 and out.shape == q.shape
    assert ((out.float() - ref).norm() / ref.norm()) < 2e-2


def test_dispatch_picks_torch_on_cpu():
    from paperkit.methods.mm_prefill.attention import last_backend

    q, k, v = qkv(n=130)
    sparse_prefill(q, k, v, sparse_index.stack_heads([sparse_index.full(130, 64)] * 2, 64))
    assert last_backend() == "torch"


def test_bad_inputs_raise_input_errors():
    q, k, v = qkv(n=100)
    with pytest.raises(InputError, match="shapes differ"):
        sparse_index.check_qkv(q, k[:, :50], v)
    with pytest.raises(InputError, match="dtypes differ"):
        sparse_index.check_qkv(q, k.double(), v)
    with pytest.raises(InputError, match="fewer than one block"):
        sparse_index.check_qkv(q, k, v, block_size=128)
    bad = q.clone()
    bad[0, 3, 1] = float("nan")
    with pytest.raises(InputError, match="non-finite"):
        sparse_index.check_qkv(bad, k, v)
    with pytest.raises(InputError, match="index is for"):
        sparse_prefill(q, k, v, sparse_index.stack_heads([sparse_index.full(64, 32)] * 2, 32))


def cuda_heads(q, k, bs, dev):
    att = sparse_index.last_query_attention(q[0], k[0])
    vert, sl = sparse_index.vs_scores(att)
    n = q.shape[1]
    return sparse_index.stack_heads([sparse_index.vertical_slash(vert, sl, n_vertical=300, n_slash=200, block_size=bs),
                          sparse_index.block_sparse(q[1], k[1], fraction=0.1, block_size=bs),
                          sparse_index.grid(q[2], k[2], stride=256, phase=7, fraction=0.1, block_size=bs),
                          sparse_index.full(n, bs, dev)], bs)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype,bs,dim", [(torch.bfloat16, 64, 128), (torch.bfloat16, 128, 96),
                                          (torch.float16, 32, 64)])
def test_compiled_kernel_matches_reference_on_cuda(dtype, bs, dim):
    """On a GPU (TRITON_INTERPRET=0): the autotuned kernel with bf16/fp16 tensor-core dots vs the torch
    reference (fp32 math) at a bf16 tolerance, permuted grid and a full (dense) head included."""
    from paperkit.methods.mm_prefill import kernels
    from paperkit.methods.mm_prefill.attention import last_backend, rel_l2

    assert not kernels.INTERPRET, "run the GPU tests with TRITON_INTERPRET=0"
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(0)
    q, k, v = (torch.randn(4, 4133, dim, generator=g, device=dev, dtype=dtype) for _ in range(3))
    idx = cuda_heads(q, k, bs, dev)
    ref, ref_lse = sparse_prefill_torch(q, k, v, idx, return_lse=True)
    out, lse = sparse_prefill(q, k, v, idx, return_lse=True)  # auto → Triton on CUDA
    assert last_backend() == "triton" and out.dtype == dtype
    assert kernels._sparse_prefill_fwd_tuned.best_config is not None
    assert float(rel_l2(out, ref).max()) < 2e-2
    assert float((lse - ref_lse).abs().max()) < 5e-2
    assert float(rel_l2(out[3:], sdpa_causal(q[3:], k[3:], v[3:])).max()) < 2e-2


@pytest.mark.gpu
def test_compiled_kernel_fp32_is_ieee_on_cuda():
    """fp32 inputs: IEEE fp32 dots (TF32 only if torch allows it), so the kernel matches the reference closely."""
    from paperkit.methods.mm_prefill.attention import rel_l2

    dev = torch.device("cuda")
    allow = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        g = torch.Generator(device=dev).manual_seed(1)
        q, k, v = (torch.randn(4, 2100, 64, generator=g, device=dev) for _ in range(3))
        idx = cuda_heads(q, k, 64, dev)
        out = sparse_prefill(q, k, v, idx, backend="triton")
        assert float(rel_l2(out, sparse_prefill_torch(q, k, v, idx)).max()) < 1e-4
    finally:
        torch.backends.cuda.matmul.allow_tf32 = allow


@pytest.mark.parametrize("period", [7, 8, 16])
def test_fourier_patch_code_is_an_exact_delta(period):
    from paperkit.methods.mm_prefill.synthetic import _fourier_delta

    idx = np.arange(3 * period)
    code = _fourier_delta(idx, period)
    gram = code @ code.T
    want = np.where(idx[:, None] % period == idx[None, :] % period, 1.0, -1.0 / (period - 1))
    assert code.shape[1] == period - 1 and np.allclose(gram, want)


def test_vs_scores_match_brute_force():
    g = torch.Generator().manual_seed(4)
    for n in (40, 300):
        q, k = torch.randn(n, 16, generator=g), torch.randn(n, 16, generator=g)
        att = sparse_index.last_query_attention(q, k)
        vertical, slash = sparse_index.vs_scores(att)
        last = att.shape[0]
        ref = torch.zeros(n)
        for r in range(last):
            i = n - last + r
            for j in range(i + 1):
                ref[i - j] += att[r, j]
        assert torch.allclose(slash, ref, atol=1e-6) and torch.allclose(vertical, att.sum(0))


def test_kernel_mode_is_fixed_at_import_and_configs_fit_the_block():
    """Under TRITON_INTERPRET (tests/conftest.py) the kernel module runs the interpreter's fixed config;
    the GPU autotune set keeps 3–6 configs whose sub-blocks divide the index block (≥ 16 for tl.dot)."""
    kernels = pytest.importorskip("paperkit.methods.mm_prefill.kernels")
    assert kernels.INTERPRET
    assert 3 <= len(kernels.GPU_CONFIGS) <= 6
    for bs in (16, 32, 64, 128):
        kept = kernels._fits(kernels.GPU_CONFIGS, {}, BS=bs)
        assert kept, bs
        for c in kept:
            assert bs % c.kwargs["BLOCK_M"] == 0 and bs % c.kwargs["BLOCK_N"] == 0
            assert min(c.kwargs.values()) >= 16
    assert len(kernels._fits(kernels.GPU_CONFIGS, {}, BS=64)) >= 3


@pytest.mark.parametrize("config", [{"BLOCK_M": 32, "BLOCK_N": 16, "COLS": 32}, {"BLOCK_M": 16, "BLOCK_N": 64,
                                                                                  "COLS": 64}])
def test_gpu_tilings_and_native_dtype_path_in_the_interpreter(config):
    """The GPU launch path in the interpreter: query/key sub-blocks smaller than the index block, wider column
    groups, and tiles kept in the input dtype (no fp32 upcast). fp16 stands in for bf16 here (the interpreter's
    bf16 tl.dot is wrong; a compiled GPU is right): fp16 dots with fp32 accumulation vs the torch reference."""
    kernels = pytest.importorskip("paperkit.methods.mm_prefill.kernels")
    q, k, v = qkv(h=2, n=200, d=32, seed=5)
    idx = indices(q, k, 64)["grid+boundary"]
    ref, ref_lse = sparse_prefill_torch(q, k, v, idx, return_lse=True)
    out, lse = kernels.sparse_prefill_triton(q, k, v, idx, config=config, upcast=False, return_lse=True)
    assert (out - ref).abs().max() < 1e-4 and (lse - ref_lse).abs().max() < 1e-4
    h = kernels.sparse_prefill_triton(q.half(), k.half(), v.half(), idx, config=config, upcast=False)
    assert h.dtype == torch.float16
    assert float((h.float() - ref).norm() / ref.norm()) < 5e-3
