"""Criteria: how a claim's measured numbers become a verdict. Numbers in, verdict out; nothing by hand.

Every criterion's ``verdict(measurements)`` takes one ``{metric: value}`` dict per seed and returns a
:class:`Verdict` (``holds`` / ``partly`` / ``does not hold``) with a one-line reason.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

HOLDS = "holds"
PARTLY = "partly"
FAILS = "does not hold"
NOT_RUN = "not run"
ERROR = "error"

Measurements = Sequence[dict[str, float]]


@dataclass(frozen=True)
class Verdict:
    verdict: str
    reason: str


def _values(ms: Measurements, key: str) -> list[float]:
    missing = [i for i, m in enumerate(ms) if key not in m]
    if missing:
        raise KeyError(f"metric '{key}' missing for seed index {missing[0]}")
    return [float(m[key]) for m in ms]


def mean_se(values: Sequence[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, float("nan")
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(var / n)


def _by_seed(ok: list[bool], what: str) -> Verdict:
    k, n = sum(ok), len(ok)
    if k == n:
        return Verdict(HOLDS, f"{what} on {k}/{n} seeds")
    if k == 0:
        return Verdict(FAILS, f"{what} on 0/{n} seeds")
    return Verdict(PARTLY, f"{what} on {k}/{n} seeds")


@dataclass(frozen=True)
class Order:
    """``better`` beats ``worse`` on each seed (lower is better unless ``higher_is_better``).
    All seeds: holds; some: partly; none: does not hold."""

    better: str
    worse: str
    higher_is_better: bool = False

    def verdict(self, ms: Measurements) -> Verdict:
        a, b = _values(ms, self.better), _values(ms, self.worse)
        ok = [(x > y) if self.higher_is_better else (x < y) for x, y in zip(a, b, strict=True)]
        return _by_seed(ok, f"{self.better} {'>' if self.higher_is_better else '<'} {self.worse}")

    @property
    def shown(self) -> str:
        return self.better


@dataclass(frozen=True)
class Increasing:
    """The metrics, in the given order, increase (``strict``) on each seed; decreasing with ``decreasing``."""

    metrics: tuple[str, ...]
    decreasing: bool = False

    def verdict(self, ms: Measurements) -> Verdict:
        cols = [_values(ms, k) for k in self.metrics]
        ok = []
        for i in range(len(ms)):
            seq = [c[i] for c in cols]
            pairs = list(zip(seq[:-1], seq[1:], strict=True))
            ok.append(all((b < a) if self.decreasing else (b > a) for a, b in pairs))
        return _by_seed(ok, ("decreasing" if self.decreasing else "increasing") + " over " + ",".join(self.metrics))

    @property
    def shown(self) -> str:
        return self.metrics[-1]


@dataclass(frozen=True)
class Interval:
    """The mean of ``metric`` over seeds lies in [lo, hi]: holds; outside but some seeds inside: partly."""

    metric: str
    lo: float = -math.inf
    hi: float = math.inf

    def verdict(self, ms: Measurements) -> Verdict:
        v = _values(ms, self.metric)
        mean, _ = mean_se(v)
        inside = [self.lo <= x <= self.hi for x in v]
        span = f"{self.metric} in [{self.lo:g}, {self.hi:g}]"
        if self.lo <= mean <= self.hi:
            return Verdict(HOLDS, f"mean {mean:.4g}: {span}")
        if any(inside):
            return Verdict(PARTLY, f"mean {mean:.4g} outside, {sum(inside)}/{len(v)} seeds inside: {span}")
        return Verdict(FAILS, f"mean {mean:.4g} and every seed outside: {span}")

    @property
    def shown(self) -> str:
        return self.metric


@dataclass(frozen=True)
class _Ratio:
    num: str
    den: str
    bound: float

    at_most: ClassVar[bool] = True  # RatioAtMost: r <= bound; RatioAtLeast: r >= bound

    def _check(self, r: float) -> bool:
        return r <= self.bound if self.at_most else r >= self.bound

    def verdict(self, ms: Measurements) -> Verdict:
        dens = _values(ms, self.den)
        if any(d <= 0 for d in dens):
            # A ratio compares sizes only when the baseline is positive: -1.6 / -0.7 = 2.3 "beats" -0.7.
            return Verdict(FAILS, f"{self.den} <= 0 on some seed ({min(dens):.3g}): {self.num}/{self.den} "
                                  "is not a comparison there")
        per_seed = [n / d for n, d in zip(_values(ms, self.num), dens, strict=True)]
        mean_num, mean_den = mean_se(_values(ms, self.num))[0], mean_se(dens)[0]
        r = mean_num / mean_den
        op = "<=" if self.at_most else ">="
        what = f"{self.num}/{self.den} = {r:.3g} {op} {self.bound:g}"
        if self._check(r):
            return Verdict(HOLDS, what)
        if any(self._check(x) for x in per_seed):
            return Verdict(PARTLY, what + " fails on the mean, holds on some seeds")
        return Verdict(FAILS, what + " fails")

    @property
    def shown(self) -> str:
        return self.num


@dataclass(frozen=True)
class RatioAtMost(_Ratio):
    """mean(num)/mean(den) <= bound."""


@dataclass(frozen=True)
class RatioAtLeast(_Ratio):
    """mean(num)/mean(den) >= bound (a speed-up, a gain)."""

    at_most: ClassVar[bool] = False


@dataclass(frozen=True)
class SeedTest:
    """One-sided paired t-test over seeds that ``better`` beats ``worse`` at ``confidence``.
    Significant: holds; right direction on the mean but not significant: partly; else does not hold."""

    better: str
    worse: str
    higher_is_better: bool = False
    confidence: float = 0.9

    def verdict(self, ms: Measurements) -> Verdict:
        a, b = _values(ms, self.better), _values(ms, self.worse)
        d = [(x - y) if self.higher_is_better else (y - x) for x, y in zip(a, b, strict=True)]
        mean, se = mean_se(d)
        if len(d) < 2 or not se > 0:
            p = 0.0 if mean > 0 and len(d) >= 2 else 1.0
        else:
            from scipy import stats

            p = float(stats.t.sf(mean / se, df=len(d) - 1))
        what = f"{self.better} vs {self.worse}: paired gain {mean:.4g}, one-sided p={p:.3g}"
        if p <= 1 - self.confidence:
            return Verdict(HOLDS, f"{what} (significant at {self.confidence:.0%})")
        if mean > 0:
            return Verdict(PARTLY, f"{what} (right direction, not significant at {self.confidence:.0%})")
        return Verdict(FAILS, what)

    @property
    def shown(self) -> str:
        return self.better


_RANK = {FAILS: 0, PARTLY: 1, HOLDS: 2}


@dataclass(frozen=True)
class AllOf:
    """Every part must hold: the verdict is the weakest part's, the reason lists each part's. For a comparison
    that only means something under a condition (two policies compared only once they beat chance)."""

    parts: tuple

    def verdict(self, ms: Measurements) -> Verdict:
        verdicts = [p.verdict(ms) for p in self.parts]
        worst = min(verdicts, key=lambda v: _RANK[v.verdict])
        return Verdict(worst.verdict, "; ".join(f"{v.reason} ({v.verdict})" for v in verdicts))

    @property
    def shown(self) -> str:
        return self.parts[0].shown
