# ruff: noqa: E741  (k and l are the paper's input and output tensor orders)
"""symeq-fit: the diagram (map-label) layer against materialised dense weight matrices, side by side.

For k = l = 2 at n = 40 and k = 3 -> l = 1 at n = 30 (8 channels in and out, batch 64), times one layer
application three ways on the same weights: einsum diagram maps (no matrix), the int32 orbit gather
(packed C(n+l-1,l) x C(n+k-1,k) matrix per channel pair) and a dense n^l x n^k matrix per channel pair
(built once, not timed in the apply). Checks that all three agree, and prints times, ratios and working-set
bytes beyond the input and output (the tensors each method holds during the apply, from their shapes). Also times basis
enumeration and the exact change of basis for (4, 4). ``--quick`` uses n = 20 and n = 16 (~10-20 s).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import torch

from paperkit.methods.symeq import diagram, orbit
from paperkit.methods.symeq.layers import SymEquivariantLinear
from paperkit.methods.symeq.symtensor import multiplicities, packed_size, symmetrize, unpack_index


def best_time(fn, reps: int) -> float:
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def dense_matrix(layer: SymEquivariantLinear, n: int) -> torch.Tensor:
    """[C_out, C_in, n^l, n^k]: W_full[i, j] = W_packed[β(i), α(j)] / #arrangements of α(j)."""
    k, l = layer.k, layer.l
    packed = layer.packed_matrix(n).detach()
    counts = np.array([np.prod([math.factorial(int(c)) for c in m]) for m in multiplicities(n, k)], float)
    arrangements = math.factorial(k) / counts
    a = torch.as_tensor(unpack_index(n, k))
    b = torch.as_tensor(unpack_index(n, l)) if l else torch.zeros(1, dtype=torch.long)
    return packed[:, :, b][:, :, :, a] / torch.as_tensor(arrangements[a.numpy()], dtype=packed.dtype)


def bench(k: int, l: int, n: int, channels: int, batch: int, reps: int) -> dict:
    torch.manual_seed(0)
    layer = SymEquivariantLinear(k, l, channels, channels, "diagram", bias=False, execution="einsum")
    x = symmetrize(torch.randn(batch, channels, *(n,) * k), k)
    with torch.no_grad():
        y_einsum = layer(x)
        t_einsum = best_time(lambda: layer(x), reps)
        layer.execution = "gather"
        y_gather = layer(x)
        t_gather = best_time(lambda: layer(x), reps)
        t0 = time.perf_counter()
        W = dense_matrix(layer, n)
        t_build = time.perf_counter() - t0
        xf = x.reshape(batch, channels, -1)
        y_dense = torch.einsum("bcj,ocij->boi", xf, W).reshape(y_einsum.shape)
        t_dense = best_time(lambda: torch.einsum("bcj,ocij->boi", xf, W), reps)
    scale = float(y_einsum.abs().max())
    assert torch.allclose(y_einsum, y_gather, atol=1e-4 * scale) and torch.allclose(y_einsum, y_dense, atol=1e-4 * scale)
    f = 4  # float32 bytes
    io_bytes = 0  # x and y are the same for every method: count what each holds beyond them
    # one map's output, its channel mix and the running sum, all on the smaller side (layers.py mixes there)
    mem_einsum = io_bytes + 3 * batch * channels * n ** min(k, l) * f if k > l else \
        io_bytes + 3 * batch * channels * n ** max(k, l) * f
    p_in, p_out = packed_size(n, k), packed_size(n, l)
    mem_gather = io_bytes + channels ** 2 * p_in * p_out * (f + 8) + p_in * p_out * 4 + batch * channels * (p_in + p_out) * f
    mem_dense = io_bytes + W.numel() * f
    return {"case": f"k={k}->l={l}, n={n}", "einsum_s": t_einsum, "gather_s": t_gather, "dense_s": t_dense,
            "dense_build_s": t_build, "mem_einsum": mem_einsum, "mem_gather": mem_gather, "mem_dense": mem_dense}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="smaller n, fewer repetitions")
    args = ap.parse_args()
    torch.set_num_threads(1)
    cases = [(2, 2, 20), (3, 1, 16)] if args.quick else [(2, 2, 40), (3, 1, 30)]
    reps = 2 if args.quick else 5
    print("| case | diagram einsum (ms) | orbit gather (ms) | dense (ms) | dense/einsum | dense/gather "
          "| einsum extra bytes | gather extra bytes | dense extra bytes | dense/einsum bytes |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for k, l, n in cases:
        r = bench(k, l, n, channels=8, batch=64, reps=reps)
        print(f"| {r['case']} | {1e3 * r['einsum_s']:.1f} | {1e3 * r['gather_s']:.1f} | {1e3 * r['dense_s']:.1f} "
              f"| {r['dense_s'] / r['einsum_s']:.1f}x | {r['dense_s'] / r['gather_s']:.1f}x | {r['mem_einsum']:,} "
              f"| {r['mem_gather']:,} | {r['mem_dense']:,} | {r['mem_dense'] / r['mem_einsum']:.0f}x |")
    t = time.perf_counter()
    size = len(orbit.orbit_labels(4, 4))
    t_enum = time.perf_counter() - t
    t = time.perf_counter()
    diagram.change_of_basis.cache_clear()
    diagram.change_of_basis(4, 4)
    t_cob = time.perf_counter() - t
    print(f"\nbasis enumeration (4,4): {size} labels in {1e3 * t_enum:.1f} ms; exact change of basis (4,4): {t_cob:.2f} s")


if __name__ == "__main__":
    main()
