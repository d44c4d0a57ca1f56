"""Memory estimates for the mm-prefill commands, from the shapes alone, before anything is allocated.

Each estimate adds the tensors a run holds at once: the inputs q, k, v (all layers), the outputs kept, and
the largest per-layer working set: the sparse index (per-head tile masks and padded tile/column lists),
the torch operator's per-head gather of key positions, and the dense reference's score chunks. They are
upper-bound-ish figures for refusing absurd requests with a clear message (``--max-memory-gb``), not a
prediction to the byte; the commands compare them with the limit through
:func:`paperkit.core.resources.check_memory`. Sizes are Python numbers (numpy integers would overflow silently).
"""

from __future__ import annotations

import math

FP32 = 4


def _blocks(n: int, block_size: int) -> int:
    return -(-int(n) // int(block_size))


def layer_working_set(heads: int, n: int, dim: int, *, block_size: int, density: float) -> float:
    """One layer: index building and packing, the torch operator's gathers, the dense reference's chunks."""
    heads, n, dim = int(heads), int(n), int(dim)
    nb = _blocks(n, block_size)
    density = min(1.0, max(0.0, float(density)))
    max_b = min(nb, math.ceil(2 * density * nb) + 4)  # tiles per query block: the densest rows read ~2ρ of them
    max_c = min(n, math.ceil(density * n) + 64)  # gathered columns per query block
    width = min(n, max_b * block_size) + max_c
    # per head during building: pooled scores (fp32), three bool tile masks, top-k order (int64)
    building = nb * nb * (FP32 + 3) + nb * max_b * 8 + 64 * n * 3 * FP32
    # kept for the layer: every head's tile mask, then the packed tile/column lists (int32)
    index = heads * nb * nb + heads * nb * (max_b + max_c) * 4 * 2
    # torch operator and density(): per head [n_blocks, width] key positions, validity, sort orders, gathers
    gather = nb * width * (8 * 4 + 2) + 3 * n * dim * FP32
    # the chunk of work_elems scores and its gathered keys/values
    chunk = (1 << 18) * FP32 * 4 + 2 * (1 << 18) // block_size * dim * FP32 * 2
    # dense reference: ~2^25 fp32 scores per chunk (at least 16 rows of every head), about three live copies
    dense = max(1 << 25, 16 * heads * n) * FP32 * 3 + heads * n * dim * FP32 * 2
    return building + index + gather + chunk + dense + 2 * heads * n * FP32


def apply_bytes(layers: int, heads: int, n: int, dim: int, *, itemsize: int, block_size: int, density: float,
                save_out: bool = False) -> float:
    """``mm-prefill``: inputs and outputs of every layer plus one layer's working set."""
    layers, heads, n, dim = int(layers), int(heads), int(n), int(dim)
    tensors = layers * heads * n * dim
    inputs = 3 * tensors * itemsize
    outputs = tensors * itemsize + (2 * tensors * FP32 if save_out else 0)
    return inputs + outputs + layer_working_set(heads, n, dim, block_size=block_size, density=density)


def search_bytes(layers: int, heads: int, n: int, dim: int, *, itemsize: int, block_size: int, density: float,
                 sample_blocks: int | None) -> float:
    """``mm-prefill-search``: inputs (and their fp32 copies) plus one head's candidates and dense sample."""
    layers, heads, n, dim = int(layers), int(heads), int(n), int(dim)
    tensors = layers * heads * n * dim
    inputs = 3 * tensors * itemsize + (3 * tensors * FP32 if itemsize != FP32 else 0)
    rows = n if not sample_blocks else min(n, int(sample_blocks) * block_size)
    dense = max(1 << 25, 16 * n) * FP32 * 3 + rows * dim * FP32
    per_head = layer_working_set(1, n, dim, block_size=block_size, density=density) * 2  # the candidates' indices
    return inputs + dense + per_head


def bench_bytes(n: int, heads: int, dim: int, *, itemsize: int, block_size: int, density: float) -> float:
    """``mm-prefill-bench`` at one N: random q, k, v, the sparse and SDPA outputs, one layer's working set."""
    heads, n, dim = int(heads), int(n), int(dim)
    tensors = heads * n * dim
    return 6 * tensors * itemsize + tensors * FP32 + layer_working_set(heads, n, dim, block_size=block_size,
                                                                       density=density)


def synthetic_bytes(layers: int, heads: int, n: int, dim: int) -> float:
    """Generating a synthetic sample: fp32 q, k, v plus one head's float64 codes and noise."""
    layers, heads, n, dim = int(layers), int(heads), int(n), int(dim)
    return 3 * layers * heads * n * dim * FP32 + 6 * n * dim * 8 + 100 * n
