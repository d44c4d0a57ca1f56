"""mm-prefill benchmark: dense causal SDPA vs the sparse-prefill operator, side by side, printing ratios.

    python benchmarks/mm_prefill.py                 # CPU: the N = 16,384 headline, then the N × density curve
    python benchmarks/mm_prefill.py --quick         # CPU: headline only (a few minutes on 2 cores)
    python benchmarks/mm_prefill.py --device cuda   # GPU: Triton vs SDPA flash at N = 32k, 128k, bf16

CPU (fp32, one process, same random q, k, v): the torch gather path vs ``torch.nn.functional.scaled_dot_product_attention``
with ``is_causal=True``; the VS index is sized once to the density (untimed bisection) and then built as
it is online (last-64-query scores, top columns/diagonals, packing), which is timed separately.

GPU: the Triton kernel (bf16 tensor-core dots, fp32 accumulation, autotuned; the first call per shape
tunes and is untimed) vs SDPA restricted to the flash backend, bf16, H = 8, D = 128; the kernel's output
is checked against the torch sparse reference (relative L2), and index building is reported as a share
of the sparse time. Run it with TRITON_INTERPRET unset or 0. Medians over repetitions; the machine may be shared, so the ratios are what to quote.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "lib"), str(ROOT / "cli")]

import torch  # noqa: E402

from paperkit.core.resources import resolve_jobs  # noqa: E402
from paperkit.methods.mm_prefill import index as sparse_index  # noqa: E402
from paperkit.methods.mm_prefill.attention import rel_l2, sdpa_causal, sparse_prefill, sparse_prefill_torch  # noqa: E402
from paperkit.methods.mm_prefill.search import build_head  # noqa: E402


def timed(fn, device, repeats):
    times, out = [], None
    for _ in range(repeats):
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = fn()
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return out, statistics.median(times)


def vs_index(q, k, density, block=64):
    sizes = build_head("vs", q[0].float(), k[0].float(), density=density, block_size=block).params

    def build():
        return sparse_index.stack_heads([build_head("vs", q[h], k[h], params=sizes, block_size=block)
                              for h in range(q.shape[0])], block)

    return build


def cpu(args):
    torch.set_num_threads(resolve_jobs(args.jobs))
    dev = torch.device("cpu")
    print(f"CPU, {torch.get_num_threads()} thread(s), fp32, heads {args.heads}, dim {args.dim}")
    print(f"{'N':>6} {'density':>8} {'dense ms':>10} {'sparse ms':>10} {'index ms':>9} {'speedup':>8} "
          f"{'index/sparse':>12}")
    points = [(16384, [0.05])] if args.quick else [(n, [0.02, 0.05, 0.1, 0.2]) for n in (4096, 8192, 16384, 32768)]
    for n, densities in points:
        g = torch.Generator().manual_seed(n)
        q, k, v = (torch.randn(args.heads, n, args.dim, generator=g) for _ in range(3))
        sdpa_causal(q[:, :1024], k[:, :1024], v[:, :1024])
        _, dense_ms = timed(partial(sdpa_causal, q, k, v), dev, args.repeats)
        for d in densities:
            build = vs_index(q, k, d)
            idx, index_ms = timed(build, dev, args.repeats)
            _, sparse_ms = timed(partial(sparse_prefill_torch, q, k, v, idx), dev, args.repeats)
            dens = sum(sparse_index.density(idx)) / args.heads
            print(f"{n:>6} {dens:>8.4f} {dense_ms:>10.1f} {sparse_ms:>10.1f} {index_ms:>9.1f} "
                  f"{dense_ms / sparse_ms:>7.2f}x {index_ms / sparse_ms:>12.1%}", flush=True)


def flash_attention(sdpa_kernel, backend, q, k, v):
    with sdpa_kernel([backend]):
        return sdpa_causal(q, k, v)


def gpu(args):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    if not torch.cuda.is_available():
        sys.exit("benchmarks/mm_prefill.py: error: --device cuda asked for, but no CUDA device is available")
    dev = torch.device("cuda")
    print(f"{torch.cuda.get_device_name()}, bf16, heads {args.heads}, dim {args.dim}, density {args.density}")
    print(f"{'N':>7} {'density':>8} {'flash ms':>9} {'triton ms':>10} {'index ms':>9} {'speedup':>8} "
          f"{'index/sparse':>12} {'rel err vs torch sparse':>24}")
    for n in args.n:
        g = torch.Generator(device=dev).manual_seed(n)
        q, k, v = (torch.randn(args.heads, n, args.dim, generator=g, device=dev, dtype=torch.bfloat16)
                   for _ in range(3))
        build = vs_index(q, k, args.density)
        build()
        idx, index_ms = timed(build, dev, args.repeats)

        flash = partial(flash_attention, sdpa_kernel, SDPBackend.FLASH_ATTENTION, q, k, v)
        flash()
        _, flash_ms = timed(flash, dev, args.repeats)
        triton = partial(sparse_prefill, q, k, v, idx, backend="triton", validate=False)
        triton()  # compile
        out, triton_ms = timed(triton, dev, args.repeats)
        ref = sparse_prefill_torch(q, k, v, idx)
        err = float(rel_l2(out, ref).max())
        dens = sum(sparse_index.density(idx)) / args.heads
        from paperkit.methods.mm_prefill.kernels import _sparse_prefill_fwd_tuned

        best = _sparse_prefill_fwd_tuned.best_config
        print(f"{n:>7} {dens:>8.4f} {flash_ms:>9.2f} {triton_ms:>10.2f} {index_ms:>9.2f} {flash_ms / triton_ms:>7.2f}x "
              f"{index_ms / triton_ms:>12.1%} {err:>24.2e}   autotuned: {best}", flush=True)
        torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--quick", action="store_true", help="CPU: only the N = 16,384, 5%% headline")
    ap.add_argument("--n", type=lambda s: [int(x) for x in s.split(",")], default=[32768, 131072],
                    help="GPU sequence lengths")
    ap.add_argument("--heads", type=int, default=None)
    ap.add_argument("--dim", type=int, default=None)
    ap.add_argument("--density", type=float, default=0.05)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("-j", "--jobs", type=int, default=1,
                    help="CPU threads for torch, 0 = one per core (1: on a shared, oversubscribed machine more "
                         "threads only add waiting)")
    args = ap.parse_args()
    args.heads = args.heads or 8
    args.dim = args.dim or (128 if args.device == "cuda" else 64)
    (gpu if args.device == "cuda" else cpu)(args)


if __name__ == "__main__":
    main()
