"""Dynamic spectral grouping (HYGMA step 1) and the hyperedge incidence it induces (step 2).

Per-agent features (one row per agent id) are clustered with scikit-learn's SpectralClustering on a
kNN affinity (normalised Laplacian, k-means on its eigenvectors); k in [k_min, k_max] maximises the
silhouette score. The stability rule keeps the old partition unless more than δ·n agents moved, or the
clustering proposes the same partition twice in a row (see :func:`choose_groups`). Labels are always
indexed by agent id (the official code indexed batch-major rows: fixed here).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations

import numpy as np

from paperkit.core.errors import ConfigError, InputError


@dataclass(frozen=True)
class Grouping:
    """One clustering decision: the labels in force, the proposal (its labels, k and silhouette), moved fraction."""

    labels: np.ndarray
    k: int
    silhouette: float
    moved_fraction: float
    accepted: bool
    proposal: np.ndarray


def _check_range(n_agents: int, k_min: int, k_max: int) -> None:
    if not 2 <= k_min <= k_max:
        raise ConfigError(f"k range must satisfy 2 <= k_min <= k_max, got [{k_min}, {k_max}]")
    if k_max >= n_agents:
        raise ConfigError(f"k_max must be < the number of agents ({n_agents}), got {k_max}")


def cluster_agents(features: np.ndarray, k_min: int, k_max: int, seed: int = 0) -> tuple[np.ndarray, int, float]:
    """Spectral clustering of agents (rows of ``features``) with k chosen by silhouette; returns labels, k, score."""
    from sklearn.cluster import SpectralClustering
    from sklearn.metrics import silhouette_score

    features = np.asarray(features, dtype=np.float64)
    if features.ndim != 2 or not np.isfinite(features).all():
        raise InputError(f"agent features must be a finite (agents, dims) array, got shape {features.shape}")
    n_agents = features.shape[0]
    _check_range(n_agents, k_min, k_max)
    neighbours = max(2, min(n_agents - 1, int(round(np.sqrt(n_agents))) + 1))
    best = None
    for k in range(k_min, k_max + 1):
        model = SpectralClustering(n_clusters=k, affinity="nearest_neighbors", n_neighbors=neighbours,
                                   assign_labels="kmeans", random_state=seed)
        labels = model.fit_predict(features)
        if len(np.unique(labels)) < 2:
            continue
        score = float(silhouette_score(features, labels))
        if best is None or score > best[2]:
            best = (canonical_labels(labels), k, score)
    if best is None:
        return np.zeros(n_agents, dtype=np.int64), 1, float("nan")
    return best


def canonical_labels(labels: np.ndarray) -> np.ndarray:
    """Relabel groups in order of first appearance by agent id, so equal partitions have equal labels."""
    order = {}
    return np.array([order.setdefault(int(g), len(order)) for g in labels], dtype=np.int64)


def moved_fraction(old: np.ndarray, new: np.ndarray) -> float:
    """Fraction of agents that changed group, minimised over matchings of group names (small k: brute force)."""
    old, new = canonical_labels(old), canonical_labels(new)
    names = range(max(old.max(), new.max()) + 1)
    best = min(np.mean(np.array([perm[g] for g in new]) != old) for perm in permutations(names))
    return float(best)


def choose_groups(previous: np.ndarray | None, features: np.ndarray, k_min: int, k_max: int,
                  stability: float, seed: int = 0, last_proposal: np.ndarray | None = None) -> Grouping:
    """Recluster and apply the stability rule: accept if more than ``stability``·n agents moved, or if the
    proposal repeats ``last_proposal`` (the previous clustering's proposal) exactly.

    The repeat clause is ours. The moved fraction is minimised over group names, so with k = 2 it never
    exceeds 1/2: under the paper's rule alone, δ = 0.6 (the official code) freezes the first 2-group
    partition for the whole run, and with 6 agents any δ ≥ 1/3 blocks every correction between two 3+3
    splits. A partition that the clustering returns twice in a row is persistent, not noise, so it is
    adopted; a one-off proposal that moves few agents is still rejected."""
    if not 0.0 <= stability <= 1.0:
        raise ConfigError(f"stability δ must be in [0, 1], got {stability}")
    labels, k, score = cluster_agents(features, k_min, k_max, seed)
    if previous is None:
        return Grouping(labels, k, score, 1.0, True, labels)
    moved = moved_fraction(previous, labels)
    repeated = last_proposal is not None and moved > 0 and moved_fraction(last_proposal, labels) == 0
    if moved > stability or repeated:
        return Grouping(labels, k, score, moved, True, labels)
    return Grouping(canonical_labels(previous), int(np.max(previous)) + 1, score, moved, False, labels)


def incidence_matrix(labels: np.ndarray) -> np.ndarray:
    """Binary hyperedge incidence H (groups × agents): one hyperedge per group."""
    labels = canonical_labels(labels)
    return (labels[None, :] == np.arange(labels.max() + 1)[:, None]).astype(np.float32)


def most_helped(helped: np.ndarray | list) -> tuple[np.ndarray, np.ndarray]:
    """Each agent's most-helped target (argmax over ``helped`` (agents, targets)) and whether it has one: an agent
    that never helped has none, and neither has one whose counts tie between targets (argmax would call it the
    first of them; agents that hunt as one pack tie, since every catch counts for all of them)."""
    helped = np.asarray(helped, dtype=np.float64)
    top = helped.max(1, keepdims=True)
    clear = (top[:, 0] > 0) & ((helped == top).sum(1) == 1)
    return helped.argmax(1), clear


def assignment_ari(labels: np.ndarray | list, helped: np.ndarray | list) -> float | None:
    """ARI between groups and each agent's most-helped target (:func:`most_helped`), over the agents that have
    one; None when there is no assignment to recover: fewer than two such agents, or all of them on one target.
    (Against a one-target truth the ARI is 0 for every split into k ≥ 2 groups, and k_min ≥ 2: a 0 there says
    that the agents did not divide between the targets, not that the grouping missed a division.)"""
    from sklearn.metrics import adjusted_rand_score

    target, clear = most_helped(helped)
    if clear.sum() < 2 or np.unique(target[clear]).size < 2:
        return None
    return float(adjusted_rand_score(target[clear], np.asarray(labels)[clear]))


def specialisation(helped: np.ndarray | list) -> float | None:
    """Mean over the agents that helped of the share of their help that went to their most-helped target: 1 when
    each agent helps one target only, 1/m when every agent helps the m targets equally (None: nobody helped)."""
    helped = np.asarray(helped, dtype=np.float64)
    total = helped.sum(1)
    active = total > 0
    return float((helped[active].max(1) / total[active]).mean()) if active.any() else None
