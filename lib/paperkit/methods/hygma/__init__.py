"""hygma-train: dynamic spectral grouping for cooperative MARL (Liu & Li, ICML 2025).

Only the grouping layer is built so far: ``grouping`` clusters per-agent feature histories
(kNN spectral clustering, k by silhouette) and applies the paper's stability rule.
"""

from paperkit.methods.hygma.grouping import Grouping, choose_groups, cluster_agents, incidence_matrix

__all__ = ["Grouping", "choose_groups", "cluster_agents", "incidence_matrix"]
