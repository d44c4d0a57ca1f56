"""One ``--seed`` for everything a run uses.

* ``seed_everything(seed)`` seeds Python's ``random``, NumPy's legacy global state (for libraries that
  still use it) and, when asked, torch; it returns the ``numpy.random.Generator`` to pass down.
* ``spawn_seeds(seed, n)`` derives independent child seeds (per run, per client, per shard) from one
  seed with ``SeedSequence``, so results do not depend on how work is split or ordered.
* Numba kernels get plain integer seeds (numba's RNG is separate from NumPy's); kernels that must be
  reproducible under ``prange`` use the counter-free SplitMix64 stream in
  :mod:`paperkit.core.rng_kernels`, one state per run.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from paperkit.core.errors import UsageError

MAX_SEED = 2**63 - 1


def check_seed(seed: int) -> int:
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or not 0 <= int(seed) <= MAX_SEED:
        raise UsageError(f"seed = {seed!r} is invalid; expected an integer in [0, 2**63 - 1]")
    return int(seed)


def seed_everything(seed: int, *, torch: bool = False) -> np.random.Generator:
    """Seed the global generators and return a fresh ``Generator`` for explicit passing."""
    seed = check_seed(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    if torch:
        seed_torch(seed)
    return np.random.default_rng(seed)


def seed_torch(seed: int) -> None:
    import torch as _torch

    _torch.manual_seed(check_seed(seed))


def torch_generator(seed: int, device: Any = "cpu") -> Any:
    import torch as _torch

    g = _torch.Generator(device=device)
    g.manual_seed(check_seed(seed))
    return g


def spawn_seeds(seed: int, n: int) -> np.ndarray:
    """``n`` independent 63-bit child seeds of ``seed`` (int64 array, stable across NumPy versions)."""
    out = np.empty(int(n), dtype=np.int64)
    for i, child in enumerate(np.random.SeedSequence(check_seed(seed)).spawn(int(n))):
        lo, hi = (int(x) for x in child.generate_state(2, np.uint32))
        out[i] = ((hi << 32) | lo) & MAX_SEED
    return out


def numba_seed(rng: np.random.Generator) -> int:
    """A seed for a numba kernel, drawn from the run's generator."""
    return int(rng.integers(0, MAX_SEED, dtype=np.int64))
