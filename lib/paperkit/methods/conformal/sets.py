"""Prediction sets that are unions of closed intervals, stored compactly (CSR: offsets + flat bounds).

Cross-conformal sets are not always intervals; the paper reports the total length of the union and
coverage as membership in the union. ``lower = -inf`` / ``upper = +inf`` mark unbounded sets; an empty set
has no intervals and length 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PredictionSets:
    """Sets for T test points: test point t owns intervals ``offsets[t]:offsets[t + 1]``."""

    offsets: np.ndarray  # (T + 1,) int64
    lower: np.ndarray  # (total,) float64
    upper: np.ndarray  # (total,) float64

    @classmethod
    def from_intervals(cls, lower: np.ndarray, upper: np.ndarray) -> PredictionSets:
        """One interval per test point (baselines such as CV+ and split conformal)."""
        lower = np.asarray(lower, dtype=np.float64).ravel()
        upper = np.asarray(upper, dtype=np.float64).ravel()
        return cls(np.arange(len(lower) + 1, dtype=np.int64), lower, upper)

    @classmethod
    def from_lists(cls, sets: Sequence[Sequence[tuple[float, float]]]) -> PredictionSets:
        counts = [len(s) for s in sets]
        offsets = np.zeros(len(sets) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum(counts)
        flat = [iv for s in sets for iv in s]
        lo = np.array([a for a, _ in flat], dtype=np.float64)
        hi = np.array([b for _, b in flat], dtype=np.float64)
        return cls(offsets, lo, hi)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def n_segments(self) -> np.ndarray:
        return np.diff(self.offsets)

    def segments(self, t: int) -> list[tuple[float, float]]:
        a, b = self.offsets[t], self.offsets[t + 1]
        return [(float(x), float(y)) for x, y in zip(self.lower[a:b], self.upper[a:b], strict=True)]

    def to_lists(self) -> list[list[tuple[float, float]]]:
        return [self.segments(t) for t in range(len(self))]

    @property
    def length(self) -> np.ndarray:
        """Total length of each union (inf when unbounded, 0 when empty)."""
        widths = self.upper - self.lower
        out = np.zeros(len(self))
        idx = np.repeat(np.arange(len(self)), self.n_segments)
        np.add.at(out, idx, widths)
        return out

    def hull(self) -> tuple[np.ndarray, np.ndarray]:
        """The smallest interval holding each set: (lower, upper); NaN for an empty set."""
        T = len(self)
        lo = np.full(T, np.nan)
        hi = np.full(T, np.nan)
        nonempty = self.n_segments > 0
        lo[nonempty] = self.lower[self.offsets[:-1][nonempty]]
        hi[nonempty] = self.upper[self.offsets[1:][nonempty] - 1]
        return lo, hi

    def contains(self, y: np.ndarray) -> np.ndarray:
        """Whether each y[t] lies in set t (closed intervals)."""
        y = np.asarray(y, dtype=np.float64).ravel()
        if len(y) != len(self):
            raise ValueError(f"{len(y)} values for {len(self)} sets")
        idx = np.repeat(np.arange(len(self)), self.n_segments)
        hit = (self.lower <= y[idx]) & (y[idx] <= self.upper)
        out = np.zeros(len(self), dtype=bool)
        np.logical_or.at(out, idx, hit)
        return out

    def subset_of(self, other: PredictionSets, tol: float = 0.0) -> np.ndarray:
        """Per test point: is every interval of this set inside some interval of ``other`` (± tol)?"""
        out = np.ones(len(self), dtype=bool)
        for t in range(len(self)):
            theirs = other.segments(t)
            for a, b in self.segments(t):
                if not any(c - tol <= a and b <= d + tol for c, d in theirs):
                    out[t] = False
                    break
        return out

    def take(self, index: np.ndarray) -> PredictionSets:
        return PredictionSets.from_lists([self.segments(int(t)) for t in np.asarray(index).ravel()])
