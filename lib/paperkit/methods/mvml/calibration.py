"""Platt scaling of per-label scores into probabilities (Platt 1999; the Newton method with a backtracking
line search of Lin, Lin and Weng 2007).

TMvML's scores are a least-squares fit to 0/1 labels: ordered like probabilities but not calibrated.
``mvml-fit --calibrate`` holds out part of the *training* data, fits the model on the rest, and fits one
sigmoid P(y = 1 | F) = 1 / (1 + exp(-(a·F + b))) per label on the held-out scores, with Platt's smoothed
targets (N₊ + 1)/(N₊ + 2) and 1/(N₋ + 2), so a label that is all 0 or all 1 on the held-out part still
gets finite parameters. The saved model (fitted on all training data) applies these sigmoids.
"""

from __future__ import annotations

import numpy as np

from paperkit.core.errors import InputError


def _loss(a: float, b: float, f: np.ndarray, t: np.ndarray) -> float:
    z = a * f + b
    # -[t log σ(z) + (1 - t) log(1 - σ(z))] = log(1 + e^z) - t z, computed without overflow
    return float(np.sum(np.logaddexp(0.0, z) - t * z))


def fit_platt_label(f: np.ndarray, y: np.ndarray, *, max_iter: int = 100, tol: float = 1e-10) -> tuple[float, float]:
    """(a, b) of the sigmoid σ(a·f + b) fitted to 0/1 ``y`` by regularised maximum likelihood."""
    f = np.asarray(f, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n1 = float(y.sum())
    n0 = float(y.size - n1)
    t = np.where(y > 0.5, (n1 + 1.0) / (n1 + 2.0), 1.0 / (n0 + 2.0))
    a, b = 0.0, float(np.log((n1 + 1.0) / (n0 + 1.0)))
    loss = _loss(a, b, f, t)
    for _ in range(max_iter):
        p = 0.5 * (1.0 + np.tanh(0.5 * (a * f + b)))  # σ(z) without overflow
        d = p - t
        g = np.array([np.dot(d, f), d.sum()])
        if np.max(np.abs(g)) < tol:
            break
        w = p * (1.0 - p)
        h = np.array([[np.dot(w, f * f) + 1e-12, np.dot(w, f)], [np.dot(w, f), w.sum() + 1e-12]])
        try:
            step = np.linalg.solve(h, g)
        except np.linalg.LinAlgError:
            step = g
        s = 1.0
        while s > 1e-10:
            na, nb = a - s * step[0], b - s * step[1]
            new = _loss(na, nb, f, t)
            if new < loss + 1e-4 * s * float(np.dot(g, -step)):
                break
            s /= 2.0
        else:
            break
        if abs(loss - new) < tol * max(1.0, abs(loss)):
            a, b, loss = na, nb, new
            break
        a, b, loss = na, nb, new
    return float(a), float(b)


def fit_platt(F: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-label (a, b) for scores ``F`` and 0/1 labels ``Y`` (n × q)."""
    F = np.asarray(F, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    if F.shape != Y.shape or F.ndim != 2 or F.shape[0] == 0:
        raise InputError(f"calibration scores have shape {F.shape} and labels {Y.shape}; expected the same n × q")
    ab = [fit_platt_label(F[:, j], Y[:, j]) for j in range(F.shape[1])]
    return np.array([x[0] for x in ab]), np.array([x[1] for x in ab])


def apply_platt(F: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Probabilities σ(a·F + b), label by label."""
    z = np.asarray(F, dtype=np.float64) * np.asarray(a)[None, :] + np.asarray(b)[None, :]
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def log_loss(Y: np.ndarray, P: np.ndarray, eps: float = 1e-12) -> float:
    """Mean binary cross-entropy over every (sample, label) entry; P is clipped to [eps, 1 - eps]."""
    P = np.clip(np.asarray(P, dtype=np.float64), eps, 1.0 - eps)
    Y = np.asarray(Y, dtype=np.float64)
    return float(-np.mean(Y * np.log(P) + (1.0 - Y) * np.log(1.0 - P)))


def brier(Y: np.ndarray, P: np.ndarray) -> float:
    """Mean squared error of the probabilities over every (sample, label) entry."""
    return float(np.mean((np.asarray(P, dtype=np.float64) - np.asarray(Y, dtype=np.float64)) ** 2))
