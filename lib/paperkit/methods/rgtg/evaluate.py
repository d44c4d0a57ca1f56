"""Evaluation of generations: scores (true toy reward or a scorer RM), diversity as mean pairwise ROUGE-L
between samples of the same prompt (lower = more diverse, as in the paper), and the DP optimum."""

from __future__ import annotations

import itertools

import numpy as np


def lcs(a, b) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def rouge_l(a, b) -> float:
    """ROUGE-L F1 between two token sequences."""
    if not a or not b:
        return 0.0
    m = lcs(a, b)
    if m == 0:
        return 0.0
    p, r = m / len(b), m / len(a)
    return 2 * p * r / (p + r)


def diversity(samples_per_prompt) -> float | None:
    """Mean pairwise ROUGE-L over the samples of each prompt (None with one sample per prompt)."""
    vals = [rouge_l(a, b) for group in samples_per_prompt for a, b in itertools.combinations(group, 2)]
    return float(np.mean(vals)) if vals else None


def mean_se(values) -> tuple[float, float]:
    v = np.asarray(values, dtype=float)
    return float(v.mean()), float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else 0.0
