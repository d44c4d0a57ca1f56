"""A tiny reproducible random stream for numba kernels: SplitMix64 (Steele, Lea & Flood 2014).

State is one uint64 in a length-1 array, so each independent run in a ``prange`` loop carries its own
stream and results do not depend on thread scheduling. The same functions run as plain Python via
``.py_func``, which is how the plain-Python reference algorithms reproduce a jitted run step for step.

    state = new_state(seed)          # np.uint64 array of length 1
    u = next_uniform(state)          # float in [0, 1)
"""

from __future__ import annotations

import numpy as np
from numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0  # 2**-53


def new_state(seed: int) -> np.ndarray:
    return np.array([np.uint64(int(seed) & 0xFFFFFFFFFFFFFFFF)], dtype=np.uint64)


@njit(cache=True)
def next_u64(state):  # pragma: no cover - exercised through numba and .py_func
    z = state[0] + _GOLDEN
    state[0] = z
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True)
def next_uniform(state):  # pragma: no cover
    return float(next_u64(state) >> _S11) * _INV53


@njit(cache=True)
def next_normal(state):  # pragma: no cover
    # Box-Muller; 1 - u keeps the log argument in (0, 1].
    u1 = 1.0 - next_uniform(state)
    u2 = next_uniform(state)
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


@njit(cache=True)
def next_below(state, n):  # pragma: no cover
    """An integer uniform on [0, n) (n small; the modulo bias is below 2**-40 for n < 2**24).

    Returned as int64: numba would otherwise unify a uint64 with int64 indices as float64.
    """
    return np.int64(next_u64(state) % np.uint64(n))


def python_stream(seed: int):
    """Plain-Python versions bound to one state, for reference implementations (NumPy overflow muted)."""
    state = new_state(seed)

    def call(fn, *args):
        with np.errstate(over="ignore"):
            return fn.py_func(state, *args)

    return state, call
